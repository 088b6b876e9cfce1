"""Benchmark cases, their results, and running a selection of them.

A case is a named function that measures one implementation against a baseline measured in the
same run (timed in turns, see :mod:`orthoverify.bench.timing`) and returns one
:class:`BenchResult` per parameter setting. Cases register with :func:`bench_case`; their
modules are listed in :data:`CASE_MODULES` and imported on first use.
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

    def __post_init__(self) -> None:
        if math.isnan(self.ratio) and self.seconds > 0:
            self.ratio = self.baseline_seconds / self.seconds

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: v for k, v in d.items() if v is not None and v != {}}


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
) -> dict[str, Any]:
    """Run the selected cases and return the JSON document (``results`` holds every row)."""
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be cpu or cuda, got {device!r}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("--device cuda asked for, but torch.cuda.is_available() is False")
    ctx = BenchContext(device=device, quick=quick, budget_s=budget_s)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rows: list[BenchResult] = []
    skipped: list[dict[str, str]] = []
    t0 = time.perf_counter()
    for case in select_cases(globs):
        if device not in case.devices:
            skipped.append({"case": case.name, "why": f"not run on {device}"})
            continue
        if progress:
            progress(f"{case.name}: {case.description}")
        try:
            got = case.fn(ctx)
        except SkipCase as exc:
            skipped.append({"case": case.name, "why": str(exc)})
            if progress:
                progress(f"  skipped: {exc}")
            continue
        for r in got:
            if progress:
                progress("  " + format_row(r))
        rows.extend(got)
    return {
        "kind": "orthoverify-bench",
        "started": started,
        "seconds": time.perf_counter() - t0,
        "quick": quick,
        "environment": _environment(device),
        "results": [r.to_json() for r in rows],
        "skipped": skipped,
    }


class SkipCase(Exception):
    """Raised by a case that cannot run here (a missing optional package, no GPU)."""


def format_row(r: BenchResult) -> str:
    """One line: case, parameters, times and the ratio."""
    params = " ".join(f"{k}={v}" for k, v in r.params.items())
    mem = f"  peak {r.peak_bytes / 2**20:.2f} MiB" if r.peak_bytes is not None else ""
    return (
        f"{r.case} [{params}] {r.impl} {r.seconds * 1e3:.3f} ms vs {r.baseline} "
        f"{r.baseline_seconds * 1e3:.3f} ms: ratio {r.ratio:.3g}{mem}"
    )


def write_bench_json(doc: dict[str, Any], path: str | os.PathLike[str]) -> str:
    """Write the document (creating folders) atomically and return the path."""
    from orthoverify import _atomic

    p = os.fspath(path)
    _atomic.write_text(p, json.dumps(doc, indent=1, allow_nan=True) + "\n")
    return p
