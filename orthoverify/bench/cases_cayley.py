"""Benchmark cases of the scaled Cayley transform (scoRNN): its torch forward+backward and its
inverse map (see :mod:`orthoverify.bench.core` for what a case and a row are).

- ``cayley.fwd_bwd``: one forward+backward of L = <G, W> through
  :class:`~orthoverify.param.cayley_torch.ScaledCayleyFunction` (Theorem 3.2's backward on the
  saved LU factors) against autograd through ``torch.linalg.solve(I + A, (I - A) D)``.
- ``cayley.inverse``: :func:`~orthoverify.param.cayley.scaled_cayley_inverse` (the choice of D,
  then pair flips until every |a_ij| <= 1) on a Haar orthogonal float64 W, against one plain
  inverse Cayley solve ``(I + W)^-1 (I - W)`` as the unit of O(n^3) work (not an alternative: it
  fails for W with eigenvalue -1 and bounds no |a_ij|). Each row's ``extra`` holds the
  certificate (pair flips, max|a_ij|, holds) and the growth exponent of the time over the run's n.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from orthoverify.bench.core import BenchContext, BenchResult, bench_case
from orthoverify.bench.timing import slope, take_turns
from orthoverify.param.cayley import scaled_cayley_inverse
from orthoverify.param.cayley_torch import scaled_cayley_weight
from orthoverify.samples import haar_orthogonal

INVERSE_SIZES = (32, 64, 128, 256, 512, 1024)
INVERSE_SIZES_QUICK = (32, 64)
GRAD_SIZES = (64, 256, 512)
GRAD_SIZES_QUICK = (32, 64)
BIG_N = 128  # the exponent over n >= BIG_N leaves out the sizes where call overhead dominates


def _reps(ctx: BenchContext) -> int:
    return 3 if ctx.quick else 9


def _exponent(ns: list[int], secs: list[float]) -> float | None:
    """Growth exponent of time (slope of log seconds against log n); None with under two sizes."""
    s = slope(ns, secs)
    return None if math.isnan(s) else round(s, 3)


@bench_case(
    "cayley.fwd_bwd",
    "forward+backward of <G, W>, W = (I+A)^-1 (I-A) D: ScaledCayleyFunction vs autograd through torch.linalg.solve",
)
def fwd_bwd(ctx: BenchContext) -> list[BenchResult]:
    """One row per n (float64 on the context's device)."""
    import torch

    rows: list[BenchResult] = []
    dtype = torch.float64
    gen = torch.Generator().manual_seed(0)
    for n in GRAD_SIZES_QUICK if ctx.quick else GRAD_SIZES:
        p = torch.randn(n, n, generator=gen, dtype=dtype).to(ctx.device).requires_grad_(True)
        d = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0).to(dtype=dtype, device=ctx.device)
        g = torch.randn(n, n, generator=gen, dtype=dtype).to(ctx.device)
        eye = torch.eye(n, dtype=dtype, device=ctx.device)

        def impl(p: torch.Tensor = p, d: torch.Tensor = d, g: torch.Tensor = g) -> None:
            p.grad = None
            (scaled_cayley_weight(p, d) * g).sum().backward()

        def base(p: torch.Tensor = p, d: torch.Tensor = d, g: torch.Tensor = g, e: torch.Tensor = eye) -> None:
            p.grad = None
            up = p.triu(1)
            a = up - up.transpose(0, 1)
            (torch.linalg.solve(e + a, (e - a) * d) * g).sum().backward()

        times = take_turns({"impl": impl, "base": base}, _reps(ctx), ctx.budget_s, ctx.device)
        rows.append(
            BenchResult(
                case="cayley.fwd_bwd",
                params={"n": n, "dtype": "float64", "device": ctx.device},
                impl="ScaledCayleyFunction",
                baseline="autograd through torch.linalg.solve",
                seconds=statistics.median(times["impl"]),
                baseline_seconds=statistics.median(times["base"]),
                extra={"runs": len(times["impl"])},
            )
        )
    return rows


@bench_case(
    "cayley.inverse",
    "scaled_cayley_inverse (choice of D, |a_ij| <= 1) on Haar orthogonal float64 W, in units of one "
    "plain inverse Cayley solve (I+W)^-1 (I-W); extra: certificate and growth exponent of time",
    devices=("cpu",),
)
def inverse(ctx: BenchContext) -> list[BenchResult]:
    """One row per n; every row's ``extra`` carries the growth exponents of the whole series."""

    rows: list[BenchResult] = []
    for n in INVERSE_SIZES_QUICK if ctx.quick else INVERSE_SIZES:
        w = haar_orthogonal(np.random.default_rng(n), n)
        eye = np.eye(n)

        def impl(w: np.ndarray = w) -> Any:
            return scaled_cayley_inverse(w)

        def base(w: np.ndarray = w, e: np.ndarray = eye) -> Any:
            return np.linalg.solve(e + w, e - w)

        times = take_turns({"impl": impl, "base": base}, _reps(ctx), ctx.budget_s)
        cert = scaled_cayley_inverse(w).certificate
        rows.append(
            BenchResult(
                case="cayley.inverse",
                params={"n": n, "dtype": "float64"},
                impl="scaled_cayley_inverse",
                baseline="np.linalg.solve(I + W, I - W)",
                seconds=statistics.median(times["impl"]),
                baseline_seconds=statistics.median(times["base"]),
                extra={
                    "flips": cert.flips,
                    "refreshes": cert.refreshes,
                    "max_abs": cert.max_abs,
                    "holds": cert.holds,
                    "reconstruction_ratio": cert.reconstruction_ratio,
                    "runs": len(times["impl"]),
                },
            )
        )
    ns = [int(r.params["n"]) for r in rows]
    secs = [r.seconds for r in rows]
    big = [(n, s) for n, s in zip(ns, secs, strict=True) if n >= BIG_N]
    fit = {
        "exponent_all_n": _exponent(ns, secs),
        f"exponent_n_ge_{BIG_N}": _exponent([n for n, _ in big], [s for _, s in big]),
    }
    for r in rows:
        r.extra.update(fit)
    return rows
