"""Measured flop counts of the uRNN product ``W h``, factor by factor, and of the dense ``W h``.

Why: Arjovsky et al. (Sec. 2) state that multiplying by D, R or Pi costs O(n), F and F^-1 cost
O(n log n) by the FFT, so ``W h`` with ``W = D3 R2 F^-1 D2 Pi R1 F D1`` costs O(n log n). This
module *measures* the cost by running the unmodified generic code of
:mod:`orthoverify.param.unitary` (``urnn_apply(..., fft_path="generic")``: radix-2 FFT for
powers of two, Bluestein otherwise) on the counting arithmetic of
:mod:`orthoverify.backends.flops`, and fits the counts *exactly*: for n a power of two every
count is ``a n log2 n + b n + c`` with rational a, b, c, solved from three sizes and then
verified, as an identity of integers, on every other counted size. For other n (Bluestein),
the ``per_vector`` counts are exactly ``a m log2 m + b m + c n`` (:data:`BLUESTEIN`, m the
power-of-two FFT length, 2n - 1 <= m < 4n - 2) and every count is bounded by ``C n log2 n`` on the
counted sizes (:func:`nlogn_constant`); the setup has no formula in m alone, since chirp angles
``pi j^2 / n`` with ``j^2 = 0 mod 2n`` are integer zeros and cost nothing.

Accounting (what a "flop" is here):

* a flop is one binary ``+ - * /`` of real numbers (a complex product is 4 mul + 2 add/sub);
  negations and square roots are recorded apart (see :class:`~orthoverify.backends.flops.OpCounts`);
* ``cos`` and ``sin`` are free on the counting backend: the phases ``e^{i w}`` and the FFT
  twiddles do not depend on h, and a real implementation precomputes them. The arithmetic that
  *builds* the twiddle angles (``2 pi k / n``) and normalises the reflection vectors is counted,
  but it too is independent of h: ``part="setup"`` isolates it and ``part="per_vector"`` is the
  cost of each further column h, the cost that scales with the data (both measured, from a call
  with one column and a call with two);
* the zero padding of Bluestein's convolution is structural (the backend's int 0): free.

Per-factor counts come from applying the eight factors one after another exactly as
``urnn_apply`` does (same functions, same order), each inside its own counter; the sum is
checked against a count of one ``urnn_apply`` call, operation kind by operation kind, and the
outputs against each other, so the split is of ``urnn_apply`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from orthoverify.backends import get_backend
from orthoverify.backends.flops import KINDS, OpCounts, counting
from orthoverify.errors import DomainError, ShapeError
from orthoverify.param._validate import size
from orthoverify.param.unitary import (
    CArray,
    apply_reflection,
    fft,
    phases,
    urnn_apply,
    urnn_parameters,
    urnn_random,
)

__all__ = [
    "BLUESTEIN",
    "DENSE_SIZES",
    "FACTORS",
    "LINEAR",
    "NLOGN",
    "NONPOW2_SIZES",
    "POW2_SIZES",
    "QUADRATIC",
    "ApplyCount",
    "Basis",
    "Part",
    "bluestein_length",
    "check_fit",
    "check_nlogn_bound",
    "count_dense_apply",
    "count_urnn_apply",
    "dense_apply_counts",
    "dense_over_fft",
    "fit_exact",
    "fit_factors",
    "fit_nlogn",
    "fit_quadratic",
    "formula",
    "is_power_of_two",
    "nlogn_constant",
    "urnn_apply_counts",
]

FACTORS: tuple[str, ...] = ("D1", "F", "R1", "Pi", "D2", "Finv", "R2", "D3")
"""The factors of ``W = D3 R2 F^-1 D2 Pi R1 F D1`` in the order they act on h."""

POW2_SIZES: tuple[int, ...] = tuple(2**k for k in range(1, 11))
"""Powers of two 2..1024: the radix-2 path, where the counts are fitted exactly."""

NONPOW2_SIZES: tuple[int, ...] = (3, 5, 6, 7, 12, 24, 31, 33, 100)
"""Sizes that take the Bluestein path (power-of-two FFTs of length >= 2n - 1)."""

DENSE_SIZES: tuple[int, ...] = (1, 2, 3, 4, 5, 8, 16, 32, 64)
"""Sizes at which the dense product is counted (it costs ~8 n^2 counted operations)."""

Part = Literal["call", "per_vector", "setup"]
"""Which count: one call with ``batch`` columns; the cost of each further column h; the
h-independent work of a call (twiddle angles, reflection-vector normalisation)."""


@dataclass(frozen=True)
class Basis:
    """Functions of n whose rational combination is fitted exactly (names for printing)."""

    names: tuple[str, ...]
    funcs: tuple[Callable[[int], Fraction], ...]


def is_power_of_two(n: int) -> bool:
    """True for n = 1, 2, 4, ..."""
    return n >= 1 and n & (n - 1) == 0


def _nlog2n(n: int) -> Fraction:
    if not is_power_of_two(n):
        raise DomainError(f"n log2 n is irrational for n = {n}: exact n log n fits need powers of two")
    return Fraction(n * (n.bit_length() - 1))


NLOGN = Basis(("n log2 n", "n", "1"), (_nlog2n, Fraction, lambda n: Fraction(1)))
"""``a n log2 n + b n + c`` (powers of two only, where log2 n is an integer)."""
QUADRATIC = Basis(("n^2", "n", "1"), (lambda n: Fraction(n * n), Fraction, lambda n: Fraction(1)))
"""``a n^2 + b n + c``."""
LINEAR = Basis(("n", "1"), (Fraction, lambda n: Fraction(1)))
"""``b n + c``."""


_BACKEND = get_backend("flops")


def _size(n: Any, name: str = "n", low: int = 1) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise DomainError(f"{name} must be an integer, got {n!r}")
    if n < low:
        raise ShapeError(f"need {name} >= {low}, got {name} = {n}")
    return size(n, name, minimum=low)  # and at most MAX_SIZE


def bluestein_length(n: int) -> int:
    """The power-of-two FFT length Bluestein's algorithm uses for a length-n DFT (n itself when
    n is a power of two, which takes the radix-2 path)."""
    n = _size(n)
    if is_power_of_two(n):
        return n
    m = 1
    while m < 2 * n - 1:
        m *= 2
    return m


def _bluestein_m(n: int) -> int:
    if is_power_of_two(n):
        raise DomainError(f"n = {n} is a power of two: the radix-2 path, not Bluestein's (use NLOGN)")
    return bluestein_length(n)


BLUESTEIN = Basis(
    ("m log2 m", "m", "n", "1"),
    (
        lambda n: Fraction(_bluestein_m(n) * (_bluestein_m(n).bit_length() - 1)),
        lambda n: Fraction(_bluestein_m(n)),
        Fraction,
        lambda n: Fraction(1),
    ),
)
"""``a m log2 m + b m + c n + d`` with m = :func:`bluestein_length` (n not a power of two):
Bluestein's three power-of-two FFTs of length m, 2n - 1 <= m < 4n - 2, and O(n) around them."""


# --------------------------------------------------------------------------- counting
@dataclass(frozen=True)
class ApplyCount:
    """Operations of one ``urnn_apply(p, h, fft_path="generic")`` with h of n x ``batch``: per
    factor (keys of :data:`FACTORS`), and by source-line label in the cross-checking call (the
    innermost ``# Count`` marker: unitary.py's own, else ``"urnn_apply"``; empty without it)."""

    n: int
    batch: int
    factors: Mapping[str, OpCounts]
    labels: Mapping[str, OpCounts]

    @property
    def total(self) -> OpCounts:
        """Every operation of the call (the sum over the factors)."""
        out = OpCounts()
        for f in FACTORS:
            out = out + self.factors[f]
        return out

    def flops(self) -> dict[str, int]:
        """Flops per factor and ``"total"``."""
        out = {f: self.factors[f].flops for f in FACTORS}
        out["total"] = self.total.flops
        return out


def _random_input(n: int, batch: int, seed: int) -> tuple[Any, CArray]:
    """uRNN parameters as Sec. 3.4 draws them and an n x batch complex h, on the counting backend
    (entries nonzero Flops, so no product is free)."""
    rng = np.random.default_rng(seed)
    p = urnn_parameters(**urnn_random(rng, n), backend=_BACKEND)
    vals = rng.uniform(0.5, 1.5, size=(2, n, batch)) * rng.choice([-1.0, 1.0], size=(2, n, batch))
    return p, CArray(_BACKEND.asarray(vals[0]), _BACKEND.asarray(vals[1]))


def _factor_steps(p: Any) -> list[tuple[str, Callable[[CArray], CArray]]]:
    """The eight steps of ``urnn_apply`` (fft_path="generic"), in its order, with its calls."""
    b, n = _BACKEND, p.n
    d1, d2, d3 = (phases(w, backend=b).reshape(n, 1) for w in (p.w1, p.w2, p.w3))
    perm = list(p.perm)
    return [
        ("D1", lambda y: d1 * y),
        ("F", lambda y: fft(y, backend=b, inverse=False)),
        ("R1", lambda y: apply_reflection(p.v1, y, backend=b)),
        ("Pi", lambda y: y[perm]),
        ("D2", lambda y: d2 * y),
        ("Finv", lambda y: fft(y, backend=b, inverse=True)),
        ("R2", lambda y: apply_reflection(p.v2, y, backend=b)),
        ("D3", lambda y: d3 * y),
    ]


def _same_values(a: CArray, c: CArray) -> bool:
    return all(
        float(u) == float(v)
        for part_a, part_c in ((a.re, c.re), (a.im, c.im))
        for u, v in zip(part_a.reshape(-1), part_c.reshape(-1), strict=True)
    )


def count_urnn_apply(n: int, *, batch: int = 1, seed: int = 0, cross_check: bool = True) -> ApplyCount:
    """Count ``W h`` on the counting backend, factor by factor (module docstring). With
    ``cross_check`` one ``urnn_apply`` call is counted too and must agree with the sum of the
    factors kind by kind and in its output (else RuntimeError: the split no longer follows
    ``urnn_apply``, a bug). The counts do not depend on ``seed`` (only int zeros are free)."""
    return _count_urnn_apply(_size(n), _size(batch, "batch"), int(seed), bool(cross_check))


@lru_cache(maxsize=256)
def _count_urnn_apply(n: int, batch: int, seed: int, cross_check: bool) -> ApplyCount:
    """:func:`count_urnn_apply` on validated arguments (pure: cached)."""
    p, h = _random_input(n, batch, seed)
    factors: dict[str, OpCounts] = {}
    y = h
    for name, step in _factor_steps(p):
        with counting() as c:
            y = step(y)  # Count urnn factor
        factors[name] = c.select()
    labels: dict[str, OpCounts] = {}
    if cross_check:
        with counting() as c:
            whole = urnn_apply(p, h, fft_path="generic")  # Count urnn_apply
        labels = {lab: c.select(lab) for lab in c.labels()}
        total = c.select()
        split = OpCounts()
        for f in FACTORS:
            split = split + factors[f]
        if total != split or not _same_values(whole, y):
            raise RuntimeError(
                f"the factor-by-factor count ({split}) does not reproduce urnn_apply ({total}) at n = {n}: "
                "urnn_apply changed; update _factor_steps"
            )
    return ApplyCount(n, batch, factors, labels)


def _kinds(c: OpCounts) -> np.ndarray:
    return np.array([getattr(c, k) for k in KINDS], dtype=np.int64)


def _part_counts(n: int, part: Part, seed: int) -> dict[str, OpCounts]:
    """Per-factor OpCounts of ``part`` from the calls with one and two columns."""
    one = count_urnn_apply(n, batch=1, seed=seed)
    two = count_urnn_apply(n, batch=2, seed=seed, cross_check=False)  # the batch-1 call was cross-checked
    out = {}
    for f in FACTORS:
        a, b = _kinds(one.factors[f]), _kinds(two.factors[f])
        diff = b - a if part == "per_vector" else 2 * a - b
        if (diff < 0).any():
            raise RuntimeError(f"counts of factor {f} are not affine in the batch size at n = {n}")
        out[f] = OpCounts(*(int(v) for v in diff))
    return out


def urnn_apply_counts(n: int, *, part: Part = "call", batch: int = 1, seed: int = 0) -> dict[str, int]:
    """Flops of ``W h`` per factor (:data:`FACTORS`) and ``"total"``. ``part="call"``: one
    ``urnn_apply`` call with h of n x ``batch``; ``"per_vector"``: what each further column of h
    adds (count with two columns minus count with one); ``"setup"``: the h-independent rest
    (``call`` with batch 1 = ``setup + per_vector``)."""
    if part == "call":
        return count_urnn_apply(n, batch=batch, seed=seed).flops()
    if part not in ("per_vector", "setup"):
        raise DomainError(f"unknown part {part!r}: use call, per_vector or setup")
    counts = _part_counts(_size(n), part, seed)
    out = {f: counts[f].flops for f in FACTORS}
    out["total"] = sum(out.values())
    return out


def count_dense_apply(n: int, *, batch: int = 1, seed: int = 0) -> OpCounts:
    """Operations of the dense product ``W h`` (a complex n x n matrix of nonzero entries times
    n x ``batch`` columns, as :class:`CArray` ``@``: four real matrix products and a sub and an
    add per entry), counted the same way. Building W is not counted."""
    return _count_dense_apply(_size(n), _size(batch, "batch"), int(seed))


@lru_cache(maxsize=64)
def _count_dense_apply(n: int, batch: int, seed: int) -> OpCounts:
    """:func:`count_dense_apply` on validated arguments (pure: cached)."""
    rng = np.random.default_rng(seed)
    w_re, w_im, h_re, h_im = (rng.uniform(0.5, 1.5, size=s) for s in ((n, n), (n, n), (n, batch), (n, batch)))
    b = _BACKEND
    w = CArray(b.asarray(w_re), b.asarray(w_im))
    h = CArray(b.asarray(h_re), b.asarray(h_im))
    with counting() as c:
        w @ h  # Count dense
    return c.select()


def dense_apply_counts(n: int, *, batch: int = 1) -> int:
    """Flops of the dense ``W h`` (:func:`count_dense_apply`)."""
    return count_dense_apply(n, batch=batch).flops


# --------------------------------------------------------------------------- exact fits
def _solve(rows: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """Exact Gaussian elimination over the rationals (DomainError when singular)."""
    k = len(rows)
    a = [[*r, v] for r, v in zip(rows, rhs, strict=True)]
    for col in range(k):
        piv = next((i for i in range(col, k) if a[i][col] != 0), None)
        if piv is None:
            raise DomainError("the sizes chosen to solve the fit give a singular system: choose other n")
        a[col], a[piv] = a[piv], a[col]
        for i in range(k):
            if i != col and a[i][col] != 0:
                f = a[i][col] / a[col][col]
                a[i] = [x - f * y for x, y in zip(a[i], a[col], strict=True)]
    return [a[i][k] / a[i][i] for i in range(k)]


def _pairs(ns: Sequence[int], totals: Sequence[int]) -> list[tuple[int, int]]:
    if len(ns) != len(totals):
        raise ShapeError(f"{len(ns)} sizes but {len(totals)} counts")
    return [(_size(n), int(t)) for n, t in zip(ns, totals, strict=True)]


def _rank(rows: list[list[Fraction]]) -> int:
    """Rank of a small rational matrix (exact elimination)."""
    a = [r[:] for r in rows]
    rank = 0
    for col in range(len(a[0]) if a else 0):
        piv = next((i for i in range(rank, len(a)) if a[i][col] != 0), None)
        if piv is None:
            continue
        a[rank], a[piv] = a[piv], a[rank]
        for i in range(rank + 1, len(a)):
            f = a[i][col] / a[rank][col]
            a[i] = [x - f * y for x, y in zip(a[i], a[rank], strict=True)]
        rank += 1
    return rank


def _solve_sizes(ns: Sequence[int], basis: Basis) -> list[int]:
    """The first sizes of ``ns`` (in order) whose rows of ``basis`` are independent."""
    use: list[int] = []
    rows: list[list[Fraction]] = []
    for n in ns:
        row = [f(n) for f in basis.funcs]
        if n not in use and _rank([*rows, row]) > len(rows):
            use.append(n)
            rows.append(row)
            if len(use) == len(basis.funcs):
                break
    return use


def fit_exact(
    ns: Sequence[int], totals: Sequence[int], basis: Basis = NLOGN, *, solve_ns: Sequence[int] | None = None
) -> tuple[Fraction, ...]:
    """Rational coefficients of ``basis`` through the counts at ``solve_ns`` (default: the
    first sizes of ``ns`` that determine them), solved exactly; verify the rest with
    :func:`check_fit`."""
    pairs = dict(_pairs(ns, totals))
    k = len(basis.funcs)
    use = list(solve_ns) if solve_ns is not None else _solve_sizes(list(pairs), basis)
    if len(use) != k or len(set(use)) != k or any(n not in pairs for n in use):
        raise DomainError(f"need {k} distinct counted sizes to solve {' + '.join(basis.names)}, got {use}")
    rows = [[f(n) for f in basis.funcs] for n in use]
    return tuple(_solve(rows, [Fraction(pairs[n]) for n in use]))


def fit_nlogn(ns: Sequence[int], totals: Sequence[int]) -> tuple[Fraction, Fraction, Fraction]:
    """``(a, b, c)`` with ``total = a n log2 n + b n + c`` through the first three ns (powers of two)."""
    a, b, c = fit_exact(ns, totals, NLOGN)
    return a, b, c


def fit_quadratic(ns: Sequence[int], totals: Sequence[int]) -> tuple[Fraction, Fraction, Fraction]:
    """``(a, b, c)`` with ``total = a n^2 + b n + c`` through the first three ns."""
    a, b, c = fit_exact(ns, totals, QUADRATIC)
    return a, b, c


def _value(coeffs: Sequence[Fraction], basis: Basis, n: int) -> Fraction:
    if len(coeffs) != len(basis.funcs):
        raise ShapeError(f"{len(coeffs)} coefficients for a basis of {len(basis.funcs)} functions")
    return sum((Fraction(c) * f(n) for c, f in zip(coeffs, basis.funcs, strict=True)), Fraction(0))


def check_fit(
    ns: Sequence[int], totals: Sequence[int], coeffs: Sequence[Fraction], basis: Basis = NLOGN
) -> list[tuple[int, int, Fraction]]:
    """The sizes where the formula misses the count exactly, as ``(n, count, formula)``; an empty
    list means the formula holds as an identity at every counted n."""
    return [(n, t, v) for n, t in _pairs(ns, totals) if (v := _value(coeffs, basis, n)) != t]


def formula(coeffs: Sequence[Fraction], basis: Basis = NLOGN) -> str:
    """The fitted formula as text, e.g. ``"10 n log2 n + 47 n - 4"`` (zero terms left out)."""
    terms = []
    for c, name in zip(coeffs, basis.names, strict=True):
        if c == 0:
            continue
        mag = abs(c)
        body = str(mag) if name == "1" else (name if mag == 1 else f"{mag} {name}")
        terms.append(("- " if c < 0 else "+ ") + body)
    if not terms:
        return "0"
    text = " ".join(terms)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def fit_factors(
    ns: Sequence[int] = POW2_SIZES, *, part: Part = "per_vector", basis: Basis = NLOGN
) -> dict[str, tuple[tuple[Fraction, ...], list[tuple[int, int, Fraction]]]]:
    """For each factor and ``"total"``: the exact fit over ``ns`` (solved from the first sizes)
    and its misses on all of ``ns`` (empty when it holds exactly)."""
    counts = [urnn_apply_counts(n, part=part) for n in ns]
    out = {}
    for key in (*FACTORS, "total"):
        totals = [c[key] for c in counts]
        coeffs = fit_exact(ns, totals, basis)
        out[key] = (coeffs, check_fit(ns, totals, coeffs, basis))
    return out


# --------------------------------------------------------------------------- bounds, any n
def nlogn_constant(ns: Sequence[int], totals: Sequence[int]) -> float:
    """``max total / (n log2 n)`` over the counted n >= 2: the least C with
    ``total <= C n log2 n`` on them (n = 1 has n log2 n = 0 and is skipped)."""
    ratios = [t / (n * math.log2(n)) for n, t in _pairs(ns, totals) if n >= 2]
    if not ratios:
        raise DomainError("need at least one n >= 2 to bound a count by C n log2 n")
    return max(ratios)


def check_nlogn_bound(ns: Sequence[int], totals: Sequence[int], c: float) -> list[int]:
    """The counted n >= 2 where ``total > c n log2 n`` (empty: the bound holds on all of them)."""
    return [n for n, t in _pairs(ns, totals) if n >= 2 and t > c * n * math.log2(n)]


# --------------------------------------------------------------------------- dense vs FFT
def _counted_or_formula(
    n: int, counted: Sequence[int], count: Callable[[int], int], coeffs: Sequence[Fraction], basis: Basis
) -> tuple[int, str]:
    if n in counted:
        return count(n), "count"
    v = _value(coeffs, basis, n)
    if v.denominator != 1:
        raise DomainError(f"the fitted formula gives a non-integer count {v} at n = {n}")
    return int(v), "formula"


def dense_over_fft(
    ns: Sequence[int],
    *,
    part: Part = "per_vector",
    fft_ns: Sequence[int] = POW2_SIZES,
    dense_ns: Sequence[int] = DENSE_SIZES,
) -> list[dict[str, Any]]:
    """Flops of the dense ``W h`` over those of the FFT path (``part`` of ``urnn_apply``, one
    column) at powers of two ``ns``. A count is measured where n was counted (``fft_ns``,
    ``dense_ns``), else taken from the exact fit over those sizes (``"formula"``), which must
    hold on every counted size (else RuntimeError: nothing is extrapolated from a failed fit)."""
    fft_ns = [n for n in fft_ns if is_power_of_two(n)]
    fft_tot = [urnn_apply_counts(n, part=part)["total"] for n in fft_ns]
    fft_fit = fit_exact(fft_ns, fft_tot, NLOGN)
    dense_tot = [dense_apply_counts(n) for n in dense_ns]
    dense_fit = fit_exact(dense_ns, dense_tot, QUADRATIC)
    for name, xs, ts, co, ba in (
        ("FFT", fft_ns, fft_tot, fft_fit, NLOGN),
        ("dense", dense_ns, dense_tot, dense_fit, QUADRATIC),
    ):
        if misses := check_fit(xs, ts, co, ba):
            raise RuntimeError(f"the {name} fit {formula(co, ba)} misses the counts at {misses}: not extrapolating")
    rows = []
    for n in ns:
        if not is_power_of_two(_size(n)):
            raise DomainError(f"dense_over_fft takes powers of two, got n = {n}")
        fft_n, fft_src = _counted_or_formula(
            n, fft_ns, lambda m: urnn_apply_counts(m, part=part)["total"], fft_fit, NLOGN
        )
        dense_n, dense_src = _counted_or_formula(n, dense_ns, dense_apply_counts, dense_fit, QUADRATIC)
        rows.append(
            {
                "n": n,
                "dense": dense_n,
                "fft": fft_n,
                "ratio": dense_n / fft_n,
                "dense_from": dense_src,
                "fft_from": fft_src,
            }
        )
    return rows
