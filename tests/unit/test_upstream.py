"""The expected-failure semantics of tests/upstream.py: a known upstream defect that still shows
passes silently, one that stopped showing is reported as "fixed upstream" (a skip naming the
defect), and neither hides a refutation the table does not list."""

from __future__ import annotations

import pytest

from tests.upstream import DEFECTS, expected_upstream, fixed_upstream, skip_if_fixed_upstream


def test_the_table_is_well_formed() -> None:
    for d in DEFECTS:
        assert d.operation and d.reference and d.seen_in and d.shows
        assert all(checks for checks in d.shows.values())
    assert expected_upstream("torch-orthogonal-cayley")["second_ff"].reference == "pytorch/pytorch#196695"
    assert set(expected_upstream("torch-orthogonal-householder")) == {
        "orthogonal",
        "weight_decay",
        "second_ff",
        "second_ff_float32",
    }
    assert expected_upstream("orthoverify-householder") == {}


def test_a_defect_that_still_shows_is_silent() -> None:
    verdicts = {"second_ff": "refuted", "output": "verified"}
    assert fixed_upstream("torch-orthogonal-cayley", verdicts) == []
    skip_if_fixed_upstream([])  # no skip


def test_a_defect_that_stopped_showing_is_reported_fixed_upstream() -> None:
    fixed = fixed_upstream("torch-orthogonal-cayley", {"second_ff": "verified"})
    assert len(fixed) == 1 and "pytorch/pytorch#196695" in fixed[0] and "second_ff is now verified" in fixed[0]
    with pytest.raises(pytest.skip.Exception, match="fixed upstream: pytorch/pytorch#196695"):
        skip_if_fixed_upstream(fixed)


def test_a_check_the_run_did_not_plan_is_not_reported_fixed() -> None:
    """A float64-only run plans no second_ff_float32: that is no evidence the defect went away."""
    assert fixed_upstream("torch-orthogonal-cayley", {"second_ff": "refuted"}) == []


def test_an_unlisted_refutation_is_not_excused() -> None:
    """The table excuses only the checks it lists: another refuted check stays a failure for the caller."""
    refuted = {"second_ff", "output"}
    assert refuted - set(expected_upstream("torch-orthogonal-cayley")) == {"output"}
