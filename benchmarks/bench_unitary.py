"""Time the uRNN product ``W h`` factor by factor (FFT path) against a precomputed dense W.

Arjovsky et al. (Sec. 2) claim ``W h`` with ``W = D3 R2 F^-1 D2 Pi R1 F D1`` costs O(n log n)
where a dense W costs O(n^2). For n = 64 .. 8192 (float64, B = 1 and B = 32 columns) this
times :func:`~orthoverify.param.unitary.urnn_apply` with

* ``numpy-native``: numpy.fft for F and F^-1 (NumPy backend);
* ``torch-native``: torch.fft (torch CPU backend);
* ``numpy-generic``: the generic radix-2 FFT written against the backend protocol (NumPy), up
  to ``--generic-max``;

against the baseline ``W @ h`` with W a complex128 NumPy matrix built once per n (not timed)
by applying the numpy-native path to the columns of the identity in chunks; W is checked
against the dense factor product :func:`~orthoverify.param.unitary.urnn_matrix` for small n.
Before timing, every path is checked against the dense product: the test ratio
``||y - W h|| / (n eps ||W h||)`` (eps = 2^-53) must be <= 30, and is printed.

Reported per case: median seconds, the baseline's median seconds from the same run (the
functions take turns, so load from elsewhere hits them alike), ``ratio = baseline_seconds /
seconds`` (> 1: the FFT path is faster), seconds / (n log2 n), and, per path and B, the growth
exponent of time (least-squares slope of log seconds against log n) over all n and over n >= 1024.
Not a test: a script (``--json PATH`` writes ``{"setting", "results", "fits"}``).

    python benchmarks/bench_unitary.py [--quick] [--json out.json] [--threads N]

On a small or shared machine pin OpenMP/OpenBLAS to one thread (idle spinning threads
inflate every time):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_unitary.py --threads 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import slope, take_turns

from orthoverify.backends import get_backend
from orthoverify.param.unitary import (
    CArray,
    FFTPath,
    URNNParameters,
    urnn_apply,
    urnn_matrix,
    urnn_parameters,
    urnn_random,
)

SIZES = [2**k for k in range(6, 14)]  # 64 .. 8192
SIZES_QUICK = [2**k for k in range(6, 11)]  # 64 .. 1024
BATCHES = [1, 32]
IMPLS = ("numpy-native", "torch-native", "numpy-generic")
BASELINE = "numpy complex128 W @ h (W precomputed)"
THRESHOLD = 30.0
EPS = get_backend("numpy-float64").eps  # unit roundoff 2^-53
VERIFY_W_SIZES = [4, 16, 64]


def parameters(n: int, seed: int = 0) -> tuple[URNNParameters, URNNParameters]:
    """The same uRNN parameters (Sec. 3.4's initialisation) on the NumPy and torch float64 backends."""
    raw = urnn_random(np.random.default_rng([seed, n]), n)
    p_np = urnn_parameters(**raw, backend=get_backend("numpy-float64"))

    def t(a: Any) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=np.float64))

    p_t = urnn_parameters(
        t(raw["w1"]),
        t(raw["w2"]),
        t(raw["w3"]),
        (t(raw["v1"][0]), t(raw["v1"][1])),
        (t(raw["v2"][0]), t(raw["v2"][1])),
        raw["perm"],
        backend=get_backend("torch-float64"),
    )
    return p_np, p_t


def dense_w(p: URNNParameters, chunk: int = 512) -> np.ndarray:
    """W as a complex128 matrix: the numpy-native path applied to the identity, ``chunk`` columns at a time."""
    n = p.n
    w = np.empty((n, n), dtype=np.complex128)
    for j in range(0, n, chunk):
        c = min(chunk, n - j)
        e = np.zeros((n, c))
        e[np.arange(j, j + c), np.arange(c)] = 1.0
        y = urnn_apply(p, CArray(e, np.zeros((n, c))), fft_path="native")
        w[:, j : j + c] = y.re + 1j * y.im
    return w


def ratio(y: np.ndarray, ref: np.ndarray) -> float:
    """The test ratio ``||y - ref|| / (n eps ||ref||)`` (Frobenius norms, n = rows)."""
    return float(np.linalg.norm(y - ref) / (ref.shape[0] * EPS * np.linalg.norm(ref)))


def verify_dense(sizes: list[int]) -> dict[int, float]:
    """Test ratio of :func:`dense_w` against the dense factor product :func:`urnn_matrix`, per n."""
    out = {}
    for n in sizes:
        p, _ = parameters(n)
        ref = urnn_matrix(p)
        out[n] = ratio(dense_w(p), ref.re + 1j * ref.im)
    return out


def impl_functions(
    p_np: URNNParameters, p_t: URNNParameters, h: np.ndarray, impls: tuple[str, ...]
) -> dict[str, Callable[[], np.ndarray]]:
    """Each implementation as a call on prepared inputs, returning a complex NumPy result for the check."""
    h_np = CArray(np.ascontiguousarray(h.real), np.ascontiguousarray(h.imag))
    h_t = CArray(torch.as_tensor(h_np.re), torch.as_tensor(h_np.im))

    def as_complex(y: CArray) -> np.ndarray:
        re, im = y.re, y.im
        if isinstance(re, torch.Tensor):
            re, im = re.numpy(), im.numpy()
        return np.asarray(re) + 1j * np.asarray(im)

    def make(p: URNNParameters, x: CArray, path: FFTPath) -> Callable[[], np.ndarray]:
        return lambda: as_complex(urnn_apply(p, x, fft_path=path))

    table: dict[str, tuple[URNNParameters, CArray, FFTPath]] = {
        "numpy-native": (p_np, h_np, "native"),
        "torch-native": (p_t, h_t, "native"),
        "numpy-generic": (p_np, h_np, "generic"),
    }
    return {name: make(*table[name]) for name in impls}


def run_cases(
    sizes: list[int],
    batches: list[int],
    reps: int,
    budget_s: float,
    *,
    generic_max: int = 8192,
    impls: tuple[str, ...] = IMPLS,
    verbose: bool = True,
) -> list[dict[str, Any]]:
    """One row per (n, B, implementation): checked against the dense product, then timed."""
    rows: list[dict[str, Any]] = []
    for n in sizes:
        p_np, p_t = parameters(n)
        w = dense_w(p_np)
        for bsz in batches:
            rng = np.random.default_rng([1, n, bsz])
            shape = (n,) if bsz == 1 else (n, bsz)
            h = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
            use = tuple(i for i in impls if i != "numpy-generic" or n <= generic_max)
            fns = impl_functions(p_np, p_t, h, use)
            y_dense = w @ h
            checks = {name: ratio(fn(), y_dense) for name, fn in fns.items()}
            if verbose:
                print(f"# n={n} B={bsz} check ratios " + " ".join(f"{k}={v:.3g}" for k, v in checks.items()))

            def base(w: np.ndarray = w, h: np.ndarray = h) -> np.ndarray:
                return w @ h

            times = take_turns({**fns, "dense": base}, reps, budget_s)
            base_s = statistics.median(times["dense"])
            for name in use:
                sec = statistics.median(times[name])
                rows.append(
                    {
                        "case": "unitary.urnn_apply",
                        "params": {"n": n, "B": bsz, "dtype": "float64", "device": "cpu", "impl": name},
                        "impl": name,
                        "baseline": BASELINE,
                        "seconds": sec,
                        "baseline_seconds": base_s,
                        "ratio": base_s / sec,
                        "check_ratio": checks[name],
                        "check_passed": checks[name] <= THRESHOLD,
                        "seconds_per_nlogn": sec / (n * math.log2(n)),
                        "baseline_seconds_per_n2": base_s / (n * n),
                        "runs": len(times[name]),
                    }
                )
        del w
    return rows


def fits(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Growth exponents of time (slope of log seconds vs log n), per implementation and B, and of
    the dense baseline per B: over all n and over n >= 1024."""
    out: dict[str, dict[str, float]] = {}
    series: dict[str, dict[int, float]] = {}
    for r in rows:
        q = r["params"]
        series.setdefault(f"{r['impl']}/B={q['B']}", {})[q["n"]] = r["seconds"]
        series.setdefault(f"dense/B={q['B']}", {})[q["n"]] = r["baseline_seconds"]
    order = {name: i for i, name in enumerate((*IMPLS, "dense"))}
    for key in sorted(series, key=lambda k: (int(k.split("=")[1]), order.get(k.split("/")[0], len(order)))):
        pts = series[key]
        ns = sorted(pts)
        big = [n for n in ns if n >= 1024]
        out[key] = {
            "exponent_all_n": slope(ns, [pts[n] for n in ns]),
            "exponent_n_ge_1024": slope(big, [pts[n] for n in big]),
            "n_min": float(ns[0]),
            "n_max": float(ns[-1]),
        }
    return out


def table(rows: list[dict[str, Any]], fit: dict[str, dict[str, float]]) -> str:
    """The rows and the fitted exponents as fixed-width text."""
    lines = [
        f"W h, float64 CPU; baseline {BASELINE}; ratio = baseline s / s (> 1: FFT path faster)",
        f"{'n':>6}{'B':>4}  {'impl':<14}{'seconds':>11}{'dense s':>11}{'ratio':>9}{'s/(n lg n)':>12}"
        f"{'check':>10}{'runs':>6}",
    ]
    for r in rows:
        q = r["params"]
        lines.append(
            f"{q['n']:>6}{q['B']:>4}  {r['impl']:<14}{r['seconds']:>11.4g}{r['baseline_seconds']:>11.4g}"
            f"{r['ratio']:>9.3g}{r['seconds_per_nlogn']:>12.3g}{r['check_ratio']:>10.3g}{r['runs']:>6}"
        )
    lines.append("growth exponent of time (slope of log s vs log n): all n | n >= 1024")
    for key, f in fit.items():
        lines.append(f"  {key:<22}{f['exponent_all_n']:>7.2f} | {f['exponent_n_ge_1024']:>5.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n up to 1024, fewer repetitions")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="powers of two n (overrides the default)")
    ap.add_argument("--batches", type=int, nargs="+", default=BATCHES, help="columns B of h")
    ap.add_argument("--generic-max", type=int, default=8192, help="largest n timed on the generic FFT path")
    ap.add_argument("--reps", type=int, default=None, help="timed rounds per case (median reported)")
    ap.add_argument("--budget", type=float, default=None, help="stop timing a case after this many seconds")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--json", type=Path, default=None, help="write the setting, results and fits to this file")
    args = ap.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    sizes = args.sizes if args.sizes is not None else (SIZES_QUICK if args.quick else SIZES)
    if any(n < 2 or n & (n - 1) for n in sizes):
        ap.error(f"sizes must be powers of two >= 2, got {sizes}")
    reps = args.reps if args.reps is not None else (3 if args.quick else 9)
    budget = args.budget if args.budget is not None else (1.0 if args.quick else 10.0)
    t0 = time.perf_counter()
    verify = verify_dense([n for n in VERIFY_W_SIZES if n <= max(sizes)] or [min(sizes)])
    print("# dense W (identity columns through the FFT path) vs urnn_matrix, test ratio: " + str(verify))
    if any(not v <= THRESHOLD for v in verify.values()):
        print(f"# FAILED: the dense W disagrees with urnn_matrix (ratio > {THRESHOLD}); not timing")
        return 1
    rows = run_cases(sizes, args.batches, reps, budget, generic_max=args.generic_max)
    fit = fits(rows)
    info = {
        "quick": args.quick,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "reps": reps,
        "budget_s": budget,
        "check_threshold": THRESHOLD,
        "dense_w_check": {str(k): v for k, v in verify.items()},
        "wall_s": round(time.perf_counter() - t0, 2),
    }
    print(f"# {info}")
    print(table(rows, fit))
    failed = [r for r in rows if not r["check_passed"]]
    if failed:
        print(
            f"# FAILED checks (ratio > {THRESHOLD}): " + ", ".join(f"{r['impl']} n={r['params']['n']}" for r in failed)
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"setting": info, "results": rows, "fits": fit}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
