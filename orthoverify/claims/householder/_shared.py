"""What several householder claims share: size grids and input shapes, Algorithm 2's measure,
and the gradient references of L = c' W(U) h (the definition, its autograd, its 50-digit central
differences, and the LAPACK-style scaling that compares a formula with them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import symbol_array
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.templates import Derivative, Inputs, audit, sampled
from orthoverify.param import householder as hh
from orthoverify.param.householder_proofs import judge


# ---------------------------------------------------------------------------- inputs
def exponent_range(b: Backend) -> int:
    """How far from 1 input magnitudes may range on ``b`` without leaving its float range."""
    return 15 if b.eps > 1e-10 else 100


def is_sign(b: Backend, x: Any) -> bool:
    return b.equal(x, 1) or b.equal(x, -1)


def sizes_nm(sizes: Iterable[int], *, include_square: bool = False, min_n: int = 1) -> Iterator[tuple[int, int]]:
    """(n, m) pairs: the reflection counts m of :func:`orthoverify.samples.reflection_sizes` per n."""
    for n in sizes:
        if n < min_n:
            continue
        for m in samples.reflection_sizes(n, include_square=include_square):
            yield n, m


def rational_vec(rng: np.random.Generator, n: int) -> np.ndarray:
    return samples.rational_vectors(rng, n, 1)[:, 0]


def u_sample(rng: np.random.Generator, n: int, m: int, u1: Callable[[], Any], *, log10_range: float = 0.0) -> Case:
    """Random U of eq. 9's shape with m columns; for m = n, its n - 1 columns and u_1 = ``u1()``."""
    if m < n:
        return {"U": samples.reflection_vectors(rng, n, m, log10_range=log10_range)}
    return {"U": samples.reflection_vectors(rng, n, n - 1, log10_range=log10_range), "u1": np.array([u1()])}


def gradient_sample(rng: np.random.Generator, nm: tuple[int, int]) -> Case:
    """Random U of eq. 9's shape, h and dL/dC."""
    n, m = nm
    return {"U": samples.reflection_vectors(rng, n, m), "h": rng.standard_normal(n), "c": rng.standard_normal(n)}


gradient_cases_exact = sampled(
    lambda ctx: sizes_nm(ctx.profile.exact_sizes, min_n=2),
    lambda rng, nm: {
        "U": samples.rational_vectors(rng, *nm),
        "h": rational_vec(rng, nm[0]),
        "c": rational_vec(rng, nm[0]),
    },
    per_size=lambda ctx: 1,
)
"""Rational U of eq. 9's shape, h and dL/dC: one per (n, m) of the profile's exact sizes."""


def lower_symbols(prefix: str, n: int, m: int) -> np.ndarray:
    """Symbols in eq. 9's shape: column j zero above row j."""
    full = symbol_array(prefix, n, m)
    out = np.full((n, m), sympy.Integer(0), dtype=object)
    for j in range(m):
        out[j:, j] = full[j:, j]
    return out


def u_and_u1(b: Backend, case: Case) -> tuple[Array, Array | None]:
    """A case's reflection vectors U and, for m = n, the scalar u_1."""
    u = b.asarray(case["U"], name="U")
    u1 = b.asarray(case["u1"], name="u1") if "u1" in case else None
    return u, u1


def w_by_definition(b: Backend, u: Array, u1: Array | None) -> Array:
    """W = M_{n-m+1}(u): the product of eq. 6 blocks (the definition)."""
    return hh.m_map(hh.u_to_vectors(u, u1, backend=b), backend=b)


# ---------------------------------------------------------------------------- Algorithm 2
def algorithm2_measure(b: Backend, case: Case, variant: hh.Variant) -> Measure:
    """A = QR, R upper triangular with positive diagonal, Q = H_n(u_n)...H_1(u_1), u_1 = +-1."""
    a = b.asarray(case["A"], name="A")
    n = a.shape[0]
    res = hh.algorithm2(a, backend=b, variant=variant)
    na = b.to_float(b.norm(a)) if not b.exact else 1.0
    diag_ok = all(b.positive(res.r[i, i]) for i in range(n))
    return worst(
        residual(b, res.q @ res.r - a, n, na),
        residual(b, b.tril(res.r, -1), n, na),
        residual(b, res.q - hh.m_map(res.vectors, backend=b), n),
        _flag(diag_ok, "R has a non-positive diagonal entry"),
        _flag(is_sign(b, res.vectors[0][0]), "u_1 is not +-1"),
    )


def q_algorithm2_printed(b: Backend, case: Case) -> Measure:
    """Algorithm 2 as printed (exact branch test, u = x - ||x|| e_1)."""
    return algorithm2_measure(b, case, "printed")


# ---------------------------------------------------------------------------- gradients of c'W(U)h
def grad_inputs(b: Backend, case: Case) -> Inputs:
    """A case's U, h and dL/dC on b, by name."""
    return {k: b.asarray(case[k], name=k) for k in ("U", "h", "c")}


def column_scales(b: Backend, u: Array) -> Array:
    """An array shaped like U whose column j holds ||U_j|| (1 for a zero column): the scale
    over which a scale-invariant function of column j varies."""
    n, m = u.shape
    out = b.zeros((n, m))
    for j in range(m):
        s = b.norm(u[:, j])
        out[:, j] = s if not b.is_zero(s) else 1
    return out


def gradient_scale(b: Backend, x: Inputs, key: str) -> float | list[float]:
    """The size of the terms of each gradient, as LAPACK scales a residual by ||A|| ||x|| rather
    than by ||b||: ||c|| for dL/dh = W'c, and ||h|| ||c|| / ||U_j|| for column j of dL/dU (each
    term of eq. 14 has that size). Relative-to-result ratios would blame any method for cancellation."""
    hn, cn = b.to_float(b.norm(x["h"])), b.to_float(b.norm(x["c"]))
    return [hn * cn / b.to_float(b.norm(x["U"][:, j])) for j in range(x["U"].shape[1])] if key == "U" else cn


def theorem2(b: Backend, x: Inputs) -> dict[str, Array]:
    """Eqs. 14-15: dL/dU and dL/dh."""
    gu, gh = hh.theorem2_gradients(x["U"], x["h"], x["c"], backend=b)
    return {"U": gu, "h": gh}


EQ14_15 = Derivative(
    grad_inputs,
    loss=lambda b, x: b.sum(x["c"] * hh.reflector_apply(x["U"], x["h"], backend=b)),
    formula=theorem2,
    scale=gradient_scale,
    dim=lambda x: x["U"].shape[0],
    step_scale=lambda b, x, key: column_scales(b, x["U"]) if key == "U" else None,
    autograd_loss=lambda b, x: x["c"] @ (hh.reflector_product(x["U"], backend=b) @ x["h"]),
)
"""Eqs. 14-15 and L = c' W(U) h with W by its definition: eq. 6's reflections applied to h in turn,
without forming W (SymPy, 50-digit differences), their dense product (autograd); h and c may be
n x B batches."""


def w_h(b: Backend, x: Inputs) -> Array:
    """C = W h with W the dense product of eq. 6's reflections (the definition)."""
    return hh.reflector_product(x["U"], backend=b) @ x["h"]


def h_norm(b: Backend, x: Inputs) -> float:
    """||h||: the size of the terms of C = W h."""
    return b.to_float(b.norm(x["h"]))


# ---------------------------------------------------------------------------- proof audits
def sympy_matrix(b: Backend, x: Any, name: str) -> Any:
    arr = b.asarray(x, name=name)
    return sympy.Matrix(arr.tolist()) if arr.ndim == 2 else sympy.Matrix(arr.reshape(-1, 1).tolist())


def judged(lines: Iterable[Any], reference: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """Each transcribed line (:class:`orthoverify.param.householder_proofs.ProofLine`) judged
    against the exact truth: where it stands in the paper, what is wrong, and whether it holds
    (evaluates and is equal); the line's internal label stays out of what a reader sees."""
    out = []
    for line in lines:
        verdict = judge(line, reference).verdict
        out.append((f"{line.where} is {verdict}: {line.text}", verdict == "equal"))
    return out


def audited_proof(
    transcribe: Callable[..., Any], reference: Callable[..., Any], keys: Sequence[str], *, corrected: bool
) -> Check:
    """The line-by-line audit of a transcribed proof (:func:`orthoverify.engine.templates.audit`):
    ``transcribe(*inputs, corrected=...)`` gives its lines and ``reference(*inputs)`` the truth,
    for the case's exact inputs named ``keys``, at the rational points of :func:`cases_proof`."""

    def lines(b: Backend, case: Case) -> list[tuple[str, bool]]:
        args = [sympy_matrix(b, case[k], k) for k in keys]
        return judged(transcribe(*args, corrected=corrected), reference(*args))

    return audit("line_by_line", lines, cases_proof)


def cases_proof(ctx: RunContext) -> Iterator[Case]:
    """Rational U, h, dL/dC and directions dU, dh at the small sizes the proofs are audited on."""
    rng = ctx.rng()
    for n, m in ((2, 1), (3, 1), (3, 2), (4, 2)):
        if n > max(ctx.profile.exact_sizes) + 1:
            continue
        yield {
            "U": samples.rational_vectors(rng, n, m),
            "h": rational_vec(rng, n),
            "c": rational_vec(rng, n),
            "dU": samples.rational_matrix(rng, n, m),
            "dh": rational_vec(rng, n),
        }
