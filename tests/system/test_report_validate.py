"""The report of an ``orthoverify validate`` run: per check, a figure of the error (test ratio)
against parameter size, drawn from the series its evidence records, in the self-contained HTML
and referenced from the Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from orthoverify.report import render_report
from orthoverify.tolerance import THRESHOLD

CHECK = "conformance.householder-product."


def _claim(name: str, series: list[dict[str, Any]], verdict: str = "verified") -> dict[str, Any]:
    evidence = [
        {
            "check": name,
            "method": "float",
            "backend": f"torch-{dtype}-cpu",
            "cases": len(s["points"]),
            "worst_ratio": 1.0,
            "threshold": THRESHOLD,
            "seconds": 0.1,
            "passed": verdict == "verified",
            "refutes": verdict == "refuted",
            "notes": "",
            "error": None,
            "data": {"series": s, "mode": f"mode of {name}"},
        }
        for dtype, s in zip(("float64", "float32"), series, strict=False)
    ]
    return {
        "id": CHECK + name,
        "paper": "conformance",
        "where": "torch-householder-product",
        "statement": f"the {name} check",
        "kind": "identity",
        "corrects": None,
        "verdict": verdict,
        "methods": ["float"],
        "worst_ratio": 1.0,
        "worst_ratio_threshold": THRESHOLD,
        "evidence": evidence,
        "counterexample": None,
        "notes": "",
    }


def _result(tmp_path: Path, claims: list[dict[str, Any]]) -> Path:
    data = {
        "orthoverify": "0.1.0",
        "schema": 1,
        "profile": "quick",
        "seed": 0,
        "environment": {},
        "workers": 1,
        "executor": "serial",
        "backends": ["torch-float64", "torch-float32"],
        "started": "2026-11-25T10:00:00+00:00",
        "seconds": 1.0,
        "summary": {},
        "claims": claims,
    }
    path = tmp_path / "validate.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _svgs(html: str) -> dict[str, str]:
    """The inline SVG of each figure of the HTML, by figure id."""
    return dict(re.findall(r'<figure id="(fig-series-[^"]+)">(<svg.*?</svg>)', html, re.S))


def test_each_check_with_a_series_gets_its_figure_with_axes_threshold_and_every_point(tmp_path: Path) -> None:
    by_size = {
        "x": "max|x_ij|",
        "y": "ratio",
        "points": [[1e-3, 0.5], [1.0, 2.0], [1e3, 40.0], [0.0, 1.0], [1e8, -1.0], [10.0, 0.0], [1e-310, 0.7]],
    }
    by_n = {"x": "n", "y": "ratio", "points": [[2, 0.25], [4, 1.5], [8, 3.0]]}
    claims = [
        _claim("orthogonal", [by_size, {"x": "max|x_ij|", "y": "ratio", "points": [[0.5, 1.0], [50.0, 2.0]]}]),
        _claim("second_ff", [by_n]),
        _claim("side_effects", []),  # no series: no figure
    ]
    out = tmp_path / "out"
    render_report([_result(tmp_path, claims)], out_dir=out, name="v")
    html = (out / "v.html").read_text(encoding="utf-8")
    md = (out / "v.md").read_text(encoding="utf-8")
    figs = _svgs(html)
    assert set(figs) == {
        "fig-series-conformance-householder-product-orthogonal",
        "fig-series-conformance-householder-product-second-ff",
    }
    orth = figs["fig-series-conformance-householder-product-orthogonal"]
    assert "x axis: max|x_ij| (parameter magnitude); y axis: test ratio (error / allowance); log scale on x, y" in orth
    # float64: 7 cases, of which x = 0 (log axis), ratio -1 (a failed call), ratio 0 and a subnormal
    # magnitude (told in the caption: it would squash the axis) are not drawn
    assert "Series orthogonal [torch-float64-cpu]: 3 points" in orth and "(4 not shown)" in orth
    assert "Series orthogonal [torch-float32-cpu]: 2 points" in orth
    assert f"Reference line threshold {THRESHOLD:g} at y = {THRESHOLD:g}" in orth
    second = figs["fig-series-conformance-householder-product-second-ff"]
    assert "x axis: n (matrix size)" in second and "Series second_ff [torch-float64-cpu]: 3 points" in second
    assert "log scale on y." in second  # n from 2 to 8: a linear x axis
    assert "1 failed call(s)" in html and "1 exact result(s) (ratio 0), 1 case(s) of size 0" in html
    assert "1 case(s) at magnitudes beyond 1e-30 to 1e+30 (subnormal and near-overflow special points)" in html
    assert "<summary>Figure: test ratio against max|x_ij|</summary>" in html
    assert "The figures are each with its claim below (2 claims" in html and "no data for figures" not in md
    assert "<img" not in html and 'src="' not in html  # self-contained: figures inline
    for ident in figs:  # the Markdown references each figure, written beside it
        assert f"(v-figures/{ident}.svg)" in md
        assert (out / "v-figures" / f"{ident}.svg").read_text(encoding="utf-8").startswith(figs[ident][:200])


@pytest.mark.slow
def test_a_quick_validate_run_draws_one_figure_per_measured_check(tmp_path: Path) -> None:
    """torch-householder-product on the quick profile (about 5 s): every check whose evidence
    records a series has its figure, with as many points drawn or counted as cases recorded."""
    from orthoverify.conformance import validate
    from orthoverify.engine import write_json

    r = validate("torch-householder-product", profile="quick", dtypes=["float64"])
    path = tmp_path / "v.json"
    write_json(r, path)
    render_report([path], out_dir=tmp_path / "out", name="v")
    figs = _svgs((tmp_path / "out" / "v.html").read_text(encoding="utf-8"))
    with_series = {c.claim.id: c.evidence[0].data["series"] for c in r.claims if "series" in c.evidence[0].data}
    assert {"orthogonal", "forward", "gradient", "second_ff"} <= {k.rsplit(".", 1)[1] for k in with_series}
    assert len(figs) == len(with_series)
    for cid, s in with_series.items():
        svg = figs["fig-series-" + cid.replace(".", "-").replace("_", "-")]
        if "[torch-float64-cpu]: no points shown" in svg:  # every ratio 0 (bitwise equal) or a failed call
            assert all(y in (0.0, -1.0) for _x, y in s["points"]), cid
            continue
        m = re.search(r"\[torch-float64-cpu\]: (\d+) points?(.*?)Reference line", svg, re.S)
        assert m is not None, cid
        dropped = re.search(r"\((\d+) not shown\)", m.group(2))
        assert int(m.group(1)) + (int(dropped.group(1)) if dropped else 0) == len(s["points"]), cid
        assert ("max|x_ij| (parameter magnitude)" if s["x"] == "max|x_ij|" else "n (matrix size)") in svg


def test_a_validate_counterexample_replays_on_its_target_quoted_and_escaped(tmp_path: Path) -> None:
    """The replay line of a validate finding names the target (replay runs a validate counterexample
    only on a target given on its command line), shell-quoted and, in the HTML, escaped."""
    claim = _claim("orthogonal", [{"x": "n", "y": "ratio", "points": [[2, 40.0]]}], verdict="refuted")
    claim["where"] = "evil:f'; rm -rf ~ #<script>"
    claim["counterexample"] = {
        "inputs": {"X": [[1.0]], "dtype": "float64"},
        "quantity": "orthogonal",
        "value": "ratio 40",
        "precision_digits": 16,
        "check": "orthogonal",
        "threshold": THRESHOLD,
    }
    out = tmp_path / "out"
    render_report([_result(tmp_path, [claim, _claim("forward", [])])], out_dir=out, name="v")
    html = (out / "v.html").read_text(encoding="utf-8")
    md = (out / "v.md").read_text(encoding="utf-8")
    quoted = "--target 'evil:f'\"'\"'; rm -rf ~ #<script>'"
    assert "orthoverify replay" in md and quoted in md  # inside a fenced block: shown literally
    assert "--target &#x27;evil:f&#x27;&quot;&#x27;&quot;&#x27;; rm -rf ~ #&lt;script&gt;&#x27;" in html
    assert "<script>" not in html and "Replay it on the target" in html
