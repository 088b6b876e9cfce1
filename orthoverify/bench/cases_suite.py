"""Benchmark cases of the whole theorem-check suite (see :mod:`orthoverify.bench.core`).

The suite's wall time depends on the machine as much as on orthoverify, so each case measures a
fixed reference workload in the same run, the *machine unit* (``UNIT_REPS`` NumPy float64
512 x 512 matrix products, BLAS's default threads), as its baseline: ``ratio = unit seconds /
suite seconds``, and ``extra["machine_units"] = 1 / ratio`` is the suite's time in machine units,
comparable across machines. The checks run in this process through
:func:`~orthoverify.engine.runner.run_checks` with the local executor (a process pool).

- ``suite.profile.quick`` / ``.default`` / ``.thorough``: every registered claim on that profile;
- ``suite.family``: one row per claim family (claims module: householder, cayley, svd, unitary, ...)
  on the quick profile.

Each reruns the whole suite (minutes), so they run only when a glob names them (``orthoverify
bench 'suite.*'``), never in the default selection or a ``--quick`` smoke run.

``extra`` holds the verdict counts and the number of claims and tasks.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from orthoverify.bench.core import BenchContext, BenchResult, bench_case
from orthoverify.claims import MODULES
from orthoverify.engine.runner import run_checks

UNIT_N = 512
UNIT_REPS = 8
UNIT_SAMPLES = 5
UNIT = f"machine unit: {UNIT_REPS} numpy float64 {UNIT_N}x{UNIT_N} matmuls"
SEED = 0

WORKERS: int | None = None
"""Processes of the local executor (None: the CPU count)."""

FAMILY_MODULES: Sequence[str] | None = None
"""Claims modules timed by ``suite.family`` (None: orthoverify's own, ``MODULES``)."""


def machine_unit() -> tuple[float, int]:
    """Median seconds of the reference workload over ``UNIT_SAMPLES`` samples, and the sample count."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((UNIT_N, UNIT_N))
    b = rng.standard_normal((UNIT_N, UNIT_N))
    a @ b  # warm up BLAS
    samples = []
    for _ in range(UNIT_SAMPLES):
        t0 = time.perf_counter()
        for _ in range(UNIT_REPS):
            a @ b
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), len(samples)


def _run(
    ctx: BenchContext, case: str, profile: str, modules: Sequence[str], label: str, params: dict[str, Any]
) -> BenchResult:
    """Time one run of the checks of ``modules`` against the machine unit measured just before it."""
    unit, samples = machine_unit()
    t0 = time.perf_counter()
    result = run_checks(None, profile=profile, seed=SEED, device=ctx.device, workers=WORKERS, modules=modules)
    seconds = time.perf_counter() - t0
    tasks = sum(len(c.evidence) for c in result.claims)
    return BenchResult(
        case=case,
        params={**params, "profile": profile, "workers": result.workers},
        impl=label,
        baseline=UNIT,
        seconds=seconds,
        baseline_seconds=unit,
        extra={
            "machine_units": seconds / unit,
            "verdicts": result.counts(),
            "claims": len(result.claims),
            "tasks": tasks,
            "unit_samples": samples,
        },
    )


def _profile_case(profile: str) -> None:
    """Register ``suite.profile.<profile>``."""

    def run(ctx: BenchContext) -> list[BenchResult]:
        label = f"orthoverify check --profile {profile}"
        return [_run(ctx, f"suite.profile.{profile}", profile, MODULES, label, {})]

    bench_case(
        f"suite.profile.{profile}",
        f"every claim on the {profile} profile (local process pool), timed in machine units: "
        f"ratio = unit / suite seconds ({UNIT}); extra: verdict counts",
        in_default=False,
    )(run)


for _profile in ("quick", "default", "thorough"):
    _profile_case(_profile)


@bench_case(
    "suite.family",
    "wall time of each claim family (householder, cayley, svd, unitary, ...) on the quick profile, in machine "
    f"units: ratio = unit / family seconds ({UNIT}); extra: verdict counts",
    in_default=False,
)
def family(ctx: BenchContext) -> list[BenchResult]:
    """One row per claims module, in registry order."""
    rows = []
    for module in FAMILY_MODULES if FAMILY_MODULES is not None else MODULES:
        name = module.rsplit(".", 1)[-1]
        rows.append(_run(ctx, "suite.family", "quick", (module,), f"{name} claims", {"family": name}))
    return rows
