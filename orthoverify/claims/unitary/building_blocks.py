"""unitary.building_blocks: D, R, Pi, F and F^-1 are unitary, and R does not depend on the scale
of v.

Arjovsky et al. (ICML 2016) Sec. 2. Compared: X*X with I for every block and F^-1 F with I
(float, 50 digits, exact for n with radical roots of unity), R(c v) with R(v); with free
symbols, R R* = I, R* = R and R(c v) = R(v); every permutation matrix of small n exactly; and, for
the record, numpy.fft's unnormalised DFT (F*F = n I, not unitary).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import ALL, exact_backend, symbol_array
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._effort import effort
from orthoverify.claims.unitary._shared import cagree, complex_input
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, flag, worst
from orthoverify.engine.templates import witness
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def q_blocks(b: Backend, case: Case) -> Measure:
    """D, R, Pi, F, F^-1 unitary; F^-1 F = I; R(c v) = R(v) for complex c != 0."""
    n = int(case["n"])
    w = b.asarray(case["w"], name="w")
    v = complex_input(b, case, "v")
    cfac = complex_input(b, case, "c")
    d = un.phase_diag(w, backend=b)
    r = un.complex_reflection(v, backend=b)
    pi = un.CArray(un.permutation_matrix(case["perm"], backend=b), b.zeros((n, n)))
    f = un.dft_matrix(n, backend=b)
    fi = un.dft_matrix(n, backend=b, inverse=True)
    r2 = un.complex_reflection(v * cfac[0], backend=b)
    ratios = [Measure(un.unitarity_ratio(m, b)) for m in (d, r, pi, f, fi)]
    if b.exact:
        ratios = [flag(m.ratio == 0, "unitary") for m in ratios]
    return worst(*ratios, cagree(b, fi @ f, un.ceye(b, n), n), cagree(b, r2, r, n))


def cases_blocks(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    ns = ctx.profile.sizes_on(ctx.backend) if not ctx.backend.exact else tuple(n for n in (1, 2, 3, 4, 6, 8) if n <= 8)
    for n in ns:
        for _ in range(ctx.profile.cases):
            case: dict[str, Any] = {"n": n, "perm": [str(int(p)) for p in rng.permutation(n)]}
            if ctx.backend.exact:
                case["w"] = np.zeros(n, dtype=object)
                v = samples.rational_matrix(rng, n, 2, bound=3, max_den=2)
                v[0, 0] = 1 if all(x == 0 for x in v.reshape(-1)) else v[0, 0]
                case["v_re"], case["v_im"] = v[:, 0], v[:, 1]
                case["c_re"], case["c_im"] = (
                    np.array([sympy.Rational(-3, 2)], dtype=object),
                    np.array([2], dtype=object),
                )
            else:
                case["w"] = rng.uniform(-np.pi, np.pi, n)
                e = 8 if ctx.backend.eps > 1e-10 else 30  # |c v| must stay inside float32's range
                s = 10.0 ** rng.uniform(-e, e)
                case["v_re"], case["v_im"] = rng.standard_normal(n) * s, rng.standard_normal(n) * s
                cs = 10.0 ** rng.uniform(-e, e)
                case["c_re"], case["c_im"] = (
                    np.array([rng.standard_normal() * cs]),
                    np.array([rng.standard_normal() * cs]),
                )
            yield case


def sym_blocks(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """R(v) R(v)* = I, R* = R and R(c v) = R(v) for free complex v and c (k = 2, 3)."""
    b = exact_backend()
    for k in ctx.profile.symbolic_sizes:
        v = CArray(symbol_array("p", k), symbol_array("q", k))
        c = CArray(
            np.array([sympy.Symbol("c_re", real=True)], dtype=object),
            np.array([sympy.Symbol("c_im", real=True)], dtype=object),
        )
        r = un.complex_reflection(v, backend=b)
        rh = un.ct(b, r)
        rc = un.complex_reflection(v * c[0], backend=b)
        yield (
            f"k={k}: R R* - I",
            np.concatenate([(r @ rh - un.ceye(b, k)).re.reshape(-1), (r @ rh - un.ceye(b, k)).im.reshape(-1)]),
        )
        yield f"k={k}: R* - R", np.concatenate([(rh - r).re.reshape(-1), (rh - r).im.reshape(-1)])
        yield f"k={k}: R(c v) - R(v)", np.concatenate([(rc - r).re.reshape(-1), (rc - r).im.reshape(-1)])


def permutation_violation(b: Backend, case: Case) -> Measure:
    """Pi'Pi = I and Pi' is the matrix of the inverse permutation, in exact integers."""
    perm = [int(v) for v in case["perm"]]
    n = len(perm)
    eye = np.eye(n, dtype=np.int64)
    p = eye[perm]
    inv = [perm.index(i) for i in range(n)]
    return flag(np.array_equal(p.T @ p, eye) and np.array_equal(p.T, eye[inv]), "Pi'Pi != I")


def every_permutation(ctx: RunContext) -> Iterator[Case]:
    """Every permutation of n = 1..N (N = 5 on quick, 6 on default and thorough)."""
    for n in range(1, effort(ctx).permutations_max_n + 1):
        for perm in itertools.permutations(range(n)):
            yield {"perm": [str(v) for v in perm]}


def q_unnormalised_dft(b: Backend, case: Case) -> Measure:
    """Context for the claim, measured for the record: numpy.fft's default ('backward') transform
    is the unnormalised DFT (their agreement), whose F*F = n I (its agreement with n I), so it is
    unitary only after dividing by sqrt(n) (flagged if its unitarity ratio stayed below 1e3)."""
    n = int(case["n"])
    f = un.dft_matrix(n, backend=b, normalized=False)
    x = b.asarray(case["x"], name="x")
    ours = f @ CArray(x.reshape(n, 1), b.zeros((n, 1)))
    fx = np.fft.fft(b.to_numpy(x))
    return worst(
        cagree(b, ours, CArray(b.asarray(fx.real.reshape(n, 1)), b.asarray(fx.imag.reshape(n, 1))), n),
        cagree(b, un.ct(b, f) @ f, un.ceye(b, n) * n, n),
        flag(un.unitarity_ratio(f, b) > 1e3, "the unnormalised DFT passes as unitary"),
    )


def cases_unnormalised_dft(ctx: RunContext) -> Iterator[Case]:
    for n in (2, 8, 64):
        yield {"n": n, "x": np.random.default_rng(0).standard_normal(n)}


BUILDING_BLOCKS = Claim(
    id="unitary.building_blocks",
    paper=PAPER,
    place=Place(source="Arjovsky et al.", section="2"),
    expected="verified",
    origin="catalogue",
    summary="the uRNN's building blocks D, R, Pi, F, F^-1 are unitary",
    kind="identity",
    statement=(
        "D = diag(e^(i w_j)), R = I - 2vv*/||v||^2, a permutation Pi, the Fourier transform F and F^-1 are unitary; "
        "R does not depend on the scale of v"
    ),
    checks=(
        PropertyCheck(
            "all_arithmetics",
            q_blocks,
            cases_blocks,
            ALL,
            "max(||X*X - I|| for X in D, R, Pi, F, F^-1; ||F^-1 F - I||; ||R(cv) - R(v)||) / (n eps)",
        ),
        SymbolicCheck("symbolic", sym_blocks),
        witness(
            "exhaustive",
            permutation_violation,
            backends=("sympy",),
            quantity_name="Pi'Pi - I",
            candidates=every_permutation,
            method="exhaustive",
        ),
        PropertyCheck(
            "float",
            q_unnormalised_dft,
            cases_unnormalised_dft,
            ("numpy-float64",),
            "max(||F_unnormalised x - numpy.fft.fft(x)||, ||F*F - n I||) / (n eps ||.||)",
        ),
    ),
    notes=(
        "F is the unitary DFT, F_jk = e^(-2 pi i jk/n)/sqrt(n); the default normalisation of numpy.fft and "
        "torch.fft (no 1/sqrt(n)) is not unitary (||F|| = sqrt(n)); the dft_normalisation check records this. "
        "The scale invariance holds for every complex c != 0 (so any centred uniform initialisation of v "
        "gives the same R, Sec. 3.4). Exact DFT checks use n with radical roots of unity (1, 2, 3, 4, 6, 8)."
    ),
)

CLAIMS: list[Claim] = [BUILDING_BLOCKS]
