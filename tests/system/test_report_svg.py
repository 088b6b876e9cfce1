"""Tests of the inline-SVG figures (orthoverify.report.svg): structure, accessibility, axes, notes."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest

from orthoverify.report.svg import RefLine, Series, histogram, line_chart

NS = "{http://www.w3.org/2000/svg}"
NASTY = "a<b & \"c\" 'd' > ‖W‖² ≤ 1"


def parse(svg: str) -> ET.Element:
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    return ET.fromstring(svg)


def ids(root: ET.Element) -> list[str]:
    return [e.attrib["id"] for e in root.iter() if "id" in e.attrib]


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.attrib.get("class") == cls]


def text_of(e: ET.Element) -> str:
    return "".join(e.itertext())


def tick_values(root: ET.Element, cls: str) -> list[float]:
    """Numeric values of tick labels, understanding 10<sup>e</sup> and m×10<sup>e</sup>."""
    out = []
    for e in by_class(root, cls):
        sup = e.find(f"{NS}tspan")
        if sup is None:
            out.append(float(text_of(e)))
        else:
            base = (e.text or "").replace("×10", "")
            mant = float(base) if base not in ("", "10") else 1.0
            out.append(mant * 10.0 ** int((sup.text or "").replace("\u2212", "-")))
    return out


def series_points(root: ET.Element) -> list[int]:
    """Number of vertices drawn per series path (each vertex is one "x,y" pair)."""
    return [e.attrib["d"].count(",") for e in by_class(root, "ov-series")]


def bar_counts(root: ET.Element) -> list[int]:
    counts = []
    for bar in by_class(root, "ov-bar"):
        title = bar.find(f"{NS}title")
        assert title is not None
        m = re.search(r": (\d+) in [\[(]", title.text or "")
        assert m, title.text
        counts.append(int(m.group(1)))
    return counts


def notes(root: ET.Element) -> list[str]:
    return [text_of(e) for e in by_class(root, "ov-note")]


def simple_chart(ident: str = "c1", **kw: object) -> str:
    xs = list(range(1, 11))
    series = [Series("alpha", xs, [x * 0.1 for x in xs]), Series("beta", xs, [x * 0.2 for x in xs], dashed=True)]
    return line_chart(series, ident=ident, title="T", xlabel="x", ylabel="y", **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- structure


def test_root_is_responsive_accessible_svg() -> None:
    svg = simple_chart()
    root = parse(svg)
    assert root.tag == f"{NS}svg"
    assert root.attrib["viewBox"].startswith("0 0 640 ")
    assert root.attrib["width"] == "100%"
    assert "max-width:640px" in root.attrib["style"]
    assert root.attrib["role"] == "img"
    labelled = root.attrib["aria-labelledby"].split()
    assert labelled == ["c1-title", "c1-desc"]
    assert root.find(f"{NS}title").attrib["id"] == "c1-title"  # type: ignore[union-attr]
    assert root.find(f"{NS}desc").attrib["id"] == "c1-desc"  # type: ignore[union-attr]
    assert not svg.startswith("<?xml")
    assert "<style" not in svg and "<script" not in svg
    assert svg.isascii()  # non-ASCII text is written as character references


def test_ids_are_prefixed_unique_and_do_not_collide_between_charts() -> None:
    a = ids(parse(simple_chart("figA")))
    b = ids(parse(histogram({"g": [1, 2, 3]}, ident="figB", title="H", xlabel="v")))
    for prefix, found in (("figA-", a), ("figB-", b)):
        assert found and all(i.startswith(prefix) for i in found)
        assert len(found) == len(set(found))
    assert not set(a) & set(b)
    # Every url(#...) reference points at an id of the same chart.
    svg = simple_chart("figA")
    assert set(re.findall(r"url\(#([^)]+)\)", svg)) <= set(a)


def test_text_is_escaped_and_round_trips() -> None:
    svg = line_chart(
        [Series(NASTY, [1, 2], [3, 4])],
        ident="esc",
        title=NASTY,
        xlabel=NASTY,
        ylabel=NASTY,
        refs=[RefLine(3.5, NASTY)],
    )
    root = parse(svg)
    assert root.find(f"{NS}title").text == NASTY  # type: ignore[union-attr]
    desc = root.find(f"{NS}desc").text or ""  # type: ignore[union-attr]
    assert NASTY in desc and "2 points" in desc
    texts = [text_of(e) for e in root.iter(f"{NS}text")]
    assert texts.count(NASTY) >= 4  # title, x label, y label, legend (ref label too)


def test_desc_summarises_series() -> None:
    root = parse(line_chart([Series("s1", [1, 5, 3], [0.5, 2, 8])], ident="d", title="T", xlabel="x", ylabel="y"))
    desc = root.find(f"{NS}desc").text or ""  # type: ignore[union-attr]
    assert "s1: 3 points, x from 1 to 5, y from 0.5 to 8" in desc


def test_legend_contains_every_label_and_is_below_plot() -> None:
    labels = [f"series number {i} <{i}>" for i in range(10)]
    series = [Series(lab, [0, 1], [i, i + 1]) for i, lab in enumerate(labels)]
    root = parse(line_chart(series, ident="leg", title="T", xlabel="x", ylabel="y", height=300))
    legend = by_class(root, "ov-legend")
    assert len(legend) == 1
    legend_texts = [text_of(t) for t in legend[0].iter(f"{NS}text")]
    assert legend_texts == labels
    clip = root.find(f".//{NS}clipPath/{NS}rect")
    assert clip is not None
    plot_bottom = float(clip.attrib["y"]) + float(clip.attrib["height"])
    assert min(float(t.attrib["y"]) for t in legend[0].iter(f"{NS}text")) > plot_bottom
    # The figure grows to hold all the legend rows.
    assert float(root.attrib["viewBox"].split()[3]) > max(float(t.attrib["y"]) for t in legend[0].iter(f"{NS}text"))


def test_series_get_distinct_colours_and_markers_and_dashes() -> None:
    series = [Series(f"s{i}", [0, 1], [0, i]) for i in range(8)]
    series[1] = Series("s1", [0, 1], [0, 1], dashed=True)
    root = parse(line_chart(series, ident="pal", title="T", xlabel="x", ylabel="y"))
    paths = by_class(root, "ov-series")
    colours = [p.attrib["stroke"] for p in paths]
    assert colours == ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
    assert "stroke-dasharray" in paths[1].attrib and "stroke-dasharray" not in paths[0].attrib
    shapes = [m.find(f"{NS}path").attrib["d"] for m in root.iter(f"{NS}marker")]  # type: ignore[union-attr]
    assert len(set(shapes[:7])) == 7


def test_styles_line_and_points() -> None:
    root = parse(
        line_chart(
            [Series("l", [0, 1], [0, 1], style="line"), Series("p", [0, 1], [1, 0], style="points")],
            ident="sty",
            title="T",
            xlabel="x",
            ylabel="y",
        )
    )
    line, points = by_class(root, "ov-series")
    assert "marker-mid" not in line.attrib and line.attrib["stroke"] != "none"
    assert points.attrib["marker-mid"] == "url(#sty-m1)" and points.attrib["stroke"] == "none"


# --------------------------------------------------------------------------- axes


def test_linear_ticks_are_nice_and_compact() -> None:
    root = parse(
        line_chart([Series("s", [0, 0.1, 0.2, 0.3], [0, 0.1, 0.2, 0.3])], ident="t", title="", xlabel="", ylabel="")
    )
    for cls in ("ov-xtick", "ov-ytick"):
        labels = [text_of(e) for e in by_class(root, cls)]
        assert "0.3" in labels or "0.30" in labels
        assert all(len(s) <= 5 for s in labels), labels
        values = [float(s) for s in labels]
        steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
        assert len(steps) == 1
        step = steps.pop()
        mant = step / 10 ** math.floor(math.log10(step))
        assert round(mant, 6) in (1, 2, 5)


def test_log_axis_decade_ticks_cover_the_data() -> None:
    xs = list(range(1, 41))
    ys = [10.0 ** (-i / 5) for i in xs]  # 10^-0.2 .. 10^-8
    root = parse(line_chart([Series("err", xs, ys)], ident="lg", title="T", xlabel="x", ylabel="e", ylog=True))
    ticks = tick_values(root, "ov-ytick")
    exps = [math.log10(t) for t in ticks]
    assert all(abs(e - round(e)) < 1e-9 for e in exps)  # decades only
    assert min(ticks) <= 10 * min(ys) and max(ticks) >= max(ys) / 10
    assert len(ticks) >= 3
    assert any(e.find(f"{NS}tspan") is not None for e in by_class(root, "ov-ytick"))  # superscript exponents


def test_narrow_log_axis_gets_2_and_5_ticks() -> None:
    root = parse(line_chart([Series("s", [1, 2], [1, 30])], ident="nl", title="T", xlabel="x", ylabel="y", ylog=True))
    ticks = tick_values(root, "ov-ytick")
    mantissas = {round(t / 10 ** math.floor(math.log10(t) + 1e-9)) for t in ticks}
    assert mantissas == {1, 2, 5}
    assert ticks == sorted(ticks) and min(ticks) <= 1 and max(ticks) >= 20


def test_constant_and_single_point_series_get_a_range() -> None:
    root = parse(line_chart([Series("c", [3], [7])], ident="one", title="T", xlabel="x", ylabel="y"))
    for cls in ("ov-xtick", "ov-ytick"):
        assert len(by_class(root, cls)) >= 2
    assert series_points(root) == [1]
    root = parse(line_chart([Series("c", [1, 2, 3], [5, 5, 5])], ident="flat", title="T", xlabel="x", ylabel="y"))
    yt = tick_values(root, "ov-ytick")
    assert min(yt) < 5 < max(yt)


def test_points_stay_inside_plot_area() -> None:
    root = parse(simple_chart())
    clip = root.find(f".//{NS}clipPath/{NS}rect")
    assert clip is not None
    x0, y0 = float(clip.attrib["x"]), float(clip.attrib["y"])
    x1, y1 = x0 + float(clip.attrib["width"]), y0 + float(clip.attrib["height"])
    for path in by_class(root, "ov-series"):
        for xs, ys in re.findall(r"(-?[\d.]+),(-?[\d.]+)", path.attrib["d"]):
            assert x0 + 3 < float(xs) < x1 - 3 and y0 + 3 < float(ys) < y1 - 3


# --------------------------------------------------------------------------- dropped values and empty charts


def test_non_finite_and_non_positive_points_are_dropped_and_counted() -> None:
    x = [1, 2, 3, 4, 5, 6, 7]
    y: list[object] = [1.0, float("inf"), float("nan"), "inf", -2.0, 0.0, "0.5"]
    root = parse(line_chart([Series("s", x, y)], ident="drop", title="T", xlabel="x", ylabel="y", ylog=True))  # type: ignore[arg-type]
    assert series_points(root) == [2]
    assert notes(root) == ["5 points not shown (non-finite or \u2264 0 on a log axis)"]
    desc = root.find(f"{NS}desc").text or ""  # type: ignore[union-attr]
    assert "2 points" in desc and "(5 not shown)" in desc
    # On a linear axis only the 3 non-finite ones are dropped; the gap splits the line.
    root = parse(line_chart([Series("s", x, y)], ident="drop", title="T", xlabel="x", ylabel="y"))  # type: ignore[arg-type]
    assert series_points(root) == [4]
    assert notes(root) == ["3 points not shown (non-finite)"]
    assert by_class(root, "ov-series")[0].attrib["d"].count("M") == 2


def test_all_points_dropped_gives_no_data() -> None:
    root = parse(line_chart([Series("s", [1, 2], [-1, 0])], ident="nd", title="T", xlabel="x", ylabel="y", ylog=True))
    assert [text_of(e) for e in by_class(root, "ov-nodata")] == ["no data"]
    assert notes(root) == ["2 points not shown (non-finite or \u2264 0 on a log axis)"]


@pytest.mark.parametrize("series", [[], [Series("empty", [], [])]])
def test_empty_line_chart_says_no_data(series: list[Series]) -> None:
    root = parse(line_chart(series, ident="e", title="T", xlabel="x", ylabel="y", xlog=True, ylog=True))
    assert [text_of(e) for e in by_class(root, "ov-nodata")] == ["no data"]
    assert not by_class(root, "ov-series")


def test_empty_histogram_says_no_data() -> None:
    cases: list[dict[str, list[float]]] = [{}, {"g": []}, {"g": [float("nan")]}]
    for groups in cases:
        root = parse(histogram(groups, ident="he", title="T", xlabel="x"))
        assert [text_of(e) for e in by_class(root, "ov-nodata")] == ["no data"]
        assert bar_counts(root) == []


# --------------------------------------------------------------------------- histogram


def test_histogram_bar_counts_sum_to_finite_values() -> None:
    a = [math.sin(i) for i in range(200)] + [float("nan"), float("inf")]
    b: list[object] = [math.cos(i) * 2 for i in range(150)] + ["-inf"]
    root = parse(histogram({"a": a, "b": b}, ident="h", title="T", xlabel="v", bins=12))  # type: ignore[dict-item]
    bars = by_class(root, "ov-bar")
    assert sum(bar_counts(root)) == 350
    assert len(bars) <= 24
    assert notes(root) == ["3 values not shown (non-finite)"]
    groups = [g for g in root.iter(f"{NS}g") if g.attrib.get("fill-opacity")]
    assert [g.attrib["fill"] for g in groups] == ["#0072B2", "#D55E00"]
    assert all(float(g.attrib["fill-opacity"]) < 1 for g in groups)
    legend = by_class(root, "ov-legend")[0]
    assert [text_of(t) for t in legend.iter(f"{NS}text")] == ["a", "b"]


def test_histogram_explicit_edges_count_outside_values() -> None:
    root = parse(histogram({"g": [0.5, 1.5, 1.5, 2.0, 3.5, -1]}, ident="he", title="T", xlabel="v", bins=[0, 1, 2]))
    assert sorted(bar_counts(root)) == [1, 3]  # the right edge 2.0 belongs to the last bin
    assert notes(root) == ["2 values not shown (non-finite or outside the bins)"]


def test_histogram_y_axis_starts_at_zero_with_integer_ticks() -> None:
    root = parse(histogram({"g": [1, 1, 1, 2]}, ident="hy", title="T", xlabel="v", bins=2))
    yt = tick_values(root, "ov-ytick")
    assert yt[0] == 0 and all(v == int(v) for v in yt)
    assert sorted(bar_counts(root)) == [1, 3]


def test_histogram_constant_values() -> None:
    root = parse(histogram({"g": [4.0] * 5}, ident="hc", title="T", xlabel="v", bins=5))
    assert sum(bar_counts(root)) == 5


def test_reference_lines_drawn_with_labels() -> None:
    root = parse(histogram({"g": [1, 2, 3]}, ident="hr", title="T", xlabel="v", refs=[RefLine(2.5, "limit", axis="x")]))
    assert [text_of(e) for e in by_class(root, "ov-ref")] == ["limit"]
    svg = simple_chart(refs=[RefLine(0.5, "tol"), RefLine(-1.0, "hidden")], ylog=True)
    root = parse(svg)
    assert [text_of(e) for e in by_class(root, "ov-ref")] == ["tol"]  # a non-positive ref on a log axis is skipped
    assert 'stroke-dasharray="7 4"' in svg and 'stroke-width="1.8"' in svg  # strong enough to read at a glance


# --------------------------------------------------------------------------- determinism, size, validation


def test_deterministic_and_compact() -> None:
    xs = [i / 10 for i in range(100)]
    series = [Series(f"s{k}", xs, [math.exp(-x * (k + 1)) + 1e-9 for x in xs]) for k in range(3)]
    a = line_chart(series, ident="big", title="T", xlabel="x", ylabel="y", ylog=True, refs=[RefLine(1e-3, "tol")])
    b = line_chart(list(series), ident="big", title="T", xlabel="x", ylabel="y", ylog=True, refs=[RefLine(1e-3, "tol")])
    assert a == b
    assert len(a.encode()) < 15_000
    assert series_points(parse(a)) == [100, 100, 100]
    assert not re.search(r"\d\.\d{3,}", re.sub(r"<desc.*</desc>", "", a))  # coordinates have <= 2 decimals
    h = {"g": xs}
    assert histogram(h, ident="hh", title="T", xlabel="x") == histogram(dict(h), ident="hh", title="T", xlabel="x")


def test_mismatched_lengths_name_the_series() -> None:
    with pytest.raises(ValueError, match="lopsided"):
        line_chart([Series("lopsided", [1, 2, 3], [1, 2])], ident="m", title="T", xlabel="x", ylabel="y")


@pytest.mark.parametrize("ident", ["", "1abc", "a b", 'a"b', "a.b", "x<y", "é"])
def test_bad_ident_rejected(ident: str) -> None:
    with pytest.raises(ValueError, match="ident"):
        simple_chart(ident)
    with pytest.raises(ValueError, match="ident"):
        histogram({"g": [1]}, ident=ident, title="T", xlabel="x")


@pytest.mark.parametrize(("width", "height"), [(199, 360), (640, 100), (0, 0)])
def test_too_small_rejected(width: int, height: int) -> None:
    with pytest.raises(ValueError, match=r"width|height"):
        simple_chart(width=width, height=height)
    with pytest.raises(ValueError, match=r"width|height"):
        histogram({"g": [1]}, ident="h", title="T", xlabel="x", width=width, height=height)


@pytest.mark.parametrize("bins", [0, -3, [1.0], [0, 0, 1], [0, float("nan"), 2], [2, 1]])
def test_bad_bins_rejected(bins: int | list[float]) -> None:
    with pytest.raises(ValueError, match="bins"):
        histogram({"g": [1]}, ident="h", title="T", xlabel="x", bins=bins)


def test_unconvertible_value_rejected() -> None:
    with pytest.raises(ValueError, match="'s'"):
        line_chart([Series("s", [1, 2], [1, "abc"])], ident="u", title="T", xlabel="x", ylabel="y")  # type: ignore[list-item]
