"""Test configuration: Hypothesis profiles, the CUDA marker and the fast tier.

The fast tier is ``pytest -m "not slow"``: every layer, about a minute on 2 cores. A test is
``slow`` when it is marked so, or when it reads a claim family's quick run (the ``quick``
fixture; see :data:`QUICK_RUN_FIXTURES`). The full suite (CI, ``.ci/run``) runs everything.

Hypothesis loads its own ``ci`` profile (derandomised, no database) when it detects CI (the
CI environment variable); this project adds ``quick`` (the local default: few examples) and
``thorough`` (many examples). Choose one with HYPOTHESIS_PROFILE=thorough (or =ci).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("quick", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):  # in CI, Hypothesis has already loaded its own "ci" profile
    settings.load_profile("quick")

PLANTED = ("tests.planted.planted_claims",)


QUICK_RUN_FIXTURES = ("quick",)
"""Fixtures that read a claim family's quick run (tests/claims/claims_common.quick_run: tens of
seconds per family): a test that requests one is ``slow``, outside the fast tier."""

SLOW_TESTS: tuple[str, ...] = (
    "tests/unit/conformance/test_conformance.py::test_built_in_adapter",
    "tests/unit/conformance/test_conformance.py::test_a_half_precision_finding_is_confirmed_in_its_own_dtype",
    "tests/unit/conformance/test_judge_allowance.py::test_correct_maps_pass_at_every_magnitude[reflections]",
    "tests/unit/conformance/test_judge_allowance.py::test_maps_wrong_at_ordinary_sizes_still_fail[reflections_unnormalised]",
    "tests/unit/conformance/test_judge_isolation.py::test_side_effects_are_findings",
    "tests/unit/conformance/test_judge_isolation.py::test_after_a_timeout_later_calls_still_reach_the_target",
    "tests/unit/conformance/test_reach_modes.py::test_torch_householder_product_is_refuted_on_forward_over_forward",
    "tests/unit/bench/test_bench_householder.py::test_memory_t_recompute_keeps_less_than_store",
    "tests/unit/bench/test_bench_householder.py::test_svd_rows_checked_against_the_dense_product",
    "tests/unit/engine/test_executors.py::test_validate_on_dask_is_identical_to_in_process",
    "tests/unit/engine/test_executors.py::test_lost_worker_is_error_evidence",
    "tests/unit/engine/test_engine.py::test_same_seed_same_result_across_executors",
    "tests/system/test_judge_cli.py::test_exit_status_zero_without_defect_one_with",
    "tests/system/test_judge_cli.py::test_torch_matrix_exp_is_refuted_at_an_ordinary_size_blaming_the_single_call",
    # whole validate runs through the command line, targets that hang, crash or drift until their
    # timeouts, and benchmark cases run whole (the largest items of a fast-tier run of 33cd263)
    "tests/system/test_hostile_containment.py::test_a_target_that_takes_the_json_path_and_leaves_forgers",
    "tests/system/test_hostile_containment.py::test_a_target_hung_in_a_call_dies_with_a_verifier_killed_by_sigkill",
    "tests/unit/conformance/test_judge_isolation.py::test_a_target_that_kills_its_process_is_refuted_with_the_exit_status",
    "tests/unit/conformance/test_judge_isolation.py::test_nondeterminism_drifting_beyond_rounding_is_a_refuted_determinism_not_an_error",
    "tests/unit/conformance/test_judge_isolation.py::test_a_target_that_hangs_everywhere_verifies_nothing",
    "tests/unit/conformance/test_conformance.py::test_cli_exit_statuses_json_report_and_replay",
    "tests/unit/conformance/test_conformance.py::test_a_check_that_does_not_apply_is_inconclusive_not_failed",
    "tests/unit/conformance/test_conformance.py::test_misbehaving_targets_are_recorded_not_raised[tests.planted.conformance_targets:hangs-timeout]",
    "tests/unit/conformance/test_severity.py::test_a_baseline_acknowledges_known_findings_and_still_fails_on_new_ones",
    "tests/unit/conformance/test_severity.py::test_a_forward_defect_failing_seven_checks_is_one_finding_in_the_summary",
    "tests/unit/conformance/test_severity.py::test_a_failure_only_at_subnormal_parameters_is_fragile_and_strict_makes_it_count",
    "tests/unit/bench/test_bench.py::test_quick_cayley_and_unitary",
    "tests/unit/bench/test_bench_householder.py::test_blocks_rows_one_per_block_with_ops",
    "tests/unit/bench/test_bench_householder.py::test_fwd_bwd_rows_at_one_point",
    "tests/unit/engine/test_executors.py::test_dask_run_is_identical_to_a_serial_run",
)
"""Node-id prefixes of tests outside the fast tier besides those marked ``slow`` in their module:
the largest items of a ``-m "not slow" --durations=0`` run (each one a whole validate, judge,
pooled or benchmark run, or a target that waits for its timeout). Each layer keeps faster tests
in the tier (tests/unit/test_fast_tier.py). An
entry that names nothing in a collected module is an error (a renamed test must not silently
rejoin the fast tier)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import torch

    slow = pytest.mark.slow
    matched: set[str] = set()
    for item in items:
        hits = [p for p in SLOW_TESTS if item.nodeid == p or item.nodeid.startswith((p + "[", p + "::"))]
        matched.update(hits)
        if hits or any(name in getattr(item, "fixturenames", ()) for name in QUICK_RUN_FIXTURES):
            item.add_marker(slow)
    whole = not any("::" in arg for arg in config.args)  # modules collected whole, not single tests
    collected = {item.nodeid.split("::")[0] for item in items}
    stale = [p for p in SLOW_TESTS if whole and p.split("::")[0] in collected and p not in matched]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names no collected test: {stale}")
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
