"""Exact characteristic polynomials of W D for every D (small n) decide the reflection statement,
which no float eigenvalue test could; float64 eigenvalues cover random angles."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.claims._common import EXACT, exact_backend
from orthoverify.claims.cayley import twins
from orthoverify.claims.cayley._shared import effort, random_signs
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Agreement, listed, sampled
from orthoverify.engine.templates_more import sizes_between
from orthoverify.param import cayley as cy
from orthoverify.param import cayley_analysis as ca


def _init_w(b: Backend, s_values: Any, n: int) -> Array:
    return cy.cayley(cy.init_blocks(list(s_values), n, backend=b), backend=b)


def block_invariant(b: Backend, case: Case) -> Any:
    """trace/2 or det of the Cayley transform of one block with s = sqrt((1 - c)/(1 + c))."""
    c = case["c"]
    w = _init_w(b, [sympy.sqrt((1 - c) / (1 + c))], 2)
    return sympy.together((w[0, 0] + w[1, 1]) / 2 if case["of"] == "trace" else w[0, 0] * w[1, 1] - w[0, 1] * w[1, 0])


def block_predicted(b: Backend, case: Case) -> Any:
    """cos t and 1: the eigenvalues c +- i sqrt(1 - c^2) = e^(+-i t)."""
    return case["c"] if case["of"] == "trace" else sympy.Integer(1)


# One block, c = cos t symbolic: trace 2c and determinant 1, so its eigenvalues are e^(+-i t).
BLOCK = Agreement(block_invariant, block_predicted, "exact difference")


C = sympy.Symbol("c", real=True)
cases_block = listed({"label": "trace/2 - cos t", "of": "trace", "c": C}, {"label": "det - 1", "of": "det", "c": C})


_sizes = sizes_between(2, of="sizes")
# random angles t_j on [0, pi/2] (and a random D), ctx.profile.cases for each size n >= 2
random_angles = sampled(_sizes, lambda rng, n: {"n": n, "t": cy.init_angles(rng, n)})
random_angles_and_d = sampled(_sizes, lambda rng, n: {"n": n, "t": cy.init_angles(rng, n), "D": random_signs(rng, n)})


def float_eigenvalues(b: Backend, case: Case, *, with_d: bool) -> Measure:
    """float64 eigenvalues of W (or of W D) against the prediction: e^(+-i t_j) (plus 1 for odd n)
    for W, the corrected prediction for W D; the distance of a nearest matching over n eps. W
    itself must have every s_j in [0, 1] and every eigenvalue on the right half-plane. Computed in
    float64 whatever b is: a failure is not confirmed at higher precision (no error is given)."""
    f64 = get_backend("numpy-float64")
    n, t = int(case["n"]), np.asarray(case["t"], dtype=float)
    s = cy.init_s(t)
    w = _init_w(f64, s, n)
    eigs = [complex(x) for pair in zip(np.exp(1j * t), np.exp(-1j * t), strict=True) for x in pair] + [1.0] * (n % 2)
    if with_d:
        d = [int(x) for x in case["D"]]
        pred = np.array([complex(x) for x in ca.init_corrected_eigenvalues(eigs, d)])
        return Measure(ca.matching_distance(np.linalg.eigvals(w * np.array(d)), pred) / (n * f64.eps))
    ev = np.linalg.eigvals(w)
    if np.any(s > 1 + 4 * f64.eps) or np.any(s < 0) or np.any(ev.real < -n * f64.eps):
        return Measure(math.inf, f"n={n}: s outside [0, 1] or an eigenvalue left of the axis")
    return Measure(ca.matching_distance(ev, np.array(eigs)) / (n * f64.eps))


_INIT_S = (sympy.Rational(1, 2), sympy.Rational(1, 3), sympy.Rational(2, 3))  # cos t = 3/5, 4/5, 5/13


def every_d(ctx: RunContext) -> Iterator[Case]:
    """Every D for n = 2 .. the effort's reflection_max_n, s_j cycling through 1/2, 1/3, 2/3."""
    for n in range(2, effort(ctx).reflection_max_n + 1):
        s_values = [str(_INIT_S[k % len(_INIT_S)]) for k in range(n // 2)]
        for d in itertools.product((1, -1), repeat=n):
            yield {"n": n, "s": s_values, "D": list(d)}


def reflection(b: Backend, case: Case, *, corrected: bool) -> Measure:
    """Whether charpoly(W D) matches the prediction (as printed: for D with rho entries -1, W's
    eigenvalues with some rho reflected), exactly; the block entries s_j of a result file are
    parsed strictly by the SymPy backend, never evaluated."""
    b = exact_backend()
    lam = sympy.Symbol("lam")
    n = int(case["n"])
    s_values = list(b.asarray(case["s"], name="s"))
    d = [int(x) for x in case["D"]]
    w = sympy.Matrix(_init_w(b, s_values, n))
    eigs = ca.init_eigenvalues(s_values, n)
    cp = sympy.expand((w * sympy.diag(*d)).charpoly(lam).as_expr())
    rho = sum(1 for x in d if x < 0)
    ok = (
        sympy.expand(cp - ca.monic(ca.init_corrected_eigenvalues(eigs, d), lam)) == 0
        if corrected
        else ca.reflected_matches(cp, eigs, rho, lam)
    )
    if ok:
        return Measure(0.0, error=0.0)
    return Measure(math.inf, f"charpoly(W D) = {sympy.factor(cp)}; W's eigenvalues {eigs}, rho = {rho}", error=math.inf)


_INIT_STATEMENT = (
    "A = diag(B_1, ..., B_floor(n/2)) (zero elsewhere), B_j = [[0, s_j], [-s_j, 0]], "
    "s_j = sqrt((1 - cos t_j)/(1 + cos t_j)), t_j uniform on [0, pi/2]: the Cayley transform of A has "
    "eigenvalues e^(+-i t_j), distributed uniformly along the right unit half-circle"
)


def _checks(corrected: bool) -> tuple[Check, ...]:
    """The same symbolic block; every D exactly against the printed or the corrected prediction;
    float64 eigenvalues (random angles; random D for the correction)."""
    violation = functools.partial(reflection, corrected=corrected)
    how = f"charpoly(W D) vs {'corrected prediction' if corrected else 'rho reflected eigenvalues'}"
    exhaustive = PropertyCheck("exhaustive", violation, every_d, EXACT, how, method="exhaustive")
    measure = functools.partial(float_eigenvalues, with_d=corrected)
    cases = random_angles_and_d if corrected else random_angles
    floats = PropertyCheck("float", measure, cases, ("numpy-float64",), "eigenvalue error / (n eps)")
    return (BLOCK.symbolic("symbolic", cases_block), *((exhaustive, floats) if corrected else (floats, exhaustive)))


CLAIMS: list[Claim] = twins(
    "cayley.init",
    place=Place(section="4.2"),
    expected="refuted",
    origin="catalogue",
    summary="the initialisation reflects rho of the eigenvalues e^(±i t_j) through D",
    corrected_summary="the initialisation's eigenvalues, with half-flipped 2x2 blocks accounted for",
    kind="identity",
    printed=_INIT_STATEMENT + "; multiplication by the scaling matrix D will reflect rho of these eigenvalues "
    "across the imaginary axis",
    corrected=_INIT_STATEMENT + "; W D has the eigenvalues of W except that each 2x2 block with both signs flipped "
    "has its pair reflected across the imaginary axis (a flipped trailing 1 becomes -1), and each block with one "
    "sign flipped has eigenvalues +1 and -1 instead of e^(+-i t_j)",
    checks=_checks,
    printed_notes=(
        "The extraction prints the range of t_j as '[0,2]' and the eigenvalues as '+-e^(i t_j)': read as "
        "[0, pi/2] (the published version, and 'the right unit half-circle') and e^(+-i t_j). The first part holds "
        "exactly. The reflection statement holds only when D's -1 entries cover whole 2x2 blocks: a block with one "
        "sign flipped becomes a reflection with eigenvalues +1 and -1 (e.g. n = 2, rho = 1). The paper's own "
        "choices rho = n/10 = 17 and 7n/10 = 119 for n = 170 are odd, so at least one block is split."
    ),
    corrected_notes="So D reflects exactly rho eigenvalues when its -1 entries are placed on whole blocks (rho even).",
)
