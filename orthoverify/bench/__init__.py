"""``orthoverify bench``: speed and memory as ratios against baselines measured in the same run."""

from orthoverify.bench.core import (
    BenchCase,
    BenchContext,
    BenchResult,
    SkipCase,
    all_cases,
    bench_case,
    run_bench,
    select_cases,
    write_bench_json,
)

__all__ = [
    "BenchCase",
    "BenchContext",
    "BenchResult",
    "SkipCase",
    "all_cases",
    "bench_case",
    "run_bench",
    "select_cases",
    "write_bench_json",
]
