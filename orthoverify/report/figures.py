"""The report's figures, each drawn from evidence ``data`` recorded in the result files.

A figure exists only when some run recorded the data it needs: a report of a run that did not
check a family simply has no picture of it. Every figure carries its data as a table too (the
text alternative, and what the Markdown report shows beside the image).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from orthoverify.report.model import ClaimRow, Report, as_float, fmt_num
from orthoverify.report.svg import RefLine, Series, histogram, line_chart
from orthoverify.tolerance import THRESHOLD


@dataclass(frozen=True)
class Figure:
    """One picture: an id (also its file name), a title, a caption, the SVG, and its data."""

    ident: str
    title: str
    caption: str
    svg: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = field(default_factory=tuple)


def _suffix(report: Report, run: int) -> str:
    return f" · {report.runs[run].label}" if len(report.runs) > 1 else ""


def _by_n(ev: dict[str, Any]) -> list[tuple[int, int, float, float]]:
    rows = (ev.get("data") or {}).get("by_n") or []
    out = []
    for r in rows:
        if isinstance(r, list) and len(r) == 4:
            out.append((int(r[0]), int(r[1]), as_float(r[2]), as_float(r[3])))
    return out


def _ratio_evidence(ev: dict[str, Any]) -> bool:
    """Evidence measured as test ratios (not exact arithmetic, which has no rounding to scale)."""
    return ev.get("threshold") is not None and ev.get("method") in ("float", "high-precision", "search", "exhaustive")


def _ident(*parts: str) -> str:
    s = "-".join(re.sub(r"[^A-Za-z0-9]+", "-", p).strip("-") for p in parts)
    return "fig-" + s.lower()


def _add_worst(series: dict[str, dict[int, float]], key: str, ev: dict[str, Any]) -> None:
    """Fold an evidence's per-size worst ratios into the series ``key`` (the max at each n)."""
    per = series.setdefault(key, {})
    for n, _cases, worst, _median in _by_n(ev):
        if math.isfinite(worst):
            per[n] = max(per.get(n, 0.0), worst)


def _ratio_chart(
    ss: list[Series], ident: str, title: str, xlabel: str, *, ylabel: str = "worst test ratio", xlog: bool = True
) -> str:
    """Test ratios against a size (log-log unless ``xlog`` is off), with the threshold drawn."""
    return line_chart(
        ss,
        ident=ident,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        xlog=xlog,
        ylog=True,
        refs=[RefLine(THRESHOLD, "threshold 30")],
    )


def ratio_against_n(report: Report) -> Figure | None:
    """Worst test ratio against n per backend, over every passing ratio check of every claim."""
    series: dict[str, dict[int, float]] = {}
    for run, _claim, ev in report.evidence():
        if not ev.get("passed") or not _ratio_evidence(ev):
            continue
        _add_worst(series, ev["backend"] + _suffix(report, run), ev)
    series = {k: v for k, v in series.items() if v}
    if not series:
        return None
    ss = [Series(k, sorted(v), [v[n] for n in sorted(v)]) for k, v in sorted(series.items())]
    ns = sorted({n for v in series.values() for n in v})
    rows = tuple((str(n), *(fmt_num(series[s.label].get(n)) for s in ss)) for n in ns)
    svg = _ratio_chart(ss, "fig-ratio-n", "Worst test ratio against n, per backend", "n (largest input dimension)")
    return Figure(
        "fig-ratio-n",
        "Worst test ratio against n, per backend",
        "The largest test ratio ‖error‖/(n·eps·scale) at each size over every passing ratio check of every claim "
        "(refuted checks are in the errata). A stable computation stays of order 1 at every n and in every "
        "precision; the threshold is 30. Ratios of exactly 0 (exact agreement) are not drawn on the log axis.",
        svg,
        ("n", *(s.label for s in ss)),
        rows,
    )


def coverage_residuals(report: Report) -> Figure | None:
    """Reconstruction residuals of the coverage claims (inverse map, then rebuild) against n."""
    series: dict[str, dict[int, float]] = {}
    for run, claim, ev in report.evidence():
        if (
            claim.kind != "coverage"
            or not _ratio_evidence(ev)
            or ev["backend"] != "numpy-float64"
            or "rank" in ev["check"]
        ):
            continue  # reconstruction residuals only (rank checks measure something else)
        _add_worst(series, f"{claim.id} [{ev['backend']}]{_suffix(report, run)}", ev)
    series = {k: v for k, v in series.items() if len(v) >= 2}
    if not series:
        return None
    ss = [Series(k, sorted(v), [v[n] for n in sorted(v)]) for k, v in series.items()]
    rows = tuple((s.label, str(len(s.x)), fmt_num(max(s.y))) for s in ss)
    svg = _ratio_chart(ss, "fig-coverage", "Coverage: reconstruction residuals against n", "n")
    return Figure(
        "fig-coverage",
        "Coverage: reconstruction residuals against n",
        "For every claim that a parametrisation reaches a whole set of matrices: the target is inverted to "
        "parameters and rebuilt, and the residual is measured as a test ratio (float64, and 50 digits where "
        "checked). Residuals of order 1 at every n mean every target was reached.",
        svg,
        ("series", "sizes", "worst ratio"),
        rows,
    )


def _median(v: Sequence[float]) -> float:
    s = sorted(x for x in v if not math.isnan(x))
    return s[len(s) // 2] if s else math.nan


def gradient_norms(report: Report) -> list[Figure]:
    """Gradient norms against t for every recorded trajectory (autograd, the paper's backward, the bound)."""
    out = []
    for run, claim, ev in report.evidence():
        data = ev.get("data") or {}
        if not {"t", "grad_norm_autograd"} <= set(data):
            continue
        t = [as_float(x) for x in data["t"]]
        auto = [as_float(x) for x in data["grad_norm_autograd"]]
        ss = [Series("‖∂L/∂h_t‖ (autograd)", t, auto, style="line")]
        if "grad_norm_backward" in data:
            ss.append(
                Series("‖∂L/∂h_t‖ (backward pass)", t, [as_float(x) for x in data["grad_norm_backward"]], "points")
            )
        refs = []
        bound = as_float(data.get("bound"))
        if math.isfinite(bound):
            refs.append(RefLine(bound, f"claimed bound {fmt_num(bound)}"))
        finite = [v for v in auto if math.isfinite(v) and v > 0]
        ylog = bool(finite) and max(finite) / min(finite) > 100
        ident = _ident("grad", claim.id, str(run))
        title = f"{claim.id}: gradient norms against t"
        svg = line_chart(ss, ident=ident, title=title, xlabel="t", ylabel="gradient norm", ylog=ylog, refs=refs)
        rows = tuple(
            (
                fmt_num(tt),
                fmt_num(a, 6),
                fmt_num(as_float(data["grad_norm_backward"][i]), 6) if "grad_norm_backward" in data else "–",
            )
            for i, (tt, a) in enumerate(zip(t, auto, strict=False))
            if i % max(1, len(t) // 10) == 0 or i == len(t) - 1
        )
        caption = (str(data.get("description", "")) + f" ({ev['backend']}{_suffix(report, run)}).").strip()
        out.append(Figure(ident, title, caption, svg, ("t", "autograd", "backward"), rows))
    return out


MAX_SERIES, MAX_VALUES, MAX_DECLARED = 50, 20_000, 50
"""Bounds on what the declared figures of a report draw, so that a crafted result file cannot make
rendering run for hours: series and values (points, or a histogram's values) per figure (the rest
are left out, and the caption says so), and distinct figures (the rest are not drawn)."""


@dataclass
class _Declared:
    """A declared figure being gathered: its first declaration, and its series merged by label."""

    spec: dict[str, Any]
    points: dict[str, dict[float, float]] = field(default_factory=dict)
    values: dict[str, list[float]] = field(default_factory=dict)
    looks: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)  # label: (style, dashed, reference)
    cut: bool = False
    count: int = 0

    def room(self, n: int) -> int:
        """How many of ``n`` more values the figure may take (marking it cut when not all)."""
        left = max(0, MAX_VALUES - self.count)
        if n > left:
            self.cut = True
        self.count += min(n, left)
        return min(n, left)


def _floats(xs: object) -> list[float]:
    return [as_float(x) for x in xs[:MAX_POINTS]] if isinstance(xs, list) else []


def _gather(report: Report) -> dict[str, _Declared]:
    """The figures the result files declare (``claims[].figures``), by ident in reading order. Claims
    and runs declaring one ident share the figure: a line's points are merged by series label (the
    first value at an x stands), a histogram's values are pooled; a run's label is added to its
    series' labels when the report compares runs. Malformed entries are skipped (the file is data)."""
    out: dict[str, _Declared] = {}
    for claim in report.claims:
        for run, entry in claim.present():
            for spec in entry.get("figures") or []:
                if not isinstance(spec, dict) or spec.get("kind") not in ("line", "histogram"):
                    continue
                ident = _ident(str(spec.get("ident") or "figure"))[:80]
                if ident not in out and len(out) >= MAX_DECLARED:
                    continue
                fig = out.setdefault(ident, _Declared(spec))
                if fig.spec.get("kind") != spec["kind"]:
                    continue
                for s in spec.get("series") or []:
                    if not isinstance(s, dict):
                        continue
                    label = str(s.get("label", "")) + _suffix(report, run)
                    if label not in fig.looks and len(fig.looks) >= MAX_SERIES:
                        fig.cut = True
                        continue
                    style = s.get("style") if s.get("style") in ("line", "points", "line+points") else "line+points"
                    fig.looks.setdefault(label, (str(style), s.get("dashed") is True, s.get("reference") is True))
                    ys = _floats(s.get("y"))
                    if spec["kind"] == "histogram":
                        fig.values.setdefault(label, []).extend(ys[: fig.room(len(ys))])
                    else:
                        pts = [(x, y) for x, y in zip(_floats(s.get("x")), ys, strict=False) if math.isfinite(x)]
                        per = fig.points.setdefault(label, {})
                        for x, y in pts[: fig.room(len(pts))]:
                            per.setdefault(x, y)
    return out


def _refs(spec: dict[str, Any]) -> list[RefLine]:
    out = []
    for r in spec.get("refs") or []:
        if isinstance(r, dict) and math.isfinite(as_float(r.get("value"))):
            value, label = as_float(r.get("value")), str(r.get("label", ""))
            out.append(RefLine(value, label, "x") if r.get("axis") == "x" else RefLine(value, label))
    return out


def _declared_figure(ident: str, fig: _Declared) -> Figure | None:
    """One declared figure drawn from its gathered series, with its data as a table: a histogram's
    count, min, median and max per series, a line chart's values at each x per series."""
    spec = fig.spec
    title, caption = str(spec.get("title") or ident), str(spec.get("caption") or "")
    if fig.cut:
        caption += f" Only part of the data is drawn (at most {MAX_SERIES} series and {MAX_VALUES} values)."
    xlabel, ylabel = str(spec.get("x_label") or ""), str(spec.get("y_label") or "")
    refs = _refs(spec)
    order = sorted(fig.looks, key=lambda k: fig.looks[k][2])  # measured series first, then references
    if spec["kind"] == "histogram":
        groups = {k: fig.values[k] for k in order if fig.values.get(k)}
        if not groups:
            return None
        bins = sorted(b for b in _floats(spec.get("bins")) if math.isfinite(b))
        svg = histogram(
            groups, ident=ident, title=title, xlabel=xlabel, ylabel=ylabel or "cases", bins=bins or 20, refs=refs
        )
        stats = tuple(
            (k, str(len(v)), fmt_num(min(v), 6), fmt_num(_median(v), 6), fmt_num(max(v), 17)) for k, v in groups.items()
        )
        return Figure(ident, title, caption, svg, ("values", "cases", "min", "median", "max"), stats)
    ss = []
    for k in order:
        per = fig.points.get(k) or {}
        if per:
            style, dashed, _ref = fig.looks[k]
            xs = sorted(per)
            ss.append(Series(k, xs, [per[x] for x in xs], style=style, dashed=dashed))  # type: ignore[arg-type]
    if not ss:
        return None
    svg = line_chart(
        ss,
        ident=ident,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        xlog=spec.get("log_x") is True,
        ylog=spec.get("log_y") is True,
        refs=refs,
    )
    xs_all = sorted({x for s in ss for x in s.x})
    cols = [dict(zip(s.x, s.y, strict=True)) for s in ss]
    rows: tuple[tuple[str, ...], ...] = tuple((fmt_num(x), *(fmt_num(c.get(x)) for c in cols)) for x in xs_all)
    return Figure(ident, title, caption, svg, (xlabel, *(s.label for s in ss)), rows)


def declared_figures(report: Report) -> list[Figure]:
    """The figures the claims declared in the result files, each drawn from the series it carries (a
    result file written before claims declared figures has none)."""
    out = []
    for ident, fig in _gather(report).items():
        drawn = _declared_figure(ident, fig)
        if drawn is not None:
            out.append(drawn)
    return out


def report_figures(report: Report) -> list[Figure]:
    """Every figure the report's data supports, in reading order: the test ratios of every claim, the
    figures the claims declare, the gradient trajectories recorded."""
    figs: list[Figure | None] = [ratio_against_n(report), coverage_residuals(report)]
    out = [f for f in figs if f is not None]
    out.extend(declared_figures(report))
    out.extend(gradient_norms(report))
    return out


def no_report_figures(report: Report) -> str:
    """What the Figures section says when no figure of the whole report exists: that the runs
    recorded none, or (a validate run) that the figures are each with its claim."""
    n = sum(1 for c in report.claims if claim_figure(report, c) is not None)
    if not n:
        return "These runs recorded no data for figures."
    return f"The figures are each with its claim below ({n} claims: test ratios against size, per check)."


def claim_figure(report: Report, claim: ClaimRow) -> Figure | None:
    """One claim's worst test ratio against n per check and backend (when it ran on two sizes or more),
    else, for a check of ``orthoverify validate``, every measured case's test ratio against the
    parameter size (:func:`series_figure`); drawn once per report."""
    key = "claim:" + claim.id
    if key not in report.drawn:
        report.drawn[key] = _claim_figure(report, claim) or series_figure(report, claim)
    fig: Figure | None = report.drawn[key]
    return fig


def _claim_figure(report: Report, claim: ClaimRow) -> Figure | None:
    ss: list[Series] = []
    for run, entry in claim.present():
        for ev in entry.get("evidence", []):
            pts = [(n, w) for n, _c, w, _m in _by_n(ev)]
            if not _ratio_evidence(ev) or len(pts) < 2:
                continue
            ss.append(
                Series(
                    f"{ev['check']} [{ev['backend']}]{_suffix(report, run)}", [p[0] for p in pts], [p[1] for p in pts]
                )
            )
    if not ss or not any(any(math.isfinite(y) and y > 0 for y in s.y) for s in ss):
        return None
    ident = _ident("claim", claim.id)
    title = f"{claim.id}: worst test ratio against n"
    svg = _ratio_chart(ss, ident, title, "n")
    rows = tuple((s.label, " ".join(f"{x}:{fmt_num(y)}" for x, y in zip(s.x, s.y, strict=True))) for s in ss)
    return Figure(ident, title, "Worst test ratio at each n, per check and backend.", svg, ("series", "n:worst"), rows)


SERIES_AXES = {"n": "n (matrix size)", "max|x_ij|": "max|x_ij| (parameter magnitude)"}
"""Axis labels of the parameter sizes a validate check's series may be recorded against (any other
name is shown as written)."""

EXTREME = (1e-30, 1e30)
"""Parameter sizes outside this range (the subnormal and near-overflow special points) are counted in a
figure's caption, not drawn: hundreds of empty decades would squash the ordinary sizes into one tick."""

MAX_POINTS = 5000
"""Points read from one evidence's series (a larger series is cut, and the caption says so)."""


def _series(ev: dict[str, Any]) -> tuple[str, list[tuple[float, float]], bool] | None:
    """The (x name, points, cut) of an evidence's ``data.series`` (a validate check's measured cases:
    ``[size, ratio]``, ratio -1 for a failed call, read as infinite); None when it has none."""
    s = (ev.get("data") or {}).get("series")
    if not isinstance(s, dict) or not isinstance(s.get("points"), list):
        return None
    pts = []
    for p in s["points"][:MAX_POINTS]:
        if isinstance(p, list) and len(p) == 2:
            x, y = as_float(p[0]), as_float(p[1])
            pts.append((x, math.inf if y < 0 else y))
    return str(s.get("x") or "parameter size"), sorted(pts), len(s["points"]) > MAX_POINTS


def series_figure(report: Report, claim: ClaimRow) -> Figure | None:
    """A validate check's figure of the error against parameter size: every measured case's test
    ratio (error / allowance) against the size its series was recorded against (n, or max|x_ij|),
    one point series per dtype and run, log scales, the threshold drawn. None without a series."""
    ss: list[Series] = []
    rows: list[tuple[str, ...]] = []
    names: list[str] = []
    modes: list[str] = []
    failed = zero = 0
    cut = False
    for run, entry in claim.present():
        for ev in entry.get("evidence", []):
            got = _series(ev)
            if got is None or not got[1]:
                continue
            name, pts, more = got
            cut |= more
            if name not in names:
                names.append(name)
            mode = str((ev.get("data") or {}).get("mode") or "")
            if mode and mode not in modes:
                modes.append(mode)
            label = f"{ev.get('check', '')} [{ev.get('backend', '')}]{_suffix(report, run)}"
            ss.append(Series(label, [p[0] for p in pts], [p[1] for p in pts], style="points"))
            fails = sum(1 for _x, y in pts if y == math.inf)
            finite = [y for _x, y in pts if math.isfinite(y)]
            failed += fails
            zero += sum(1 for y in finite if y == 0)
            rows.append(
                (
                    label,
                    str(len(pts)),
                    f"{fmt_num(pts[0][0])} to {fmt_num(pts[-1][0])}",
                    fmt_num(max(finite)) if finite else "–",
                    str(sum(1 for y in finite if y > THRESHOLD) + fails),
                    str(fails),
                )
            )
    if not ss:
        return None
    xlabel = " / ".join(SERIES_AXES.get(n, n) for n in names)
    xs = [x for s in ss for x in s.x if math.isfinite(x) and x > 0]
    xlog = bool(xs) and max(xs) / min(xs) >= 10
    extreme: list[float] = []  # subnormal and near-overflow special points: told, not drawn (they squash the axis)
    if xlog:
        kept = []
        for s in ss:
            far = [not (EXTREME[0] <= x <= EXTREME[1]) and x > 0 for x in s.x]
            extreme += [y for y, f in zip(s.y, far, strict=True) if f]
            kept.append(replace(s, y=[math.nan if f else y for y, f in zip(s.y, far, strict=True)]))
        ss = kept
    ident = _ident("series", claim.id)
    title = f"{claim.id}: test ratio against {' / '.join(names)}"
    svg = _ratio_chart(ss, ident, title, xlabel, ylabel="test ratio (error / allowance)", xlog=xlog)
    caption = (
        f"Every case this check measured ({'; '.join(modes) or claim.id}): its test ratio, the error divided by "
        f"what a correct evaluation is allowed at that input, against {xlabel}. A point above the threshold 30 is "
        "a failure; a ratio that grows with the size is what conditioning does not explain."
    )
    at_zero = sum(1 for s in ss for x, y in zip(s.x, s.y, strict=True) if not x > 0 and 0 < y < math.inf) if xlog else 0
    if failed or zero or at_zero:
        caption += (
            f" Not drawn on the log axes: {failed} failed call(s) (ratio ∞, counted as failures), {zero} exact "
            f"result(s) (ratio 0)" + (f", {at_zero} case(s) of size 0 (the zero parameter)." if at_zero else ".")
        )
    if extreme:
        caption += (
            f" Not drawn either: {len(extreme)} case(s) at magnitudes beyond {EXTREME[0]:g} to {EXTREME[1]:g} "
            f"(subnormal and near-overflow special points), worst ratio {fmt_num(max(extreme))}."
        )
    if cut:
        caption += f" Only the first {MAX_POINTS} cases of a series are drawn."
    header = ("series", "cases", "size from / to", "worst finite ratio", "failures", "failed calls")
    return Figure(ident, title, caption, svg, header, tuple(rows))
