"""unitary.coverage: the uRNN composition W = D3 R2 F^-1 D2 Pi R1 F D1 does not span U(n) when
n > 7.

Mhammedi et al. (ICML 2017) Sec. 2, after Wisdom et al. (Full-Capacity Unitary Recurrent Neural
Networks, NeurIPS 2016). Evidence: the rank of the map's Jacobian into U(n) by torch autograd for
n = 1..N, confirmed in 50-digit arithmetic for n > 7, with autograd cross-checked against the
factors' analytic derivatives (and those against 50-digit central differences). Rank below
n^2 = dim U(n) everywhere means an image of measure zero (Sard). The measured generic rank is
min(n^2, 7n - 7): the claim holds, and its threshold is not the exact one
(unitary.coverage_threshold). The rank checks are bespoke procedures (``_rank.rank_checks``: a
rank decision can be undecided, which fails without a counterexample).
"""

from __future__ import annotations

from orthoverify.backends import Backend, get_backend
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._rank import (
    F64,
    HP,
    RANK_FIGURE,
    T64,
    coverage_rule,
    point_cases,
    point_params,
    rank_checks,
)
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, agreement, scaled
from orthoverify.engine.reference import fd_eps
from orthoverify.param import unitary_rank as ur


def q_jacobian_agreement(b: Backend, case: Case) -> Measure:
    """torch: autograd vs the analytic Jacobian, ``||J_ad - J_an||_F / (n eps ||J_an||_F)``;
    other arithmetic: the analytic Jacobian vs central differences, error over ``n fd_eps``."""
    p = point_params(b, case)
    n = p.n
    if b.family == "torch":  # the analytic form in NumPy float64 (the same arithmetic, less overhead)
        ref = ur.jacobian_analytic(point_params(get_backend(F64), case))
        return agreement(b, ur.jacobian_autograd(p), b.asarray(ref), n)
    ja = ur.jacobian_analytic(p)
    err = b.to_float(b.norm(ur.jacobian_central(p) - ja)) / b.to_float(b.norm(ja))
    return scaled(err, n, fd_eps(b))


cases_agreement = point_cases("agree", lambda plan: plan.agree_max, lambda plan: plan.cd_sizes)


COVERAGE = Claim(
    id="unitary.coverage",
    paper=PAPER,
    place=Place(source="Mhammedi et al.", section="2", also=(Place(source="Wisdom et al.", note="NeurIPS 2016"),)),
    expected="verified",
    origin="catalogue",
    summary="the uRNN's W does not span the full unitary group",
    kind="coverage",
    statement=(
        "the uRNN parametrisation W = D3 R2 F^-1 D2 Pi R1 F D1 (7n real parameters) does not allow the "
        "transition matrix to span the full unitary group U(n) when n > 7"
    ),
    checks=(
        *rank_checks(
            coverage_rule,
            "rank n^2 for n > 7: an open set of U(n) is reached",
            float_backend=T64,
            hp_sizes=lambda plan: plan.coverage_hp,
            quantities=(
                "rank of dW (tangent coordinates of W* dW) by autograd, n = 1..N",
                "50-digit rank of the analytic Jacobian, n > 7",
            ),
        ),
        PropertyCheck(
            "float",
            q_jacobian_agreement,
            cases_agreement,
            (T64, HP),
            "||J_autograd - J_analytic|| / (n eps ||J||); 50 digits: analytic vs central differences / (n fd_eps)",
        ),
    ),
    notes=(
        "Jacobian of p -> W(p) in tangent coordinates of U(n) (n^2 of them) at random points drawn as Sec. 3.4 "
        "initialises the uRNN, random Pi. Rank n^2 at a point <=> the image contains an open set; rank < n^2 at "
        "generic points means rank < n^2 everywhere (the rank of an analytic map is maximal on an open dense set), "
        "so the image has measure zero (Sard) and is not U(n). For n > 7 this already follows from 7n < n^2; the "
        "checks measure the rank for every n and see it is min(n^2, 7n - 7): deficient from n = 6 on (see "
        "unitary.coverage_threshold)."
    ),
    figures=(RANK_FIGURE,),
)

CLAIMS: list[Claim] = [COVERAGE]
