"""The engine's scans of measured code (engine/scan.py): per-dtype tallies of statuses, the telling
counterexample, the size series, and the smallest failing case of a recorded check. The code
under test here is a toy: its measure is a function of the case, planted to fail where a test says."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orthoverify.engine import scan as sc
from orthoverify.engine.magnitudes import magnitude
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import Measure

Case = dict[str, np.ndarray]


def _case(n: int, m: float) -> Case:
    a = np.full((n, n), m)
    return {"A": a}


def _scan(measure: Any, **kw: Any) -> sc.Scan[Case]:
    return sc.Scan(
        check="toy",
        measure=measure,
        backend=lambda dtype: f"toy-{dtype}-cpu",
        magnitude=lambda c: magnitude(c, ["A"]),
        size=lambda c: int(c["A"].shape[0]),
        extreme=lambda c: not (1e-6 <= magnitude(c, ["A"]) <= 1e6),
        where=lambda c: f"at max|x_ij| = {magnitude(c, ['A']):.3g}, n = {c['A'].shape[0]}",
        inputs=lambda c, dtype: {"A": c["A"].tolist(), "dtype": dtype},
        domain="max|A| in [1e-06, 1e+06]",
        **kw,
    )


def _ratio_is_n(c: Case, dtype: str) -> Measure:
    """A planted defect: the ratio is 10 n (fails from n = 4 on)."""
    n = c["A"].shape[0]
    return Measure(10.0 * n, f"ratio {10.0 * n:g}")


def test_the_telling_failure_is_ordinary_small_and_a_draw_before_a_special_point() -> None:
    cases = [
        (_case(8, 1e9), "float64", ""),  # extreme: sorts last
        (_case(6, 1.0), "float64", "special"),
        (_case(6, 1.0), "float64", ""),
        (_case(5, 1e3), "float64", ""),
        (_case(2, 1.0), "float64", ""),  # passes
        (_case(7, 1.0), "float32", ""),
    ]
    ev64, ev32 = sc.scan(_scan(_ratio_is_n), cases)
    assert (ev64.backend, ev32.backend) == ("toy-float64-cpu", "toy-float32-cpu")
    assert ev64.cases == 5 and ev64.worst_ratio == 80.0 and not ev64.passed
    cx = ev64.counterexample
    assert cx is not None and cx.precision_digits == 16 and len(cx.inputs["A"]) == 6 and cx.inputs["dtype"] == "float64"
    assert cx.value == "at max|x_ij| = 1, n = 6: ratio 60."
    others = ev64.data["other_counterexamples"]
    # the special point (by its label), then failures two decades or more apart in magnitude
    assert [(o["max_abs"], o["label"]) for o in others] == [(1.0, "special"), (1e3, ""), (1e9, "")]
    assert "fragile" not in ev64.data
    assert ev32.counterexample is not None and ev32.counterexample.precision_digits == 7
    assert ev64.data["series"]["x"] == "max|x_ij|" and ev32.data["series"] == {
        "x": "n",
        "y": "ratio",
        "points": [[7.0, 70.0]],
    }


def test_a_failure_only_outside_the_ordinary_domain_is_fragile() -> None:
    ev = sc.scan(_scan(_ratio_is_n), [(_case(2, 1.0), "float64"), (_case(4, 1e-9), "float64")])[0]
    assert ev.counterexample is not None and ev.data["fragile"].endswith("(max|A| in [1e-06, 1e+06])")
    assert ev.notes.startswith("Fragile:")


def test_statuses_are_tallied_and_never_pass() -> None:
    def measure(c: Case, dtype: str) -> Measure:
        n = c["A"].shape[0]
        return {
            1: Measure(math.nan, "never sent", status="not-run"),
            2: Measure(math.nan, "beyond", status="beyond"),
            3: Measure(math.inf, "raised", status="raised"),
            4: Measure(math.nan, "declined", status="raised", unsupported="NotImplementedError"),
        }.get(n, Measure(1.0))

    s = _scan(measure, outside=lambda c: c["A"].shape[0] == 9, allowance="1 + ||A||")
    cases = [(_case(n, 1.0), "float64", "edge" if n == 3 else "") for n in (1, 2, 3, 4, 5, 9)]
    ev = sc.scan(s, cases)[0]
    assert ev.cases == 1 and not ev.passed and ev.counterexample is None
    assert (
        ev.data["not_run"] == 1
        and ev.data["unsupported"] == "NotImplementedError"
        and ev.data["allowance"] == "1 + ||A||"
    )
    for words in (
        "Unsupported",
        "divided by the allowance 1 + ||A||",
        "1 cases outside",
        "promises no digit",
        "'edge'",
        "Not run: 1",
    ):
        assert words in ev.notes
    blocked = sc.scan(_scan(measure, blocked=lambda dtype: "the output failed"), [(_case(5, 1.0), "float64")])[0]
    assert (
        not blocked.passed
        and blocked.worst_ratio is None
        and blocked.notes.endswith("(the output failed); no verdict from them.")
    )
    nan = sc.scan(_scan(lambda c, d: Measure(math.nan, "no batches")), [(_case(5, 1.0), "float64")])[0]
    assert not nan.passed and nan.worst_ratio is None and "Not applicable" in nan.notes


def test_a_shrunk_special_point_says_where_it_was_found() -> None:
    def shrink(c: Case, dtype: str, m: Measure) -> tuple[Case, Measure, list[str]]:
        return _case(4, 1.0), _ratio_is_n(_case(4, 1.0), dtype), ["size 4"]

    ev = sc.scan(_scan(_ratio_is_n, shrink=shrink), [(_case(6, 1.0), "float64", "corner")])[0]
    assert ev.counterexample is not None and len(ev.counterexample.inputs["A"]) == 4
    assert "(shrunk: found at the special point 'corner', size 4)" in ev.counterexample.value


def test_a_failure_that_could_not_be_measured_is_no_counterexample() -> None:
    ev = Evidence(claim="", check="toy", method="float", backend="toy-float64-cpu")
    sc.counterexample(_scan(_ratio_is_n), "float64", [(_case(4, 1.0), Measure(math.nan, "lost"), "")], ev)
    assert ev.counterexample is None and ev.notes.endswith("lost (not measured)")


def test_the_case_book_keeps_a_case_once_and_the_smallest_failure_replaces_the_counterexample() -> None:
    book = sc.CaseBook()
    for n in (6, 3, 4, 5):  # n = 3 passes (ratio 30)
        book.record("toy", n, 10.0 * n, _case(n, 1.0), "float64")
    book.record("toy", 6, 1.0, _case(6, 1.0), "float64")  # a re-run: the first measurement stands
    book.record("toy", 2, math.inf, _case(2, 1.0), "float32")
    assert len(book["toy"]) == 5

    def inputs(c: Case, dtype: str) -> dict[str, Any]:
        return {"A": c["A"].tolist(), "dtype": dtype}

    ev = Evidence(claim="", check="toy", method="float", backend="toy-float64-cpu")
    ev.counterexample = Counterexample(inputs(_case(6, 1.0), "float64"), "toy", "ratio 60", 16, "toy", 30.0)
    out = sc.with_series(
        book,
        "toy",
        [ev],
        "a mode",
        dtype_of=lambda e: "float64",
        measure=_ratio_is_n,
        inputs=inputs,
        replay="replay it",
    )[0]
    assert out.data["series"]["points"] == [[6.0, 60.0], [3.0, 30.0], [4.0, 40.0], [5.0, 50.0]]
    assert out.data["smallest_failing_n"] == 4 and out.data["replay"] == "replay it" and out.data["mode"] == "a mode"
    assert out.counterexample is not None and len(out.counterexample.inputs["A"]) == 4
    assert "the smallest failing case (n = 4); the worst was ratio 60" in out.notes
    passing = Evidence(claim="", check="toy", method="float", backend="toy-float32-cpu")
    assert sc.with_series(
        book, "toy", [passing], "m", dtype_of=lambda e: "float32", measure=_ratio_is_n, inputs=inputs, replay="r"
    )[0].data["series"]["points"] == [[2.0, -1.0]]
