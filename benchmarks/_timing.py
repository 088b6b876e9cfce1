"""Timing helpers shared by the benchmark scripts: calls taken in turns (so machine noise hits
implementation and baseline alike) and the growth exponent of a time series."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def take_turns(fns: dict[str, Callable[[], Any]], reps: int, budget_s: float) -> dict[str, list[float]]:
    """Seconds per call of each function, after a warm-up call each. A sample times enough
    back-to-back calls to last >= 2 ms (fast calls are otherwise all timer noise); one sample
    per function per round; rounds stop at ``reps`` or, after three, once ``budget_s`` has passed."""
    inner: dict[str, int] = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        single = time.perf_counter() - t0
        inner[name] = max(1, min(1000, math.ceil(0.002 / max(single, 1e-7))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    start = time.perf_counter()
    for i in range(reps):
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
        for name, fn in fns.items():
            k = inner[name]
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            times[name].append((time.perf_counter() - t0) / k)
    return times


def slope(ns: list[int], secs: list[float]) -> float:
    """Least-squares slope of log(seconds) against log(n) (nan with fewer than two points)."""
    if len(ns) < 2:
        return math.nan
    x, y = np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(secs, dtype=float))
    return float(np.polyfit(x, y, 1)[0])
