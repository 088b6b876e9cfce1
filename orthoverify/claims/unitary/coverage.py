"""A rank below n^2 = dim U(n) at generic points means an image of measure zero (Sard), so the
Jacobian's rank into U(n) is the evidence: by autograd for n = 1..N, confirmed at 50 digits for
n > 7, autograd cross-checked against the analytic derivative (and that against 50-digit central
differences). Rank scans are bespoke (``_rank.rank_checks``): an undecided rank fails without a
counterexample."""

from __future__ import annotations

from orthoverify.backends import Backend, get_backend
from orthoverify.claims.unitary import _rank
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.ratios import Measure, agreement, scaled
from orthoverify.engine.reference import fd_eps
from orthoverify.param import unitary_rank as ur


def q_jacobian_agreement(b: Backend, case: Case) -> Measure:
    """torch: autograd vs the analytic Jacobian, ``||J_ad - J_an||_F / (n eps ||J_an||_F)``;
    other arithmetic: the analytic Jacobian vs central differences, error over ``n fd_eps``."""
    p = _rank.point_params(b, case)
    n = p.n
    if b.family == "torch":  # the analytic form in NumPy float64 (the same arithmetic, less overhead)
        ref = ur.jacobian_analytic(_rank.point_params(get_backend(_rank.F64), case))
        return agreement(b, ur.jacobian_autograd(p), b.asarray(ref), n)
    ja = ur.jacobian_analytic(p)
    err = b.to_float(b.norm(ur.jacobian_central(p) - ja)) / b.to_float(b.norm(ja))
    return scaled(err, n, fd_eps(b))


cases_agreement = _rank.point_cases("agree", lambda e: e.agreement_max_n, lambda e: e.central_difference_sizes)


CLAIMS = kit.claim(
    id="unitary.coverage",
    place=kit.ORNN(section="2", also=(kit.WISDOM,)),
    expected="verified",
    origin="catalogue",
    summary="the uRNN's W does not span the full unitary group",
    kind="coverage",
    statement=(
        "the uRNN parametrisation W = D3 R2 F^-1 D2 Pi R1 F D1 (7n real parameters) does not allow the "
        "transition matrix to span the full unitary group U(n) when n > 7"
    ),
    checks=(
        *_rank.rank_checks(
            _rank.coverage_rule,
            "rank n^2 for n > 7: an open set of U(n) is reached",
            float_backend=_rank.T64,
            hp_sizes=lambda e: e.coverage_hp_sizes,
            quantities=(
                "rank of dW (tangent coordinates of W* dW) by autograd, n = 1..N",
                "50-digit rank of the analytic Jacobian, n > 7",
            ),
        ),
        PropertyCheck(
            "float",
            q_jacobian_agreement,
            cases_agreement,
            (_rank.T64, _rank.HP),
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
    figures=(_rank.RANK_FIGURE,),
)
