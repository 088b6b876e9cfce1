"""Timing helpers of the benchmarks: calls taken in turns (so machine noise hits implementation
and baseline alike; on CUDA timed by CUDA events after a warm-up), the number of torch
operations one call dispatches, peak memory of one call, and the growth exponent of a time
series."""

from __future__ import annotations

import collections
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


CUDA_WARMUP = 3
"""Calls of each function before a CUDA measurement: the first calls pay for kernel selection,
the allocator's first blocks and lazy module loading."""

CUDA_SAMPLE_S = 0.005
"""A CUDA sample times back-to-back calls lasting at least this long (by CUDA events), so that
sub-millisecond work is many calls per sample rather than one call beside the event overhead."""


SAMPLE_CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
"""What a sample on the CPU measures: wall time (the default), or ``cpu``, the calling thread's
CPU time, which leaves out the time the thread waits for a core: on a machine shared with other
work, a wall-clock sample longer than the scheduler's time slice takes the waits in and a shorter
one mostly does not, which skews the ratio of a slow baseline to a fast implementation (one
thread only: with ``OMP_NUM_THREADS=1`` all of a call's work runs in the calling thread)."""

_clock: list[Callable[[], float]] = [time.perf_counter]


@contextlib.contextmanager
def sampled_by(clock: str) -> Iterator[None]:
    """Within the block, :func:`take_turns` times its CPU samples by ``SAMPLE_CLOCKS[clock]``."""
    saved = _clock[0]
    _clock[0] = SAMPLE_CLOCKS[clock]
    try:
        yield
    finally:
        _clock[0] = saved


def take_turns(
    fns: dict[str, Callable[[], Any]], reps: int, budget_s: float, device: str = "cpu"
) -> dict[str, list[float]]:
    """Seconds per call of each function, after a warm-up call each. A sample times enough
    back-to-back calls to last >= 2 ms (fast calls are otherwise all timer noise); one sample
    per function per round; rounds stop at ``reps`` or, after three, once ``budget_s`` has passed.
    Samples are wall time unless :func:`sampled_by` says otherwise. On cuda see
    :func:`cuda_turns` (CUDA events, warm-up, inner repeats)."""
    if device == "cuda":
        return cuda_turns(fns, reps, budget_s)
    clock = _clock[0]
    inner: dict[str, int] = {}
    for name, fn in fns.items():
        fn()
        _sync(device)
        t0 = clock()
        fn()
        _sync(device)
        single = clock() - t0
        inner[name] = max(1, min(1000, math.ceil(0.002 / max(single, 1e-7))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    start = time.perf_counter()
    for i in range(reps):
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
        for name, fn in fns.items():
            k = inner[name]
            _sync(device)
            t0 = clock()
            for _ in range(k):
                fn()
            _sync(device)
            times[name].append((clock() - t0) / k)
    return times


def cuda_turns(fns: dict[str, Callable[[], Any]], reps: int, budget_s: float) -> dict[str, list[float]]:
    """:func:`take_turns` on the current CUDA device: :data:`CUDA_WARMUP` calls of each
    function, then samples timed by a pair of CUDA events around enough back-to-back calls to
    last :data:`CUDA_SAMPLE_S` (at most 1000), one synchronisation per sample (after the end
    event, so the host's launches overlap the device's work as in a training loop); rounds stop
    at ``reps`` or, after three, once ``budget_s`` of wall time has passed since the start,
    warm-up included. Only called where ``torch.cuda.is_available()``."""
    import torch

    start = time.perf_counter()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    inner: dict[str, int] = {}
    for name, fn in fns.items():
        for _ in range(CUDA_WARMUP):
            fn()
        torch.cuda.synchronize()
        begin.record()
        fn()
        end.record()
        end.synchronize()
        single = begin.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds
        inner[name] = max(1, min(1000, math.ceil(CUDA_SAMPLE_S / max(single, 1e-7))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(reps):
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
        for name, fn in fns.items():
            k = inner[name]
            begin.record()
            for _ in range(k):
                fn()
            end.record()
            end.synchronize()
            times[name].append(begin.elapsed_time(end) / 1e3 / k)
    return times


def op_counts(fn: Callable[[], Any]) -> collections.Counter[str]:
    """The torch operations one call of ``fn`` dispatches, by name (``aten.mm.default``, ...),
    views and in-place operations included: what each call asks of the device, whatever the
    device (a CUDA kernel launch, a CPU kernel call or a view's metadata), measured on the CPU
    as well. Counted by a ``TorchDispatchMode``, which sees every operation below autograd,
    those autograd's backward runs included."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: collections.Counter[str] = collections.Counter()

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            counts[str(func)] += 1
            return func(*args, **(kwargs or {}))

    with _Count():
        fn()
    return counts


def ops_per_call(fn: Callable[[], Any]) -> int:
    """The number of torch operations one call of ``fn`` dispatches (:func:`op_counts`)."""
    return sum(op_counts(fn).values())


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
