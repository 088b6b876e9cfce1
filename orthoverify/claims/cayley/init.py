"""cayley.init and cayley.init.corrected: the initialisation's Cayley transform has eigenvalues
e^(+-i t_j) on the right unit half-circle; as printed, the scaling D then reflects rho of them
across the imaginary axis; corrected, only the 2x2 blocks whose two signs are both flipped are
reflected, and a block with one sign flipped gets eigenvalues +1 and -1.

Helfrich, Willmott, Ye (ICML 2018) Sec. 4.2. Compared: the characteristic polynomial of W D
against the polynomial of the predicted eigenvalues (printed: some rho reflected; corrected: per
block). Evidence: SymPy for one symbolic block, every D for small n with exact characteristic
polynomials, and float64 eigenvalues for random angles and random D.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.claims._common import EXACT, exact_backend
from orthoverify.claims.cayley import PAPER
from orthoverify.claims.cayley._effort import effort
from orthoverify.claims.cayley._shared import random_signs
from orthoverify.engine.checks import Check, FunctionCheck, Outcome, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import THRESHOLD, Measure, flag
from orthoverify.engine.templates import printed_and_corrected
from orthoverify.param import cayley as cy


def _init_w(b: Backend, s_values: Any, n: int) -> Array:
    return cy.cayley(cy.init_blocks(list(s_values), n, backend=b), backend=b)


def sym_init(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """One block with s = sqrt((1 - c)/(1 + c)), c = cos t symbolic: the Cayley block has trace
    2c and determinant 1, so its eigenvalues are c +- i sqrt(1 - c^2) = e^(+-i t)."""
    b = exact_backend()
    c = sympy.Symbol("c", real=True)
    s = sympy.sqrt((1 - c) / (1 + c))
    w = _init_w(b, [s], 2)
    yield "trace/2 - cos t", sympy.together((w[0, 0] + w[1, 1]) / 2) - c
    yield "det - 1", sympy.together(w[0, 0] * w[1, 1] - w[0, 1] * w[1, 0]) - 1


def _match(computed: np.ndarray, predicted: np.ndarray) -> float:
    """Largest distance in a greedy nearest matching of two eigenvalue multisets."""
    left = list(computed)
    worst_d = 0.0
    for p in predicted:
        k = int(np.argmin([abs(p - q) for q in left]))
        worst_d = max(worst_d, abs(p - left.pop(k)))
    return worst_d


def _random_inits(ctx: RunContext, rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray, np.ndarray, Array]]:
    """(n, t, s, W) in float64: random angles t_j on [0, pi/2], ctx.profile.cases for each size n >= 2."""
    b = get_backend("numpy-float64")
    for n in [n for n in ctx.profile.sizes if n >= 2]:
        for _ in range(ctx.profile.cases):
            t = cy.init_angles(rng, n)
            s = cy.init_s(t)
            yield n, t, s, _init_w(b, s, n)


def fn_init_float(ctx: RunContext) -> Outcome:
    """Random t_j on [0, pi/2]: every s_j lies in [0, 1], the eigenvalues of the Cayley
    transform are e^(+-i t_j) (plus 1 for odd n), all on the right half of the unit circle."""
    eps = get_backend("numpy-float64").eps
    worst_r = 0.0
    count = 0
    for n, t, s, w in _random_inits(ctx, ctx.rng()):
        pred = np.concatenate([np.exp(1j * t), np.exp(-1j * t), np.ones(n % 2)])
        ev = np.linalg.eigvals(w)
        r = _match(ev, pred) / (n * eps)
        worst_r = max(worst_r, r)
        count += 1
        if np.any(s > 1 + 4 * eps) or np.any(s < 0) or np.any(ev.real < -n * eps):
            return Outcome(False, count, worst_r, notes=f"n={n}: s outside [0, 1] or an eigenvalue left of the axis")
    return Outcome(
        worst_r <= THRESHOLD, count, worst_r, notes="t_j uniform on [0, pi/2]: s_j in [0, 1], Re(lambda) >= 0"
    )


_INIT_S = (sympy.Rational(1, 2), sympy.Rational(1, 3), sympy.Rational(2, 3))  # cos t = 3/5, 4/5, 5/13


def _init_exact_eigs(s_values: Sequence[Any], n: int) -> list[Any]:
    """Eigenvalues of the Cayley transform of the Sec. 4.2 A: c_j +- i sin t_j (and 1)."""
    out = []
    for s in s_values:
        c, sn = (1 - s * s) / (1 + s * s), 2 * s / (1 + s * s)
        out += [c + sympy.I * sn, c - sympy.I * sn]
    return out + [sympy.Integer(1)] * (n % 2)


def _poly(roots: Sequence[Any], lam: Any) -> Any:
    return sympy.expand(sympy.prod([lam - r for r in roots]))


def _reflected_matches(charpoly: Any, eigs: Sequence[Any], rho: int, lam: Any) -> bool:
    """Is charpoly the polynomial of eigs with some rho of them reflected (mu -> -conj(mu))?"""
    for chosen in itertools.combinations(range(len(eigs)), rho):
        roots = [-sympy.conjugate(e) if i in chosen else e for i, e in enumerate(eigs)]
        if sympy.expand(charpoly - _poly(roots, lam)) == 0:
            return True
    return False


def _corrected_roots(eigs: Sequence[Any], d: Sequence[int]) -> list[Any]:
    """The corrected prediction: a block with both signs flipped has its pair reflected, a block
    with one sign flipped has eigenvalues +1 and -1, a flipped trailing 1 becomes -1."""
    n = len(d)
    roots: list[Any] = []
    for k in range(n // 2):
        pair = eigs[2 * k : 2 * k + 2]
        flips = (d[2 * k] < 0) + (d[2 * k + 1] < 0)
        roots += pair if flips == 0 else [-sympy.conjugate(e) for e in pair] if flips == 2 else [1, -1]
    if n % 2:
        roots.append(-1 if d[-1] < 0 else 1)
    return roots


def _init_reflection(ctx: RunContext, corrected: bool) -> Outcome:
    b = exact_backend()
    lam = sympy.Symbol("lam")
    count = 0
    top = effort(ctx).reflection_max_n
    for n in range(2, top + 1):
        s_values = [_INIT_S[k % len(_INIT_S)] for k in range(n // 2)]
        w = sympy.Matrix(_init_w(b, s_values, n))
        eigs = _init_exact_eigs(s_values, n)
        for d in itertools.product((1, -1), repeat=n):
            count += 1
            cp = sympy.expand((w * sympy.diag(*d)).charpoly(lam).as_expr())
            rho = sum(1 for x in d if x < 0)
            ok = (
                sympy.expand(cp - _poly(_corrected_roots(eigs, d), lam)) == 0
                if corrected
                else _reflected_matches(cp, eigs, rho, lam)
            )
            if not ok:
                inputs = {"n": n, "s": [str(x) for x in s_values], "D": [str(x) for x in d]}
                value = f"charpoly(W D) = {sympy.factor(cp)}; W's eigenvalues {eigs}, rho = {rho}"
                return Outcome(False, count, failure=(inputs, Measure(math.inf, value, error=math.inf)))
    return Outcome(
        True, count, notes=f"every D for n = 2..{top} (s_j in {{1/2, 1/3, 2/3}}), exact characteristic polynomials"
    )


def fn_init_reflection_printed(ctx: RunContext) -> Outcome:
    """As printed: for every D with rho entries -1, the eigenvalues of W D are W's with some rho
    of them reflected across the imaginary axis."""
    return _init_reflection(ctx, corrected=False)


def fn_init_reflection_corrected(ctx: RunContext) -> Outcome:
    return _init_reflection(ctx, corrected=True)


def _replay_reflection(inputs: Mapping[str, Any], corrected: bool) -> Measure:
    """Whether charpoly(W D) matches the prediction, exactly; the block entries s_j of a result
    file are parsed strictly by the SymPy backend, never evaluated."""
    b = exact_backend()
    lam = sympy.Symbol("lam")
    n = int(inputs["n"])
    s_values = list(b.asarray(inputs["s"], name="s"))
    d = [int(x) for x in inputs["D"]]
    w = sympy.Matrix(_init_w(b, s_values, n))
    eigs = _init_exact_eigs(s_values, n)
    cp = sympy.expand((w * sympy.diag(*d)).charpoly(lam).as_expr())
    ok = (
        sympy.expand(cp - _poly(_corrected_roots(eigs, d), lam)) == 0
        if corrected
        else _reflected_matches(cp, eigs, sum(1 for x in d if x < 0), lam)
    )
    return flag(ok, f"charpoly(W D) = {sympy.factor(cp)}")


def replay_reflection_printed(inputs: Mapping[str, Any], b: Backend) -> Measure:
    return _replay_reflection(inputs, corrected=False)


def replay_reflection_corrected(inputs: Mapping[str, Any], b: Backend) -> Measure:
    return _replay_reflection(inputs, corrected=True)


def fn_init_reflection_float(ctx: RunContext) -> Outcome:
    """The corrected prediction in float64 for larger n and random D (random t_j)."""
    eps = get_backend("numpy-float64").eps
    rng = ctx.rng()
    worst_r = 0.0
    count = 0
    for n, t, _s, w in _random_inits(ctx, rng):
        d = random_signs(rng, n)
        eigs = [complex(x) for pair in zip(np.exp(1j * t), np.exp(-1j * t), strict=True) for x in pair]
        eigs += [1.0] * (n % 2)
        pred = np.array([complex(x) for x in _corrected_roots(eigs, d)])
        worst_r = max(worst_r, _match(np.linalg.eigvals(w * np.array(d)), pred) / (n * eps))
        count += 1
    return Outcome(worst_r <= THRESHOLD, count, worst_r)


_INIT_STATEMENT = (
    "A = diag(B_1, ..., B_floor(n/2)) (zero elsewhere), B_j = [[0, s_j], [-s_j, 0]], "
    "s_j = sqrt((1 - cos t_j)/(1 + cos t_j)), t_j uniform on [0, pi/2]: the Cayley transform of A has "
    "eigenvalues e^(+-i t_j), distributed uniformly along the right unit half-circle"
)


def _checks(corrected: bool) -> tuple[Check, ...]:
    """The same symbolic block for both; then every D exactly against the printed or the corrected
    prediction, and float64 eigenvalues (random angles; random D for the correction)."""
    symbolic = SymbolicCheck("symbolic_block_eigenvalues", sym_init)
    if not corrected:
        return (
            symbolic,
            FunctionCheck(
                "float_eigenvalues", fn_init_float, ("numpy-float64",), "float", "eigenvalue error / (n eps)"
            ),
            FunctionCheck(
                "exhaustive_d_reflection",
                fn_init_reflection_printed,
                EXACT,
                "exhaustive",
                "charpoly(W D) vs rho reflected eigenvalues",
                threshold=None,
                replay_fn=replay_reflection_printed,
                exact=True,
            ),
        )
    return (
        symbolic,
        FunctionCheck(
            "exhaustive_d_corrected",
            fn_init_reflection_corrected,
            EXACT,
            "exhaustive",
            "charpoly(W D) vs corrected prediction",
            threshold=None,
            replay_fn=replay_reflection_corrected,
            exact=True,
        ),
        FunctionCheck(
            "float_random_d", fn_init_reflection_float, ("numpy-float64",), "float", "eigenvalue error / (n eps)"
        ),
    )


CLAIMS: list[Claim] = printed_and_corrected(
    "cayley.init",
    paper=PAPER,
    where="Sec. 4.2",
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
