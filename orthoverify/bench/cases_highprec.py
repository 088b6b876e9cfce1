"""Benchmark cases of high-precision linear algebra: python-flint's Arb matrices (the backend
:func:`~orthoverify.backends.high_precision_backend` gives when python-flint is installed)
against plain mpmath at the same number of digits (see :mod:`orthoverify.bench.core`).

- ``highprec.solve``: ``FlintBackend.solve`` (``flint.arb_mat.solve``, object arrays of balls
  in and out) against ``mpmath.lu_solve`` on an ``mpmath.matrix`` (``mp.dps`` set to the digits
  for the call and restored), on the same random well-conditioned system A x = b
  (A = G + n I, G standard normal).
- ``highprec.matmul``: ``A @ B`` on the flint backend's arrays (``flint.arb_mat``) against the
  product of two ``mpmath.matrix``.

Both answers are compared first: they must agree to the precision (relative 10^(3 - digits)),
or the case raises instead of timing a wrong answer. n in {16, 32, 64} (quick: 16), 50 and 100
digits; the baseline is mpmath, so ``ratio`` is the speed-up of flint.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from orthoverify.backends import flint_available, get_backend
from orthoverify.backends.flint_backend import exact_decimal
from orthoverify.bench.core import BenchContext, BenchResult, SkipCase, bench_case
from orthoverify.bench.timing import median_seconds

SIZES = (16, 32, 64)
SIZES_QUICK = (16,)
DIGITS = (50, 100)


def _flint(digits: int) -> Any:
    if not flint_available():
        raise SkipCase("python-flint is not installed: pip install 'orthoverify[flint]'")
    return get_backend(f"flint-{digits}")


def _system(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, n)) + n * np.eye(n), rng.standard_normal((n, n))


def _agree(flint_out: Any, mp_out: Any, digits: int, what: str) -> float:
    """The largest relative difference of the two answers; raises when it exceeds the precision."""
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = digits + 10
    flat = np.asarray(flint_out, dtype=object).reshape(-1)
    ref = [mp_out[i, j] for i in range(mp_out.rows) for j in range(mp_out.cols)]
    scale = max(abs(ctx.mpf(v)) for v in ref)
    worst = max(abs(ctx.mpf(exact_decimal(f.mid())) - ctx.mpf(r)) for f, r in zip(flat, ref, strict=True))
    rel = float(worst / scale)
    if not rel <= 10.0 ** (3 - digits):
        raise AssertionError(f"{what}: flint and mpmath differ by {rel:.3g} (relative) at {digits} digits")
    return rel


def _mp(digits: int) -> Any:
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = digits
    return ctx


def _row(
    ctx: BenchContext,
    case: str,
    setting: tuple[int, int, float],
    impl: tuple[str, Callable[[], Any]],
    baseline: tuple[str, Callable[[], Any]],
) -> BenchResult:
    """Time ``impl`` against ``baseline`` in turns; ``setting`` is (n, digits, their relative difference)."""
    n, digits, rel = setting
    t = median_seconds({"impl": impl[1], "baseline": baseline[1]}, reps=3 if ctx.quick else 5, budget_s=ctx.budget_s)
    return BenchResult(
        case,
        {"n": n, "digits": digits},
        impl[0],
        baseline[0],
        t["impl"],
        t["baseline"],
        extra={"max_rel_difference": float(f"{rel:.3g}") if math.isfinite(rel) else rel},
    )


@bench_case("highprec.solve", "A x = b at 50 and 100 digits: flint (arb_mat.solve) vs mpmath.lu_solve")
def solve(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n, digits)."""
    rows: list[BenchResult] = []
    for digits in DIGITS:
        fb = _flint(digits)
        mp = _mp(digits)  # a private context: mpmath's global mp.dps is never touched
        for n in SIZES_QUICK if ctx.quick else SIZES:
            a, g = _system(n)
            rhs = g[:, 0]
            fa, fr = fb.asarray(a), fb.asarray(rhs)
            ma, mr = mp.matrix(a.tolist()), mp.matrix(rhs.tolist())
            rel = _agree(fb.solve(fa, fr), mp.lu_solve(ma, mr), digits, f"solve n={n}")
            rows.append(
                _row(
                    ctx,
                    "highprec.solve",
                    (n, digits, rel),
                    (f"flint-{digits} solve", functools.partial(fb.solve, fa, fr)),
                    (f"mpmath.lu_solve (dps {digits})", functools.partial(mp.lu_solve, ma, mr)),
                )
            )
    return rows


@bench_case("highprec.matmul", "A @ B at 50 and 100 digits: flint (arb_mat) vs mpmath.matrix product")
def matmul(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n, digits)."""
    rows: list[BenchResult] = []
    for digits in DIGITS:
        fb = _flint(digits)
        mp = _mp(digits)
        for n in SIZES_QUICK if ctx.quick else SIZES:
            a, g = _system(n)
            fa, fg = fb.asarray(a), fb.asarray(g)
            ma, mg = mp.matrix(a.tolist()), mp.matrix(g.tolist())
            rel = _agree(fa @ fg, ma * mg, digits, f"matmul n={n}")
            rows.append(
                _row(
                    ctx,
                    "highprec.matmul",
                    (n, digits, rel),
                    (f"flint-{digits} @", functools.partial(operator.matmul, fa, fg)),
                    (f"mpmath.matrix * (dps {digits})", functools.partial(operator.mul, ma, mg)),
                )
            )
    return rows
