"""Every block is checked for unitarity on its own, in every arithmetic (exactly for n whose roots
of unity are radicals), with R's scale invariance beside it; permutations are few enough to
enumerate; numpy.fft's unnormalised DFT is measured for the record, the usual slip."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL, symbol_array
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import Case, Identity, PropertyCheck, RunContext
from orthoverify.engine.ratios import Measure, flag, worst
from orthoverify.engine.templates import exact_witness, listed, repeated
from orthoverify.engine.templates_more import symbolic_identities
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def q_blocks(b: Backend, case: Case) -> Measure:
    """D, R, Pi, F, F^-1 unitary; F^-1 F = I; R(c v) = R(v) for complex c != 0."""
    n, v = int(case["n"]), kit.complex_input(b, case, "v")
    r, c = un.complex_reflection(v, backend=b), kit.complex_input(b, case, "c")[0]
    f, fi = un.dft_matrix(n, backend=b), un.dft_matrix(n, backend=b, inverse=True)
    pi = un.CArray(un.permutation_matrix(case["perm"], backend=b), b.zeros((n, n)))
    blocks = (un.phase_diag(b.asarray(case["w"], name="w"), backend=b), r, pi, f, fi)
    scaled = kit.cagree(b, un.complex_reflection(v * c, backend=b), r, n)
    return worst(*(kit.unitarity(b, m, "unitary") for m in blocks), kit.cagree(b, fi @ f, un.ceye(b, n), n), scaled)


def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Case:
    """A random permutation and w, v and c of scales 10^+-30 (10^+-8 in float32, so that |c v| stays
    in range); exact: w = 0, rational v and c = -3/2 + 2i."""
    case: dict[str, Any] = {"n": n, "perm": [str(int(p)) for p in rng.permutation(n)]}
    if ctx.backend.exact:
        case |= {"w": np.zeros(n, dtype=object), **kit.scaled_vector(ctx, rng, "v", n, 0)}
        return case | {"c_re": np.array([sympy.Rational(-3, 2)], dtype=object), "c_im": np.array([2], dtype=object)}
    e = 8 if ctx.backend.eps > 1e-10 else 30
    case["w"] = rng.uniform(-np.pi, np.pi, n)
    return case | kit.scaled_vector(ctx, rng, "v", n, e) | kit.scaled_vector(ctx, rng, "c", 1, e)


def sizes(ctx: RunContext) -> tuple[int, ...]:
    """The profile's sizes; exact, the n whose roots of unity are radicals."""
    return (1, 2, 3, 4, 6, 8) if ctx.backend.exact else ctx.profile.sizes_on(ctx.backend)


def sym_blocks(b: Backend, k: int) -> Iterator[Identity]:
    """R(v) R(v)* = I, R* = R and R(c v) = R(v) for free complex v and c (k = 2, 3)."""
    v = CArray(symbol_array("p", k), symbol_array("q", k))
    c = CArray(*(np.array([sympy.Symbol(f"c_{p}", real=True)], dtype=object) for p in ("re", "im")))
    r = un.complex_reflection(v, backend=b)
    rh, rc = un.ct(b, r), un.complex_reflection(v * c[0], backend=b)
    yield "R R* - I", kit.parts(b, r @ rh - un.ceye(b, k))
    yield "R* - R", kit.parts(b, rh - r)
    yield "R(c v) - R(v)", kit.parts(b, rc - r)


def permutation_violation(b: Backend, case: Case) -> Measure:
    """Pi'Pi = I and Pi' is the matrix of the inverse permutation, in exact integers."""
    perm = [int(v) for v in case["perm"]]
    n = len(perm)
    eye = np.eye(n, dtype=np.int64)
    p = eye[perm]
    inv = [perm.index(i) for i in range(n)]
    return flag(np.array_equal(p.T @ p, eye) and np.array_equal(p.T, eye[inv]), "Pi'Pi != I")


def every_permutation(ctx: RunContext) -> Iterator[Case]:
    """Every permutation of n = 1..N (N from the profile's effort)."""
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
        kit.cagree(b, ours, CArray(b.asarray(fx.real.reshape(n, 1)), b.asarray(fx.imag.reshape(n, 1))), n),
        kit.cagree(b, un.ct(b, f) @ f, un.ceye(b, n) * n, n),
        flag(un.unitarity_ratio(f, b) > 1e3, "the unnormalised DFT passes as unitary"),
    )


CLAIMS = kit.claim(
    id="unitary.building_blocks",
    place=kit.URNN(section="2"),
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
            repeated(sizes, draw),
            ALL,
            "max(||X*X - I|| for X in D, R, Pi, F, F^-1; ||F^-1 F - I||; ||R(cv) - R(v)||) / (n eps)",
        ),
        symbolic_identities("symbolic", sym_blocks, size="k"),
        exact_witness("exhaustive", permutation_violation, "Pi'Pi - I", every_permutation, method="exhaustive"),
        PropertyCheck(
            "float",
            q_unnormalised_dft,
            listed(*({"n": n, "x": np.random.default_rng(0).standard_normal(n)} for n in (2, 8, 64))),
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
