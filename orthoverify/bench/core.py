"""Benchmark cases, their results, and running a selection of them.

A case is a named function that measures one implementation against a baseline measured in the
same run (timed in turns, see :mod:`orthoverify.bench.timing`) and returns one
:class:`BenchResult` per parameter setting. Cases register with :func:`bench_case`; their
modules are listed in :data:`CASE_MODULES` and imported on first use.

:func:`run_bench` runs each case ``repeats`` times and merges the repeats row by row: a row
keeps the median of each figure and of the ratio, and records ``spread`` (min, median, max
over the repeats); a row whose ratio or time moved by more than :data:`NOISY_SPREAD` between
repeats is marked ``noisy`` (and warned about): the machine was too busy to trust it.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import math
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from orthoverify import _atomic
from orthoverify._text import duration_text
from orthoverify.bench.timing import SAMPLE_CLOCKS, sampled_by
from orthoverify.errors import InputError

#: Modules whose import registers the cases (in the order ``orthoverify bench`` lists them).
CASE_MODULES: tuple[str, ...] = (
    "orthoverify.bench.cases_householder",
    "orthoverify.bench.cases_cayley",
    "orthoverify.bench.cases_unitary",
    "orthoverify.bench.cases_highprec",
    "orthoverify.bench.cases_suite",
)


@dataclass
class BenchResult:
    """One measurement: ``ratio = baseline_seconds / seconds`` (above 1: faster than the baseline)."""

    case: str
    params: dict[str, Any]
    impl: str
    baseline: str
    seconds: float
    baseline_seconds: float
    ratio: float = math.nan
    peak_bytes: int | None = None
    baseline_peak_bytes: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    repeats: int = 1
    """How many times the case ran (each repeat times its calls in turns, ``extra["runs"]`` rounds)."""
    spread: dict[str, list[float]] | None = None
    """[min, median, max] over the repeats of ``seconds``, ``baseline_seconds`` and ``ratio``."""
    noisy: bool = False
    """The spread says the machine was too noisy to trust this row (see :data:`NOISY_SPREAD`)."""
    ops: int | None = None
    """Torch operations one call of the implementation dispatches (views included; counted by
    :func:`orthoverify.bench.timing.op_counts`, the same on every device)."""
    baseline_ops: int | None = None
    """The same for the baseline."""
    device_name: str | None = None
    """The GPU's name (``torch.cuda.get_device_name``) for a row timed on CUDA."""

    def __post_init__(self) -> None:
        if math.isnan(self.ratio) and self.seconds > 0:
            self.ratio = self.baseline_seconds / self.seconds

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: v for k, v in d.items() if v is not None and v != {}}


NOISY_SPREAD = 1.5
"""A row is noisy when, over its repeats, max/min of its ratio or of either time exceeds this: the
same measurement moved by half again between runs, more than any claim about it could bear."""

_FIGURES = ("seconds", "baseline_seconds", "ratio")


def _row_key(r: BenchResult) -> str:
    return json.dumps([r.case, r.params, r.impl, r.baseline], sort_keys=True, default=str)


def merge_repeats(repeats: Sequence[Sequence[BenchResult]]) -> list[BenchResult]:
    """One row per (case, params, impl, baseline) over the repeats of a case: the median of each
    figure (the ratio is the median of the per-repeat ratios, each from calls timed in turns), the
    [min, median, max] of each in ``spread``, ``noisy`` when the spread exceeds NOISY_SPREAD; the
    other fields (memory, checks, ``extra``) from the first repeat."""
    import statistics

    groups: dict[str, list[BenchResult]] = {}
    for rows in repeats:
        for r in rows:
            groups.setdefault(_row_key(r), []).append(r)
    out = []
    for rows in groups.values():
        first = rows[0]
        spread = {}
        for name in _FIGURES:
            values = sorted(float(getattr(r, name)) for r in rows)
            spread[name] = [values[0], statistics.median(values), values[-1]]
        noisy = len(rows) > 1 and any(
            not (lo > 0 and hi / lo <= NOISY_SPREAD) for lo, _m, hi in (spread[n] for n in _FIGURES)
        )
        out.append(
            BenchResult(
                case=first.case,
                params=first.params,
                impl=first.impl,
                baseline=first.baseline,
                seconds=spread["seconds"][1],
                baseline_seconds=spread["baseline_seconds"][1],
                ratio=spread["ratio"][1],
                peak_bytes=first.peak_bytes,
                baseline_peak_bytes=first.baseline_peak_bytes,
                extra=first.extra,
                repeats=len(rows),
                spread=spread if len(rows) > 1 else None,
                noisy=noisy,
                ops=first.ops,
                baseline_ops=first.baseline_ops,
                device_name=first.device_name,
            )
        )
    return out


@dataclass(frozen=True)
class BenchContext:
    """What a case is asked to do: the device, and whether to use the small ``quick`` sizes."""

    device: str = "cpu"
    quick: bool = False
    budget_s: float = 2.0


BenchFn = Callable[[BenchContext], list[BenchResult]]


@dataclass(frozen=True)
class BenchCase:
    """A registered benchmark case."""

    name: str
    description: str
    fn: BenchFn
    devices: tuple[str, ...] = ("cpu", "cuda")
    in_default: bool = True  # False: runs only when a glob names it (long runs such as a thorough suite)


_CASES: dict[str, BenchCase] = {}


def bench_case(
    name: str, description: str, devices: tuple[str, ...] = ("cpu", "cuda"), in_default: bool = True
) -> Callable[[BenchFn], BenchFn]:
    """Register ``fn`` as the case ``name`` (dotted, e.g. ``householder.fwd_bwd``)."""

    def deco(fn: BenchFn) -> BenchFn:
        if name in _CASES and _CASES[name].fn is not fn:
            raise ValueError(f"benchmark case {name!r} registered twice")
        _CASES[name] = BenchCase(name, description, fn, devices, in_default)
        return fn

    return deco


def all_cases() -> dict[str, BenchCase]:
    """Every registered case, importing the case modules first."""
    for mod in CASE_MODULES:
        importlib.import_module(mod)
    return dict(_CASES)


def select_cases(globs: Sequence[str]) -> list[BenchCase]:
    """The cases matching any of ``globs`` (all when empty), in registration order."""
    cases = all_cases()
    if not globs:
        return [c for c in cases.values() if c.in_default]
    chosen = [c for name, c in cases.items() if any(fnmatch.fnmatchcase(name, g) for g in globs)]
    unmatched = [g for g in globs if not any(fnmatch.fnmatchcase(n, g) for n in cases)]
    if unmatched:
        raise InputError(f"no benchmark case matches {', '.join(map(repr, unmatched))}; cases: {', '.join(cases)}")
    return chosen


def _environment(device: str) -> dict[str, Any]:
    import numpy
    import torch

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "numpy": numpy.__version__,
        "device": device,
    }
    if device == "cuda" and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


def run_bench(
    globs: Sequence[str] = (),
    *,
    device: str = "cpu",
    quick: bool = False,
    budget_s: float = 2.0,
    progress: Callable[[str], None] | None = None,
    repeats: int = 3,
    save: Callable[[dict[str, Any]], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    sample_clock: str = "wall",
) -> dict[str, Any]:
    """Run the selected cases ``repeats`` times each and return the JSON document (``results``
    holds every row, merged over the repeats by :func:`merge_repeats`; ``noisy`` names the rows
    the machine's noise makes untrustworthy). Progress says ``[k/N]`` per case with the time
    elapsed and a rough estimate of the rest (the mean time of the cases done so far). ``save``
    receives the document after every case (``complete`` false until the last), so that an
    interrupted run keeps the rows it measured. ``sample_clock`` (``wall`` or ``cpu``, see
    :data:`~orthoverify.bench.timing.SAMPLE_CLOCKS`) is what a CPU sample measures; ``cpu``
    needs one torch thread and the CPU."""
    if repeats < 1:
        raise InputError(f"repeats must be at least 1, got {repeats}")
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be cpu or cuda, got {device!r}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("--device cuda asked for, but torch.cuda.is_available() is False")
    if sample_clock not in SAMPLE_CLOCKS:
        raise InputError(f"the clock must be one of {', '.join(SAMPLE_CLOCKS)}, got {sample_clock!r}")
    if sample_clock == "cpu":
        import torch

        if device != "cpu" or torch.get_num_threads() != 1:
            raise InputError(
                "--clock cpu times the calling thread only: it needs --device cpu and one thread "
                f"(OMP_NUM_THREADS=1; torch has {torch.get_num_threads()})"
            )
    ctx = BenchContext(device=device, quick=quick, budget_s=budget_s)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rows: list[BenchResult] = []
    skipped: list[dict[str, str]] = []
    environment = _environment(device)
    chosen = select_cases(globs)
    t0 = clock()

    def document(done: int) -> dict[str, Any]:
        return {
            "kind": "orthoverify-bench",
            "started": started,
            "seconds": clock() - t0,
            "quick": quick,
            "repeats": repeats,
            "clock": sample_clock,
            "complete": done == len(chosen),
            "cases_done": done,
            "cases": len(chosen),
            "environment": environment,
            "results": [r.to_json() for r in rows],
            "skipped": skipped,
            "noisy": [f"{r.case} [{_params(r)}] {r.impl} vs {r.baseline}" for r in rows if r.noisy],
        }

    for k, case in enumerate(chosen, start=1):
        if progress:
            timing = _timing(clock() - t0, k - 1, len(chosen))
            progress(f"[{k}/{len(chosen)}] {case.name}: {case.description}  ({timing})")
        if device not in case.devices:
            skipped.append({"case": case.name, "why": f"not run on {device}"})
        else:
            with sampled_by(sample_clock):
                rows.extend(_run_case(case, ctx, repeats, skipped, progress))
        if save is not None:
            save(document(k))
    return document(len(chosen))


def _run_case(
    case: BenchCase,
    ctx: BenchContext,
    repeats: int,
    skipped: list[dict[str, str]],
    progress: Callable[[str], None] | None,
) -> list[BenchResult]:
    """The rows of one case over its repeats (none when it skips itself), each printed."""
    runs: list[list[BenchResult]] = []
    try:
        for _ in range(repeats):
            runs.append(case.fn(ctx))
    except SkipCase as exc:
        skipped.append({"case": case.name, "why": str(exc)})
        if progress:
            progress(f"  skipped: {exc}")
        return []
    got = merge_repeats(runs)
    for r in got:
        r.device_name = r.device_name or _gpu_name(ctx.device)
    for r in got:
        if progress:
            progress("  " + format_row(r))
            if r.noisy:
                progress("  " + noisy_warning(r))
    return got


def _timing(elapsed: float, done: int, total: int) -> str:
    """``12s elapsed, about 40s left``: the estimate is the mean time of the cases done so far
    times the cases left (rough: cases differ), none before the first case ends."""
    text = f"{duration_text(elapsed)} elapsed"
    if done and done < total:
        text += f", about {duration_text(elapsed / done * (total - done))} left"
    return text



def _gpu_name(device: str) -> str | None:
    """The CUDA device's name for rows timed on it (None on the CPU)."""
    if device != "cuda":
        return None
    import torch

    return str(torch.cuda.get_device_name(torch.cuda.current_device()))


def noisy_warning(r: BenchResult) -> str:
    """The warning printed under a noisy row."""
    lo, _m, hi = (r.spread or {}).get("ratio", [r.ratio, r.ratio, r.ratio])
    return (
        f"WARNING: too noisy to trust: over {r.repeats} repeats the ratio ranged {lo:.3g} to {hi:.3g} "
        f"(or a time moved by more than {NOISY_SPREAD}x); rerun on a quiet machine"
    )


class SkipCase(Exception):
    """Raised by a case that cannot run here (a missing optional package, no GPU)."""


def _params(r: BenchResult) -> str:
    return " ".join(f"{k}={v}" for k, v in r.params.items())


def format_row(r: BenchResult) -> str:
    """One line: case, parameters, times and the ratio (medians), with the ratio's range over the
    repeats."""
    mem = f"  peak {r.peak_bytes / 2**20:.2f} MiB" if r.peak_bytes is not None else ""
    if r.ops is not None:
        mem += f"  ops {r.ops}" + (f" vs {r.baseline_ops}" if r.baseline_ops is not None else "")
    if r.device_name:
        mem += f"  on {r.device_name}"
    spread = ""
    if r.spread is not None:
        lo, _m, hi = r.spread["ratio"]
        spread = f" (min {lo:.3g}, max {hi:.3g} over {r.repeats} repeats)"
    return (
        f"{r.case} [{_params(r)}] {r.impl} {r.seconds * 1e3:.3f} ms vs {r.baseline} "
        f"{r.baseline_seconds * 1e3:.3f} ms: ratio {r.ratio:.3g}{spread}{mem}"
    )


def write_bench_json(doc: dict[str, Any], path: str | os.PathLike[str]) -> str:
    """Write the document (creating folders) atomically and return the path."""
    p = os.fspath(path)
    _atomic.write_text(p, json.dumps(doc, indent=1, allow_nan=True) + "\n")
    return p
