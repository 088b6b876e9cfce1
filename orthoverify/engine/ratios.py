"""LAPACK-style test ratios: every float comparison reduced to one number on one scale.

A ratio divides an error by what rounding alone could explain: ``dim * (eps * scale + tiny)``,
with eps the unit roundoff of the arithmetic and tiny its smallest normal number (the
absolute error gradual underflow may add; 0 at high precision). A correct, stable computation gives ratios of order
1; a check passes when the ratio is at most its threshold (30, as in LAPACK's tests, unless a
claim's notes justify another). Exact arithmetic has no rounding: its ratio is 0 when the
difference is exactly zero and infinity otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from orthoverify.backends import Array, Backend
from orthoverify.tolerance import THRESHOLD as THRESHOLD  # re-exported: the engine's name for it
from orthoverify.tolerance import unit_roundoff

Status = Literal["", "not-run", "raised", "beyond"]
"""A measure's status: see :attr:`Measure.status`."""


@dataclass(frozen=True)
class Measure:
    """A test ratio; ``error`` is the unscaled discrepancy (relative to the reference's
    size) that the ratio divides by ``dim * eps``, and ``value`` an optional display of the
    quantity that breaks a claim (for counterexamples). ``stats`` are named values a check
    records per case for the report's figures (e.g. the max|a_ij| of a scaled Cayley inverse)."""

    ratio: float
    value: str | None = None
    note: str = ""
    error: float | None = None
    stats: Mapping[str, float] | None = None
    status: Status = ""
    """Why the ratio is no judged number (the ratio is then NaN, or inf for a failed call):
    ``"not-run"`` never measured, ``"raised"`` the call raised (at a special point an honest
    refusal), ``"beyond"`` the allowance promises no digit here (not judged); ``""`` measured."""
    unsupported: str = ""
    """The first line of the exception with which the measured code declined the mode this case
    exercises (a refusal, not a wrong number): the check's verdict is then ``unsupported``."""

    @property
    def display(self) -> str:
        return self.value if self.value is not None else f"{self.ratio:.6g}"

    @property
    def not_run(self) -> bool:
        return self.status == "not-run"

    @property
    def raised(self) -> bool:
        return self.status == "raised"

    @property
    def beyond(self) -> bool:
        return self.status == "beyond"


def as_measure(x: Measure | float) -> Measure:
    """Accept a bare float ratio where a Measure is expected."""
    return x if isinstance(x, Measure) else Measure(float(x))


def _exact_gap(b: Backend, diff: Array) -> Measure:
    if b.is_zero(diff):
        return Measure(0.0, "0", error=0.0)
    flat = list(diff.reshape(-1)) if hasattr(diff, "reshape") else [diff]
    for v in flat:
        if not b.is_zero(v):
            try:
                err = abs(float(v))
            except TypeError:
                err = math.inf
            return Measure(math.inf, str(v), "a nonzero entry of the exact difference", err)
    return Measure(math.inf, "nonzero", error=math.inf)


def residual(b: Backend, r: Array, dim: int, scale: float = 1.0, *, computed_in: str | None = None) -> Measure:
    """``||r||_F / (dim * (eps * scale + tiny))`` for a residual that is zero in exact arithmetic.

    ``computed_in``: the format (say ``"float32"``) the compared values were rounded to when it is
    not b's own (b, float64 say, only measures them): eps is then that format's unit roundoff. The
    floor ``tiny`` stays b's, the arithmetic the residual is formed in; a format's own smallest
    normal would widen the allowance where nothing underflows (for float16, 2^-14 beside
    u ||ref|| = 2^-11 sqrt(n) for an orthogonal output: 9% more at n = 2, 4% at n = 8)."""
    if b.exact:
        return _exact_gap(b, r)
    num = b.to_float(b.norm(r))
    sc = scale if scale > 0 else 1.0
    eps = b.eps if computed_in is None else unit_roundoff(computed_in)
    den = max(dim, 1) * (eps * sc + b.tiny)
    return Measure(num / den if math.isfinite(num) else math.inf, error=num / sc)


def agreement(
    b: Backend, x: Array, ref: Array, dim: int, condition: float = 1.0, *, computed_in: str | None = None
) -> Measure:
    """``||x - ref||_F / (dim * eps * ||ref||_F * condition)``: two formulations of the same quantity,
    ``condition`` the factor by which the formulations amplify rounding (1: well conditioned);
    ``computed_in`` as for :func:`residual`.

    When ``ref`` is exactly zero the error is measured absolutely.
    """
    if tuple(x.shape) != tuple(ref.shape):
        return Measure(math.inf, f"shape {tuple(x.shape)} != {tuple(ref.shape)}")
    if b.exact:
        return _exact_gap(b, x - ref)
    scale = b.to_float(b.norm(ref))
    return residual(b, x - ref, dim, (scale if scale > 0 else 1.0) * condition, computed_in=computed_in)


def orthogonality(b: Backend, q: Array, *, computed_in: str | None = None) -> Measure:
    """``||Q'Q - I||_F / (n (eps + tiny))`` of a real n x n ``q`` (orthogonal in exact arithmetic);
    ``computed_in`` as for :func:`residual`."""
    n = int(q.shape[-1])
    return residual(b, b.transpose(q) @ q - b.eye(n), n, computed_in=computed_in)


def scaled(error: float, dim: int, eps: float) -> Measure:
    """A measure from a relative error already computed: ratio ``error / (dim * eps)``."""
    if eps == 0.0:
        return Measure(0.0 if error == 0 else math.inf, error=error)
    return Measure(error / (max(dim, 1) * eps) if math.isfinite(error) else math.inf, error=error)


def fails(ratio: float, threshold: float = THRESHOLD) -> bool:
    """Whether a test ratio breaks its threshold: above it, or NaN (a ratio that could not be
    computed never passes)."""
    return not (ratio <= threshold)


def worst(*measures: Measure) -> Measure:
    """The measure with the largest ratio (NaN counts as largest)."""

    def key(m: Measure) -> float:
        return math.inf if math.isnan(m.ratio) else m.ratio

    return max(measures, key=key)


def flag(ok: bool, what: str) -> Measure:
    """An exact yes/no condition as a measure: ratio 0 when it holds, infinity (naming what
    fails) when it does not."""
    return Measure(0.0, "holds", error=0.0) if ok else Measure(math.inf, f"fails: {what}", error=math.inf)
