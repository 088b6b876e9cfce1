"""Conformance's scans on the engine's (engine/scan.py): a dtype whose ``output`` check failed is not
run, never passed, and the ``float32`` check (which compares against float64) needs float64's output too."""

from __future__ import annotations

from orthoverify.conformance import search
from orthoverify.conformance.context import blocked, output_failed, session
from orthoverify.conformance.quantities import q_float32, q_orthogonal
from orthoverify.conformance.target import load_target


def test_a_dtype_whose_output_failed_is_not_run_and_float32_needs_float64() -> None:
    t = load_target("tests.planted.conformance_targets:householder", "householder-product")
    ctx = session(t, ("float32", "float64"), profile="quick", failed_output={"float64": "NaN at n = 2"})
    assert output_failed(ctx, "float32") is None
    assert output_failed(ctx, "float32", "float64") == "the output check failed in float64 (NaN at n = 2)"
    evs = search.scan(ctx, "float32", q_float32, search.sized_cases(ctx, "float32", scales=(1.0,)))
    assert len(evs) == 2 and all(not e.passed and e.worst_ratio is None and e.data["not_run"] > 0 for e in evs)
    assert all("cases (the output check failed in float64 (NaN at n = 2)); no verdict" in e.notes for e in evs)
    cases = search.sized_cases(ctx, "orthogonal", scales=(1.0,), dtypes=("float32",))
    (ok,) = search.scan(ctx, "orthogonal", q_orthogonal, cases)
    assert ok.passed and ok.cases > 0 and "not_run" not in ok.data
    stop = blocked(ctx, "coverage", "float64")
    assert stop is not None and stop.notes == "Not run: the output check failed in float64 (NaN at n = 2)."
    assert blocked(ctx, "coverage", "float32") is None
