"""The engine on planted claims: verdicts come from evidence, counterexamples replay, seeds
reproduce results, and results follow the documented JSON schema."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import pytest

from orthoverify.engine import (
    Counterexample,
    Evidence,
    SerialExecutor,
    decide,
    load_json,
    replay_counterexample,
    replay_from_file,
    run_checks,
    to_json,
    write_json,
)
from orthoverify.engine.registry import Registry
from orthoverify.errors import BackendError, RegistryError
from orthoverify.tolerance import THRESHOLD
from tests.conftest import PLANTED


@pytest.fixture(scope="module")
def planted_result():  # type: ignore[no-untyped-def]
    return run_checks(None, profile="quick", seed=3, workers=1, modules=PLANTED)


def verdicts(result) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.claim.id: c.verdict for c in result.claims}


def test_planted_verdicts(planted_result) -> None:  # type: ignore[no-untyped-def]
    assert verdicts(planted_result) == {
        "planted.true_reflection_orthogonal": "verified",
        "planted.false_reflection_fixes_u": "refuted",
        "planted.false_square": "refuted",
        "planted.rounding_only": "inconclusive",
        "planted.crashes": "error",
    }


def test_true_claim_has_every_evidence_passing(planted_result) -> None:  # type: ignore[no-untyped-def]
    c = next(c for c in planted_result.claims if c.claim.id == "planted.true_reflection_orthogonal")
    assert c.counterexample is None
    backends = {e.backend for e in c.evidence}
    assert {"numpy-float32", "numpy-float64", "torch-float64-cpu", "mpmath-50"} <= backends
    assert all(e.passed and e.worst_ratio is not None and e.worst_ratio <= e.threshold for e in c.evidence)
    assert {e.method for e in c.evidence} == {"float", "high-precision", "search"}


def test_false_claim_counterexample_is_confirmed_and_replays(planted_result) -> None:  # type: ignore[no-untyped-def]
    c = next(c for c in planted_result.claims if c.claim.id == "planted.false_reflection_fixes_u")
    cx = c.counterexample
    assert cx is not None
    # found on every backend; the strongest is recorded: the one found on mpmath-50, confirmed at 100 digits
    assert cx.precision_digits == 100
    found = [e.counterexample for e in c.evidence if e.counterexample is not None]
    assert len(found) > 1 and {f.precision_digits for f in found} == {50, 100}
    assert float(cx.value) > 1e40  # an O(1) discrepancy in units of high-precision eps
    assert set(cx.inputs) == {"n", "u"}
    rep = replay_counterexample(c.claim.id, cx, modules=PLANTED)
    assert rep.reproduced
    assert rep.float64 is not None and rep.float64.ratio > THRESHOLD


def test_symbolic_counterexample_is_exact(planted_result) -> None:  # type: ignore[no-untyped-def]
    c = next(c for c in planted_result.claims if c.claim.id == "planted.false_square")
    cx = c.counterexample
    assert cx is not None and cx.precision_digits == "exact"
    a = float(Fraction(cx.inputs["a"]))  # a rational like "-3/2"
    assert float(cx.value) == pytest.approx(2 * a)
    assert replay_counterexample(c.claim.id, cx, modules=PLANTED).reproduced


def test_rounding_failure_is_not_a_counterexample(planted_result) -> None:  # type: ignore[no-untyped-def]
    c = next(c for c in planted_result.claims if c.claim.id == "planted.rounding_only")
    (ev,) = c.evidence
    assert not ev.passed and ev.counterexample is None
    assert "NOT confirmed" in ev.notes


def test_crash_is_an_error_with_traceback(planted_result) -> None:  # type: ignore[no-untyped-def]
    c = next(c for c in planted_result.claims if c.claim.id == "planted.crashes")
    assert c.verdict == "error"
    assert "planted crash" in (c.evidence[0].error or "")
    assert planted_result.errored


def test_json_schema_and_replay_from_file(planted_result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_json(planted_result, tmp_path / "r.json")
    data = load_json(path)
    for key in ("orthoverify", "profile", "seed", "environment", "claims"):
        assert key in data
    for key in ("python", "numpy", "torch", "mpmath", "sympy", "device"):
        assert key in data["environment"]
    for c in data["claims"]:
        for key in ("id", "paper", "where", "statement", "verdict", "evidence", "counterexample", "notes"):
            assert key in c
        for e in c["evidence"]:
            for key in ("method", "backend", "cases", "worst_ratio", "threshold", "seconds", "passed"):
                assert key in e
        if c["counterexample"] is not None:
            for key in ("inputs", "quantity", "value", "precision_digits"):
                assert key in c["counterexample"]
    json.dumps(data, allow_nan=False)  # strict JSON
    rep = replay_from_file(path, "planted.false_reflection_fixes_u", modules=PLANTED)
    assert rep.reproduced


def _stable(result) -> list:  # type: ignore[no-untyped-def]
    out = []
    for c in to_json(result)["claims"]:
        ev = [{k: v for k, v in e.items() if k != "seconds"} for e in c["evidence"]]
        out.append((c["id"], c["verdict"], c["counterexample"], ev))
    return out


def test_same_seed_same_result_across_executors(planted_result) -> None:  # type: ignore[no-untyped-def]
    again = run_checks(None, profile="quick", seed=3, workers=2, modules=PLANTED)
    assert _stable(again) == _stable(planted_result)
    threads = run_checks(None, profile="quick", seed=3, executor=ThreadPoolExecutor(2), modules=PLANTED)
    assert _stable(threads) == _stable(planted_result)


def test_other_seed_other_cases(planted_result) -> None:  # type: ignore[no-untyped-def]
    other = run_checks(["planted.false_reflection_fixes_u"], profile="quick", seed=4, workers=1, modules=PLANTED)
    assert other.claims[0].verdict == "refuted"
    assert other.claims[0].counterexample != planted_result.claims[1].counterexample


def test_selection_by_glob_and_errors() -> None:
    reg = Registry(PLANTED)
    assert [c.id for c in reg.select(["planted.false_*"])] == [
        "planted.false_reflection_fixes_u",
        "planted.false_square",
    ]
    with pytest.raises(RegistryError, match="no claim matches"):
        reg.select(["planted.nothing*"])
    with pytest.raises(RegistryError):
        run_checks(["planted.true_reflection_orthogonal"], profile="nope", modules=PLANTED)


def test_backend_selection_restricts_evidence() -> None:
    r = run_checks(
        ["planted.true_reflection_orthogonal"], profile="quick", backends=["numpy-float64"], workers=1, modules=PLANTED
    )
    assert {e.backend for e in r.claims[0].evidence} == {"numpy-float64"}
    with pytest.raises(BackendError, match="no check of the 1 selected claim"):  # nothing would run: said, not silent
        run_checks(["planted.false_square"], profile="quick", backends=["numpy-float64"], workers=1, modules=PLANTED)


def test_decide_rules() -> None:
    ok = Evidence("c", "k", "float", "b", passed=True)
    bad = Evidence("c", "k", "float", "b", passed=False)
    cx = Evidence("c", "k", "float", "b", passed=False, counterexample=Counterexample({}, "q", "1", 50, "k"))
    err = Evidence("c", "k", "float", "b", passed=False, error="boom")
    assert decide([ok, ok]) == "verified"
    assert decide([ok, bad]) == "inconclusive"
    assert decide([ok, cx]) == "refuted"
    assert decide([cx, err]) == "error"
    assert decide([]) == "inconclusive"


def test_serial_executor_runs_in_process() -> None:
    fut = SerialExecutor().submit(lambda x: x + 1, 1)
    assert fut.result() == 2


def test_confirmation_modes_distinguish_maths_from_rounding() -> None:
    """An unstable formula's float failure is no counterexample to an exact statement ("value":
    the discrepancy shrinks with the precision) but is one to a floating-point statement
    ("ratio": the test ratio stays large in 50-digit arithmetic)."""
    import dataclasses

    from orthoverify.backends import get_backend
    from orthoverify.claims.householder import algorithm2_float
    from orthoverify.engine import PropertyCheck, RunContext, get_profile

    check = PropertyCheck(
        "near_aligned",
        algorithm2_float.q_algorithm2_printed,
        algorithm2_float.cases_near_aligned,
        ("numpy-float64",),
        "ratio",
    )
    ctx = RunContext("x", "near_aligned", get_backend("numpy-float64"), get_profile("quick"), 0)
    as_exact_claim = check.run(ctx)
    assert not as_exact_claim.passed and as_exact_claim.counterexample is None
    assert "NOT confirmed" in as_exact_claim.notes
    as_float_claim = dataclasses.replace(check, confirm="ratio").run(ctx)
    assert as_float_claim.counterexample is not None
    assert as_float_claim.counterexample.precision_digits == 50


def test_search_does_not_depend_on_loaded_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis mixes literals of loaded local modules into generation; the engine's searches
    must not, or a seed would give different cases in different worker histories."""
    import dataclasses
    import importlib
    import sys

    from orthoverify.backends import get_backend
    from orthoverify.engine import RunContext, SearchCheck, get_profile
    from tests.planted import planted_claims as pc

    seen: list[list[str]] = []

    def recording(b, case):  # type: ignore[no-untyped-def]
        seen[-1].append(repr(case))
        return pc.q_true(b, case)

    check = SearchCheck("search", recording, pc.strategy_u, ("numpy-float64",), "ratio")
    ctx = RunContext("x", "search", get_backend("numpy-float64"), get_profile("quick"), 11)
    seen.append([])
    check.run(ctx)
    (tmp_path / "many_constants.py").write_text("VALUES = [" + ", ".join(str(v / 7) for v in range(1, 400)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("many_constants")
    try:
        seen.append([])
        dataclasses.replace(check).run(ctx)
    finally:
        sys.modules.pop("many_constants", None)
    assert seen[0] == seen[1]


def test_scans_record_ratios_by_size_for_the_figures(planted_result) -> None:  # type: ignore[no-untyped-def]
    true = next(c for c in planted_result.claims if c.claim.id == "planted.true_reflection_orthogonal")
    ev = next(e for e in true.evidence if e.check == "float" and e.backend == "numpy-float64")
    rows = ev.data["by_n"]
    assert [r[0] for r in rows] == [2, 3, 5] and all(r[1] == 3 for r in rows)  # n, cases
    assert max(r[2] for r in rows) == ev.worst_ratio and all(r[3] <= r[2] for r in rows)  # worst, median
    search = next(e for e in true.evidence if e.check == "search")
    assert sum(r[1] for r in search.data["by_n"]) == search.cases


def test_case_size_and_stats() -> None:
    import numpy as np

    from orthoverify.engine.checks import CaseLog, case_size
    from orthoverify.engine.ratios import Measure

    assert case_size({"n": 4, "u": np.zeros(9)}) == 4
    assert case_size({"A": np.zeros((3, 5)), "family": "x", "k": 2}) == 5
    assert case_size({"family": "x"}) is None
    log = CaseLog()
    log.add({"A": np.zeros((2, 2))}, Measure(1.0, stats={"max|a_ij|": 0.5}))
    log.add({"A": np.zeros((2, 2))}, Measure(float("nan")))
    log.add({"A": np.zeros((4, 4))}, Measure(3.0))
    data = log.data()
    assert data["stats"] == {"max|a_ij|": [[2, 0.5]]}
    assert data["by_n"][0][:2] == [2, 2] and np.isnan(data["by_n"][0][2])  # NaN counts as the worst
    assert data["by_n"][1] == [4, 1, 3.0, 3.0]


def test_strongest_counterexample_is_recorded() -> None:
    """Every counterexample stays in its evidence; the claim records exact before more digits
    before fewer, then the smallest, then the first found."""
    from orthoverify.engine.model import Counterexample
    from orthoverify.engine.runner import strongest

    def cx(digits: int | str, inputs: dict[str, object]) -> Counterexample:
        return Counterexample(inputs, "q", "1", digits, "c")  # type: ignore[arg-type]

    n2_100 = cx(100, {"A": [["1", "2"], ["3", "4"]]})
    n1_exact = cx("exact", {"A": [["1"]]})
    n2_exact = cx("exact", {"A": [["1", "0"], ["0", "1"]]})
    n1_50 = cx(50, {"A": [["0.5"]]})
    assert strongest([n2_100, n2_exact, n1_exact]) is n1_exact
    assert strongest([n1_50, n2_100]) is n2_100
    assert strongest([cx(50, {"n": "3"}), cx(50, {"n": "2"})]).inputs == {"n": "3"}  # same size: first found
    assert strongest([cx(16, {"u": ["1", "2"]}), cx(16, {"u": ["1"]})]).inputs == {"u": ["1"]}
    assert strongest([]) is None


def test_every_counterexample_is_kept_in_the_json(planted_result) -> None:  # type: ignore[no-untyped-def]
    from orthoverify.engine.result import claim_json

    c = next(c for c in planted_result.claims if c.claim.id == "planted.false_reflection_fixes_u")
    entry = claim_json(c)
    kept = [e["counterexample"] for e in entry["evidence"] if e["refutes"]]
    assert len(kept) == sum(e.counterexample is not None for e in c.evidence) > 1
    assert entry["counterexample"] in kept
    assert all("counterexample" not in e for e in entry["evidence"] if not e["refutes"])
