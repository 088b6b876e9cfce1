"""Timing helpers of the benchmarks: calls taken in turns (so machine noise hits implementation
and baseline alike), peak memory of one call, and the growth exponent of a time series."""

from __future__ import annotations

import contextlib
import gc
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def take_turns(
    fns: dict[str, Callable[[], Any]], reps: int, budget_s: float, device: str = "cpu"
) -> dict[str, list[float]]:
    """Seconds per call of each function, after a warm-up call each. A sample times enough
    back-to-back calls to last >= 2 ms (fast calls are otherwise all timer noise); one sample
    per function per round; rounds stop at ``reps`` or, after three, once ``budget_s`` has passed.
    On cuda each sample ends with a synchronisation, so queued kernels are counted."""
    inner: dict[str, int] = {}
    for name, fn in fns.items():
        fn()
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        single = time.perf_counter() - t0
        inner[name] = max(1, min(1000, math.ceil(0.002 / max(single, 1e-7))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    start = time.perf_counter()
    for i in range(reps):
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
        for name, fn in fns.items():
            k = inner[name]
            _sync(device)
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            _sync(device)
            times[name].append((time.perf_counter() - t0) / k)
    return times


def median_seconds(
    fns: dict[str, Callable[[], Any]], reps: int = 7, budget_s: float = 2.0, device: str = "cpu"
) -> dict[str, float]:
    """The median of :func:`take_turns`'s samples for each function."""
    return {k: statistics.median(v) for k, v in take_turns(fns, reps, budget_s, device).items()}


def peak_bytes(fn: Callable[[], Any], device: str = "cpu", before: Callable[[], Any] | None = None) -> int | None:
    """Peak memory allocated during one call of ``fn`` beyond what was allocated before it.

    On cuda this is ``torch.cuda.max_memory_allocated``; on cpu it is the peak of the bytes of
    live torch tensor storages, followed through torch's CPU allocator profiler hooks when
    available; ``None`` when nothing can measure it. ``before`` runs first, outside the
    measurement: it should free what ``fn`` would free of an earlier call's results (a
    gradient ``fn`` resets), which would otherwise offset ``fn``'s own allocations."""
    import torch

    if before is not None:
        before()
    gc.collect()
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - start)
    return _cpu_peak_bytes(fn)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 (some torch builds print profiler start/stop lines there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _cpu_peak_bytes(fn: Callable[[], Any]) -> int | None:
    """CPU peak through the profiler's memory events (allocation deltas in call order)."""
    from torch.profiler import ProfilerActivity, profile

    try:
        with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
    except Exception:  # a torch build without the profiler: say nothing rather than guess
        return None
    events = []
    for ev in prof.events():
        delta = getattr(ev, "self_cpu_memory_usage", 0)  # an op's own allocations, frees as [memory]
        if delta:
            events.append((ev.time_range.start, delta))
    events.sort()
    cur = peak = 0
    for _, delta in events:
        cur += delta
        peak = max(peak, cur)
    return int(peak) if events else None


def slope(ns: list[int], secs: list[float]) -> float:
    """Least-squares slope of log(seconds) against log(n) (nan with fewer than two points)."""
    if len(ns) < 2:
        return math.nan
    x, y = np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(secs, dtype=float))
    return float(np.polyfit(x, y, 1)[0])
