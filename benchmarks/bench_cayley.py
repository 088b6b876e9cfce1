"""Time the scaled Cayley transform's inverse map and its torch forward+backward.

(a) ``inverse``: :func:`~orthoverify.param.cayley.scaled_cayley_inverse` on a Haar orthogonal
    float64 matrix per n (NumPy backend), against the baseline of one plain inverse Cayley
    solve ``np.linalg.solve(I + W, I - W)`` (a unit of O(n^3) work, not an alternative: it
    fails for W with eigenvalue -1 and gives no bound on |a_ij|). Reports the median seconds,
    the pair flips and max|a_ij| from the certificate, and the growth exponent of the time:
    the least-squares slope of log(seconds) against log(n), over n >= 128 and over all n.
(b) ``fwd+bwd``: one forward+backward of L = <G, W> by :class:`ScaledCayleyFunction`
    (Theorem 3.2's backward on saved LU factors) against autograd through
    ``torch.linalg.solve(I + A, (I - A) D)`` with A = triu(p, 1) - triu(p, 1)'.

``ratio`` is ``baseline_seconds / seconds`` from the same run (medians; the two take turns,
so load from elsewhere hits them alike): above 1 means faster than the baseline. Not a test:
a script (``--json PATH`` writes ``{"setting", "results", "fits"}``).

    python benchmarks/bench_cayley.py [--quick] [--json out.json] [--threads N]

On a small or shared machine, threads spinning in OpenMP/OpenBLAS while a core is busy
elsewhere inflate every time (by 10x and more on 2 cores); pin both libraries to one thread:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cayley.py --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import slope, take_turns

from orthoverify.param.cayley import scaled_cayley_inverse
from orthoverify.param.cayley_torch import scaled_cayley_weight
from orthoverify.samples import haar_orthogonal

INVERSE_SIZES = [32, 64, 128, 256, 512, 1024]
INVERSE_SIZES_QUICK = [32, 64, 128, 256]
GRAD_SIZES = [64, 256, 512]
GRAD_SIZES_QUICK = [64, 128]


def bench_inverse(sizes: list[int], reps: int, budget_s: float) -> list[dict[str, Any]]:
    """Part (a): one row per n."""
    rows: list[dict[str, Any]] = []
    for n in sizes:
        w = haar_orthogonal(np.random.default_rng(n), n)
        eye = np.eye(n)

        def run_impl(w: np.ndarray = w) -> Any:
            return scaled_cayley_inverse(w)

        def run_base(w: np.ndarray = w, e: np.ndarray = eye) -> Any:
            return np.linalg.solve(e + w, e - w)

        times = take_turns({"impl": run_impl, "base": run_base}, reps, budget_s)
        cert = scaled_cayley_inverse(w).certificate
        sec, base = statistics.median(times["impl"]), statistics.median(times["base"])
        rows.append(
            {
                "case": "inverse",
                "params": {
                    "n": n,
                    "dtype": "float64",
                    "flips": cert.flips,
                    "refreshes": cert.refreshes,
                    "max_abs": cert.max_abs,
                    "holds": cert.holds,
                    "reconstruction_ratio": cert.reconstruction_ratio,
                    "runs": len(times["impl"]),
                },
                "impl": "scaled_cayley_inverse",
                "baseline": "np.linalg.solve(I + W, I - W)",
                "seconds": sec,
                "baseline_seconds": base,
                "ratio": base / sec,
            }
        )
    return rows


def bench_grad(sizes: list[int], dtype: torch.dtype, reps: int, budget_s: float) -> list[dict[str, Any]]:
    """Part (b): one row per n."""
    rows: list[dict[str, Any]] = []
    gen = torch.Generator().manual_seed(0)
    for n in sizes:
        p = torch.randn(n, n, generator=gen, dtype=torch.float64).to(dtype).requires_grad_(True)
        d = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0).to(dtype)
        g = torch.randn(n, n, generator=gen, dtype=torch.float64).to(dtype)
        eye = torch.eye(n, dtype=dtype)

        def function_step(p: torch.Tensor = p, d: torch.Tensor = d, g: torch.Tensor = g) -> None:
            p.grad = None
            (scaled_cayley_weight(p, d) * g).sum().backward()

        def autograd_step(p: torch.Tensor = p, d: torch.Tensor = d, g: torch.Tensor = g, e: torch.Tensor = eye) -> None:
            p.grad = None
            up = p.triu(1)
            a = up - up.transpose(0, 1)
            (torch.linalg.solve(e + a, (e - a) * d) * g).sum().backward()

        times = take_turns({"impl": function_step, "base": autograd_step}, reps, budget_s)
        sec, base = statistics.median(times["impl"]), statistics.median(times["base"])
        rows.append(
            {
                "case": "fwd+bwd",
                "params": {"n": n, "dtype": str(dtype).replace("torch.", ""), "runs": len(times["impl"])},
                "impl": "ScaledCayleyFunction",
                "baseline": "autograd through torch.linalg.solve",
                "seconds": sec,
                "baseline_seconds": base,
                "ratio": base / sec,
            }
        )
    return rows


def fits(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Growth exponents of the inverse map's time (slope of log seconds vs log n)."""
    inv = [r for r in rows if r["case"] == "inverse"]
    ns = [r["params"]["n"] for r in inv]
    secs = [r["seconds"] for r in inv]
    big = [(n, s) for n, s in zip(ns, secs, strict=True) if n >= 128]
    return {
        "inverse_exponent_all_n": slope(ns, secs),
        "inverse_exponent_n_ge_128": slope([n for n, _ in big], [s for _, s in big]),
    }


def table(rows: list[dict[str, Any]], fit: dict[str, float]) -> str:
    """The rows as fixed-width text tables."""
    lines = [
        "(a) scaled_cayley_inverse on Haar orthogonal float64 W; baseline one solve (I + W)^-1 (I - W)",
        f"{'n':>6}{'median s':>12}{'baseline s':>12}{'ratio':>9}{'flips':>7}{'max|a_ij|':>12}{'holds':>7}{'runs':>6}",
    ]
    for r in rows:
        if r["case"] != "inverse":
            continue
        q = r["params"]
        lines.append(
            f"{q['n']:>6}{r['seconds']:>12.4g}{r['baseline_seconds']:>12.4g}{r['ratio']:>9.3g}{q['flips']:>7}"
            f"{q['max_abs']:>12.6f}{q['holds']!s:>7}{q['runs']:>6}"
        )
    lines.append(
        f"growth exponent of time: {fit['inverse_exponent_n_ge_128']:.2f} over n >= 128, "
        f"{fit['inverse_exponent_all_n']:.2f} over all n"
    )
    lines.append("")
    lines.append("(b) forward+backward of <G, W>: ScaledCayleyFunction vs autograd through torch.linalg.solve")
    lines.append(f"{'n':>6}{'dtype':>9}{'median s':>12}{'baseline s':>12}{'ratio':>9}{'runs':>6}")
    for r in rows:
        if r["case"] != "fwd+bwd":
            continue
        q = r["params"]
        lines.append(
            f"{q['n']:>6}{q['dtype']:>9}{r['seconds']:>12.4g}{r['baseline_seconds']:>12.4g}{r['ratio']:>9.3f}"
            f"{q['runs']:>6}"
        )
    lines.append("ratio = baseline seconds / seconds (> 1: faster than the baseline)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer and smaller sizes, fewer repetitions")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"], help="dtype of part (b)")
    ap.add_argument("--reps", type=int, default=None, help="timed rounds per size (median reported)")
    ap.add_argument("--budget", type=float, default=None, help="stop timing a size after this many seconds")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--json", type=Path, default=None, help="write the setting, results and fits to this file")
    args = ap.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    reps = args.reps if args.reps is not None else (3 if args.quick else 9)
    budget = args.budget if args.budget is not None else (1.0 if args.quick else 10.0)
    t0 = time.perf_counter()
    rows = bench_inverse(INVERSE_SIZES_QUICK if args.quick else INVERSE_SIZES, reps, budget)
    rows += bench_grad(GRAD_SIZES_QUICK if args.quick else GRAD_SIZES, getattr(torch, args.dtype), reps, budget)
    fit = fits(rows)
    info = {
        "quick": args.quick,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        "machine": platform.machine(),
        "python": platform.python_version(),
        "wall_s": round(time.perf_counter() - t0, 2),
    }
    print(f"# {info}")
    print(table(rows, fit))
    if args.json is not None:
        args.json.write_text(json.dumps({"setting": info, "results": rows, "fits": fit}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
