"""Figures a claim declares (engine.model.Plot) travel typed in the result (``claims[].figures``)
and the report draws them from the JSON alone: merged by ident across claims and runs, reference
series after measured ones, a malformed entry skipped, a file without figures drawn without them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from orthoverify.engine.model import Evidence, Plot, PlotRef, PlotSeries
from orthoverify.errors import RegistryError, ReportError
from orthoverify.report.figures import MAX_DECLARED, MAX_VALUES, declared_figures, report_figures
from orthoverify.report.model import load_report


def _rank(evidence: Sequence[Evidence]) -> list[PlotSeries]:
    out = [PlotSeries(f"rank ({e.backend})", e.data["n"], e.data["rank"], "points") for e in evidence if "n" in e.data]
    if out:
        out.append(PlotSeries("n²", [2, 3], [4, 9], "line", reference=True))
    return out


LINE = Plot(
    ident="rank", kind="line", title="Rank", caption="The rank.", x_label="n", y_label="dim", log_y=True, series=_rank
)
HIST = Plot(
    ident="values",
    kind="histogram",
    title="Values",
    caption="Some values.",
    x_label="v",
    y_label="cases",
    bins=(0.0, 0.5, 1.0),
    refs=(PlotRef(1.0, "bound 1", axis="x"),),
    series=lambda evs: [PlotSeries(f"v [{e.backend}]", y=e.data["v"]) for e in evs if "v" in e.data],
)


def _ev(backend: str, **data: Any) -> Evidence:
    return Evidence(claim="x.a", check="c", method="float", backend=backend, passed=True, data=data)


def test_a_plot_reads_its_series_from_the_evidence() -> None:
    got = LINE.to_json([_ev("numpy-float64", n=[2, 3], rank=[4, 9]), _ev("mpmath-50")])
    assert got is not None and got["kind"] == "line" and got["log_y"] is True and got["log_x"] is False
    assert [s["label"] for s in got["series"]] == ["rank (numpy-float64)", "n²"]
    assert got["series"][0] == {
        "label": "rank (numpy-float64)",
        "x": [2.0, 3.0],
        "y": [4.0, 9.0],
        "style": "points",
        "dashed": False,
        "reference": False,
    }
    assert LINE.to_json([_ev("numpy-float64")]) is None  # nothing recorded: no figure
    hist = HIST.to_json([_ev("numpy-float64", v=[0.25, float("inf")])])
    assert hist is not None and hist["series"][0]["y"] == [0.25, "inf"] and hist["refs"][0]["axis"] == "x"


def test_a_plot_declaration_is_checked() -> None:
    with pytest.raises(RegistryError, match="ident"):
        Plot(ident="Bad Ident", kind="line", title="t", caption="c", x_label="x", series=_rank)
    with pytest.raises(RegistryError, match="kind"):
        Plot(ident="ok", kind="pie", title="t", caption="c", x_label="x", series=_rank)  # type: ignore[arg-type]


def _result(tmp_path: Path, name: str, claims: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    entries = [{"statement": "s", "paper": c["id"].split(".")[0], "verdict": "verified", **c} for c in claims]
    path.write_text(json.dumps({"orthoverify": "0", "claims": entries}))
    return path


def test_the_report_draws_what_the_json_declares(tmp_path: Path) -> None:
    a = LINE.to_json([_ev("numpy-float64", n=[2, 3], rank=[4, 8])])
    b = LINE.to_json([_ev("torch-float64", n=[3], rank=[9])])
    h = HIST.to_json([_ev("numpy-float64", v=[0.1, 0.9, 1.0])])
    broken = [{"kind": "pie"}, {"kind": "line", "ident": "odd", "series": [{"y": "text"}, 3]}]
    path = _result(
        tmp_path,
        "run.json",
        [{"id": "p.one", "figures": [a, h]}, {"id": "p.two", "figures": [b, *broken]}, {"id": "p.three"}],
    )
    figs = {f.ident: f for f in declared_figures(load_report([path]))}
    assert set(figs) == {"fig-rank", "fig-values"}  # one figure per ident; the malformed ones are left out
    rank = figs["fig-rank"]
    assert rank.header == ("n", "rank (numpy-float64)", "rank (torch-float64)", "n²")  # the reference last
    assert rank.rows == (("2", "4", "–", "4"), ("3", "8", "9", "9"))
    assert rank.title == "Rank" and rank.caption == "The rank." and "<svg" in rank.svg
    values = figs["fig-values"]
    assert values.rows == (("v [numpy-float64]", "3", "0.1", "0.9", "1"),)
    assert 'class="ov-bar"' in values.svg and "bound 1" in values.svg


def test_two_runs_keep_their_series_apart(tmp_path: Path) -> None:
    a = LINE.to_json([_ev("numpy-float64", n=[2], rank=[4])])
    one = _result(tmp_path, "one.json", [{"id": "p.one", "figures": [a]}])
    two = _result(tmp_path, "two.json", [{"id": "p.one", "figures": [a]}])
    (fig,) = declared_figures(load_report([one, two]))
    assert fig.header == ("n", "rank (numpy-float64) · one", "rank (numpy-float64) · two", "n² · one", "n² · two")


def test_a_result_without_declared_figures_renders_without_them(tmp_path: Path) -> None:
    path = _result(tmp_path, "old.json", [{"id": "p.one", "evidence": []}])
    assert declared_figures(load_report([path])) == []
    assert report_figures(load_report([path])) == []


def test_a_figures_field_that_is_not_a_list_of_objects_is_named(tmp_path: Path) -> None:
    path = _result(tmp_path, "bad.json", [{"id": "p.one", "figures": ["not an object"]}])
    with pytest.raises(ReportError, match=r"claims\[0\]\.figures must be a list of at most 20 objects"):
        load_report([path])


def test_a_crafted_file_is_drawn_within_bounds(tmp_path: Path) -> None:
    """Too many series, values or figures: the rest is left out and the caption says so."""
    many = {
        "ident": "big",
        "kind": "line",
        "series": [{"label": f"s{i}", "x": list(range(1000)), "y": [1.0] * 1000} for i in range(60)],
    }
    others = [
        {"id": f"p.f{i}", "figures": [{"ident": f"f{i}", "kind": "histogram", "series": [{"label": "v", "y": [0.5]}]}]}
        for i in range(60)
    ]
    path = _result(tmp_path, "crafted.json", [{"id": "p.one", "figures": [many]}, *others])
    figs = declared_figures(load_report([path]))
    assert len(figs) == MAX_DECLARED
    big = figs[0]
    assert len(big.header) - 1 == 20 and "Only part of the data is drawn" in big.caption  # 20 series of 1000 values
    assert sum(1 for row in big.rows for cell in row[1:] if cell != "–") == MAX_VALUES
