"""The recorded durations (``timings.json`` beside this module, written by ``tools/measure_times.py``).

One home for every duration the README states: each run (``check.default``, README command (1);
``check.quick``; ``family.quick.<family>``; ``bench.quick``; ``validate.quick``; the test suite's
``tests.fast`` and ``tests.all``) with its wall and CPU time (median, min, max, the samples), the
commit measured and how the machine was (the load average before each sample); and each profile's
per-task durations (seconds per ``claim::check``), from which ``orthoverify check`` starts its
estimate of the time left.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FILE = Path(__file__).with_name("timings.json")


def load() -> dict[str, Any]:
    """The recorded file (empty sections when it is missing)."""
    if not FILE.is_file():
        return {"runs": {}, "tasks": {}}
    data: dict[str, Any] = json.loads(FILE.read_text(encoding="utf-8"))
    return data


def task_seconds(profile: str) -> dict[str, float]:
    """Recorded seconds per ``claim::check`` on ``profile`` (summed over its backends); empty when
    the profile was not measured."""
    tasks = load().get("tasks", {}).get(profile, {})
    return {str(k): float(v) for k, v in tasks.items()}


def expected_seconds(
    tasks: Iterable[tuple[str, str]], all_tasks: Iterable[tuple[str, str]], profile: str
) -> list[float]:
    """The recorded duration of each task ``(claim, check)`` of a run: its ``claim::check``'s
    recorded seconds shared equally by the tasks of that check in ``all_tasks`` (every backend);
    a check not recorded gets the median of the others. Empty when nothing is recorded for the
    profile (the estimate then falls back to the run's own pace)."""
    recorded = task_seconds(profile)
    if not recorded:
        return []
    count: dict[str, int] = {}
    for claim, check in all_tasks:
        count[f"{claim}::{check}"] = count.get(f"{claim}::{check}", 0) + 1
    shares = {k: v / count.get(k, 1) for k, v in recorded.items()}
    fallback = statistics.median(shares.values())
    return [shares.get(f"{claim}::{check}", fallback) for claim, check in tasks]


def about(seconds: float) -> str:
    """A duration as the README states it: ``about 90 s`` (to 10 s) under two minutes, else
    ``about 14 minutes`` (to the minute)."""
    if seconds < 120:
        return f"about {max(10, round(seconds, -1)):.0f} s"
    return f"about {round(seconds / 60)} minutes"


def readme_table(data: dict[str, Any] | None = None) -> str:
    """The README's table of the recorded runs (between its ``<!-- timings -->`` markers), each
    with the conditions it was measured under: the commit and the load average before each run."""
    data = load() if data is None else data
    rows = [
        "| run | command | wall time, s: median (min to max) | CPU time, s: median (min to max) | runs "
        "| commit | load average before |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in data["runs"].items():
        w, c = r["wall_s"], r["cpu_s"]
        cpu = "not recorded" if c is None else f"{c['median']:g} ({c['min']:g} to {c['max']:g})"
        load_avg = ", ".join("not recorded" if x is None else f"{x:g}" for x in r["load_before"])
        commit = r["commit"] + (f" (transcribed from {r['transcribed']})" if r.get("transcribed") else "")
        rows.append(
            f"| `{name}` | `{r['command']}` | {w['median']:g} ({w['min']:g} to {w['max']:g}) | "
            f"{cpu} | {len(w['samples'])} | {commit} | {load_avg} |"
        )
    return "\n".join(rows)
