"""Benchmark case of the uRNN product (see :mod:`orthoverify.bench.core`).

``unitary.fft``: Arjovsky et al. (Sec. 2) claim ``W h`` with ``W = D3 R2 F^-1 D2 Pi R1 F D1``
costs O(n log n) where a dense W costs O(n^2). For n a power of two (float64; B = 1 and B = 32
columns; quick: n <= 128, B = 1 and 8) :func:`~orthoverify.param.unitary.urnn_apply` is timed on three paths,

- ``numpy-native``: numpy.fft for F and F^-1 (NumPy backend);
- ``torch-native``: torch.fft (torch CPU backend);
- ``numpy-generic``: the generic radix-2 FFT written against the backend protocol (NumPy),

against the baseline ``W @ h`` with W a complex128 NumPy matrix built once per n (not timed).
Before anything is timed, the dense W is checked against the dense factor product
:func:`~orthoverify.param.unitary.urnn_matrix` (small n), and every path against ``W h``: the
test ratio ``||y - W h|| / (n eps ||W h||)`` must be <= 30, or the case stops with an error
(timing a wrong answer says nothing). ``extra``: the check ratio, seconds / (n log2 n), and per
path and B the growth exponent of time over the run's n (all n, and n >= 1024).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

from orthoverify.backends import get_backend
from orthoverify.bench.core import BenchContext, BenchResult, bench_case
from orthoverify.bench.timing import slope, take_turns
from orthoverify.errors import OrthoverifyError
from orthoverify.param.unitary import CArray, FFTPath, urnn_apply, urnn_matrix, urnn_parameters, urnn_random
from orthoverify.tolerance import THRESHOLD

SIZES = tuple(2**k for k in range(6, 14))  # 64 .. 8192
SIZES_QUICK = (32, 64, 128)
BATCHES = (1, 32)
BATCHES_QUICK = (1, 8)
IMPLS = ("numpy-native", "torch-native", "numpy-generic")
BASELINE = "numpy complex128 W @ h (W precomputed)"
EPS = 2.0**-53  # float64 unit roundoff
VERIFY_W_SIZES = (4, 16, 64)
BIG_N = 1024


def parameters(n: int, seed: int = 0) -> tuple[Any, Any]:
    """The same uRNN parameters (Sec. 3.4's initialisation) on the NumPy and torch float64 backends."""
    import torch

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


def dense_w(p: Any, chunk: int = 512) -> np.ndarray:
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


def check_ratio(y: np.ndarray, ref: np.ndarray) -> float:
    """``||y - ref|| / (n eps ||ref||)`` (Frobenius norms, n = rows)."""
    return float(np.linalg.norm(y - ref) / (ref.shape[0] * EPS * np.linalg.norm(ref)))


def verify_dense(sizes: tuple[int, ...]) -> dict[int, float]:
    """Test ratio of :func:`dense_w` against the dense factor product, per n."""
    out = {}
    for n in sizes:
        p, _ = parameters(n)
        ref = urnn_matrix(p)
        out[n] = check_ratio(dense_w(p), ref.re + 1j * ref.im)
    return out


def impl_functions(p_np: Any, p_t: Any, h: np.ndarray) -> dict[str, Callable[[], np.ndarray]]:
    """Each path as a call on prepared inputs, returning a complex NumPy result for the check."""
    import torch

    h_np = CArray(np.ascontiguousarray(h.real), np.ascontiguousarray(h.imag))
    h_t = CArray(torch.as_tensor(h_np.re), torch.as_tensor(h_np.im))

    def as_complex(y: CArray) -> np.ndarray:
        re, im = y.re, y.im
        if isinstance(re, torch.Tensor):
            re, im = re.numpy(), im.numpy()
        return np.asarray(re) + 1j * np.asarray(im)

    def make(p: Any, x: CArray, path: FFTPath) -> Callable[[], np.ndarray]:
        return lambda: as_complex(urnn_apply(p, x, fft_path=path))

    return {
        "numpy-native": make(p_np, h_np, "native"),
        "torch-native": make(p_t, h_t, "native"),
        "numpy-generic": make(p_np, h_np, "generic"),
    }


def _fits(rows: list[BenchResult]) -> None:
    """Add the growth exponent of time per path and B (and of the dense baseline) to each row."""
    series: dict[tuple[str, int], dict[int, float]] = {}
    for r in rows:
        n, bsz = int(r.params["n"]), int(r.params["B"])
        series.setdefault((r.impl, bsz), {})[n] = r.seconds
        series.setdefault(("dense", bsz), {})[n] = r.baseline_seconds

    def fit(key: tuple[str, int], least: int) -> float | None:
        ns = sorted(n for n in series[key] if n >= least)
        s = slope(ns, [series[key][n] for n in ns])
        return None if math.isnan(s) else round(s, 3)

    for r in rows:
        bsz = int(r.params["B"])
        r.extra["exponent_all_n"] = fit((r.impl, bsz), 0)
        r.extra[f"exponent_n_ge_{BIG_N}"] = fit((r.impl, bsz), BIG_N)
        r.extra["baseline_exponent_all_n"] = fit(("dense", bsz), 0)


@bench_case(
    "unitary.fft",
    "uRNN product W h through the FFT (numpy, torch, generic radix-2) vs a precomputed dense "
    "complex128 W @ h, each path checked against W h first (test ratio <= 30)",
    devices=("cpu",),
)
def fft_product(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n, B, path): checked against the dense product, then timed in turns with it."""
    sizes = SIZES_QUICK if ctx.quick else SIZES
    verify = verify_dense(tuple(n for n in VERIFY_W_SIZES if n <= max(sizes)))
    bad = {n: v for n, v in verify.items() if not v <= THRESHOLD}
    if bad:
        raise OrthoverifyError(f"unitary.fft: the dense W disagrees with urnn_matrix (test ratios {bad}); not timed")
    reps = 3 if ctx.quick else 9
    rows: list[BenchResult] = []
    for n in sizes:
        p_np, p_t = parameters(n)
        w = dense_w(p_np)
        for bsz in BATCHES_QUICK if ctx.quick else BATCHES:
            rng = np.random.default_rng([1, n, bsz])
            shape = (n,) if bsz == 1 else (n, bsz)
            h = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
            fns = impl_functions(p_np, p_t, h)
            y_dense = w @ h
            checks = {name: check_ratio(fn(), y_dense) for name, fn in fns.items()}
            failed = {k: v for k, v in checks.items() if not v <= THRESHOLD}
            if failed:
                raise OrthoverifyError(
                    f"unitary.fft: n={n} B={bsz}: W h disagrees with the dense product (test ratios {failed}); "
                    "not timed"
                )

            def base(w: np.ndarray = w, h: np.ndarray = h) -> np.ndarray:
                return w @ h

            times = take_turns({**fns, "dense": base}, reps, ctx.budget_s)
            base_s = statistics.median(times["dense"])
            for name in fns:
                sec = statistics.median(times[name])
                rows.append(
                    BenchResult(
                        case="unitary.fft",
                        params={"n": n, "B": bsz, "dtype": "float64"},
                        impl=name,
                        baseline=BASELINE,
                        seconds=sec,
                        baseline_seconds=base_s,
                        extra={
                            "check_ratio": checks[name],
                            "seconds_per_nlogn": sec / (n * math.log2(n)),
                            "baseline_seconds_per_n2": base_s / (n * n),
                            "runs": len(times[name]),
                        },
                    )
                )
        del w
    _fits(rows)
    return rows
