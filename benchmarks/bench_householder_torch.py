"""Time and memory of Algorithm 1's autograd.Function against autograd on the dense product.

For a few (n, m, B) this times one forward+backward of ``C = W h`` (loss ``<C, G>``) by:

* ``dense``: autograd through ``reflector_product(U) @ h`` (the baseline, ratio 1);
* ``wy``: autograd through ``compact_wy(U) @ h`` (eq. 13, for reference);
* ``alg1-store`` / ``alg1-recompute``: :class:`Algorithm1Function` with either strategy;

and reports each median time as a ratio against the ``dense`` median of the same run (the
methods take turns, so load from elsewhere hits them alike), plus the bytes
the method saves for backward (unique storages seen by ``saved_tensors_hooks``), in total and
beyond the inputs U and h. Not a test: a script (``--json PATH`` writes the rows).

    python benchmarks/bench_householder_torch.py [--device cpu|cuda] [--dtype float64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orthoverify.param.householder import compact_wy, reflector_product
from orthoverify.param.householder_torch import householder_apply

DEFAULT_SIZES = "32x16x8,64x63x16,128x64x32,256x32x64,512x64x32"
Method = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
METHODS: dict[str, Method] = {
    "dense": lambda u, h: reflector_product(u) @ h,
    "wy": lambda u, h: compact_wy(u) @ h,
    "alg1-store": lambda u, h: householder_apply(u, h, strategy="store"),
    "alg1-recompute": lambda u, h: householder_apply(u, h, strategy="recompute"),
}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step(fn: Method, u: torch.Tensor, h: torch.Tensor, g: torch.Tensor) -> None:
    """One forward+backward with fresh gradients."""
    u.grad = None
    h.grad = None
    (fn(u, h) * g).sum().backward()


def time_methods(
    methods: dict[str, Method], u: torch.Tensor, h: torch.Tensor, g: torch.Tensor, reps: int, budget_s: float
) -> dict[str, list[float]]:
    """Seconds of one forward+backward per method, after a warm-up each. The methods take turns
    (one run each per round), so load from elsewhere on the machine hits them all alike; rounds
    stop at ``reps`` or, after three, once ``budget_s`` has passed."""
    for fn in methods.values():
        step(fn, u, h, g)
    _sync(u.device)
    times: dict[str, list[float]] = {name: [] for name in methods}
    start = time.perf_counter()
    for i in range(reps):
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
        for name, fn in methods.items():
            t0 = time.perf_counter()
            step(fn, u, h, g)
            _sync(u.device)
            times[name].append(time.perf_counter() - t0)
    return times


def saved_bytes(fn: Method, u: torch.Tensor, h: torch.Tensor) -> tuple[int, int]:
    """Bytes of the unique storages saved for backward: all of them, and those other than U's and h's."""
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        st = t.untyped_storage()
        storages[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        c = fn(u, h)
    inputs = {u.untyped_storage().data_ptr(), h.untyped_storage().data_ptr()}
    total = sum(storages.values())
    beyond = sum(b for p, b in storages.items() if p not in inputs)
    del c
    return total, beyond


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    out = []
    for item in text.split(","):
        n, m, b = (int(x) for x in item.lower().split("x"))
        out.append((n, m, b))
    return out


def run(
    sizes: list[tuple[int, int, int]], device: str, dtype: torch.dtype, reps: int, budget_s: float
) -> list[dict[str, Any]]:
    """One row per (size, method): median and minimum time, ratio of medians to ``dense``, saved bytes."""
    rows: list[dict[str, Any]] = []
    gen = torch.Generator().manual_seed(0)
    for n, m, batch in sizes:
        u = torch.randn(n, m, generator=gen, dtype=dtype).tril().to(device).requires_grad_(True)
        h = torch.randn(n, batch, generator=gen, dtype=dtype).to(device).requires_grad_(True)
        g = torch.randn(n, batch, generator=gen, dtype=dtype).to(device)
        times = time_methods(METHODS, u, h, g, reps, budget_s)
        base = statistics.median(times["dense"])
        for name, fn in METHODS.items():
            t = statistics.median(times[name])
            total, beyond = saved_bytes(fn, u, h)
            rows.append(
                {
                    "n": n,
                    "m": m,
                    "B": batch,
                    "method": name,
                    "time_ms": 1e3 * t,
                    "min_ms": 1e3 * min(times[name]),
                    "runs": len(times[name]),
                    "ratio_vs_dense": t / base,
                    "saved_bytes": total,
                    "saved_bytes_beyond_inputs": beyond,
                }
            )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table."""
    head = (
        f"{'n':>5} {'m':>5} {'B':>5}  {'method':<15}{'median ms':>10}{'min ms':>9}{'/ dense':>9}"
        f"{'saved B':>13}{'beyond U,h':>13}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['n']:>5} {r['m']:>5} {r['B']:>5}  {r['method']:<15}{r['time_ms']:>10.3f}{r['min_ms']:>9.3f}"
            f"{r['ratio_vs_dense']:>9.3f}{r['saved_bytes']:>13,}{r['saved_bytes_beyond_inputs']:>13,}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="torch device (cpu or cuda)")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated NxMxB (default {DEFAULT_SIZES})")
    ap.add_argument("--reps", type=int, default=9, help="timed rounds (median reported)")
    ap.add_argument("--budget", type=float, default=3.0, help="stop timing a size after this many seconds")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows and the setting to this JSON file")
    args = ap.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device cuda but torch.cuda.is_available() is False")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    t0 = time.perf_counter()
    rows = run(parse_sizes(args.sizes), args.device, dtype, args.reps, args.budget)
    info = {
        "device": args.device if not args.device.startswith("cuda") else torch.cuda.get_device_name(args.device),
        "dtype": args.dtype,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "wall_s": round(time.perf_counter() - t0, 2),
    }
    print(f"# {info}")
    print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps({"setting": info, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
