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


def cayley_max_abs(report: Report) -> Figure | None:
    """The distribution of max|a_ij| of the scaled Cayley inverse (Theorem 3.1's bound is 1)."""
    groups: dict[str, list[float]] = {}
    for run, claim, ev in report.evidence():
        if not claim.id.startswith("cayley."):
            continue
        stats = (ev.get("data") or {}).get("stats") or {}
        wanted = {"numpy-float64": "max|a_ij|", "mpmath-50": "min over D of max|a_ij|"}.get(ev["backend"])
        if wanted in stats and ev.get("method") != "search":
            label = f"{wanted}: {ev['check']} [{ev['backend']}]{_suffix(report, run)}"
            groups.setdefault(label, []).extend(as_float(p[1]) for p in stats[wanted])
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return None
    svg = histogram(
        groups,
        ident="fig-cayley-maxabs",
        title="Scaled Cayley inverse: max|a_ij| over the checked W",
        xlabel="max|a_ij|",
        bins=[k / 20 for k in range(0, 21)],  # the last bin ends at the bound (and holds it): no bar crosses it
        refs=[RefLine(1.0, "bound 1", axis="x")],
    )
    rows = tuple(
        (k, str(len(v)), fmt_num(min(v), 6), fmt_num(_median(v), 6), fmt_num(max(v), 17)) for k, v in groups.items()
    )
    return Figure(
        "fig-cayley-maxabs",
        "Scaled Cayley inverse: max|a_ij| over the checked W",
        "Theorem 3.1 bounds every entry of A by 1 for a suitable D. Shown: max|a_ij| of the A that orthoverify's "
        "inverse map returns (float64), and the minimum over every admissible D (exhaustive enumeration at 50 "
        "digits). The bins end at the bound 1: the last bar, (0.95, 1], holds the quarter-turn blocks, where the "
        "bound is attained; the bar at 0 holds W = D. A value above 1 would be counted below the figure.",
        svg,
        ("values", "cases", "min", "median", "max"),
        rows,
    )


def _median(v: Sequence[float]) -> float:
    s = sorted(x for x in v if not math.isnan(x))
    return s[len(s) // 2] if s else math.nan


def urnn_rank(report: Report) -> Figure | None:
    """The uRNN Jacobian rank against n² and the parameter count."""
    rank: dict[str, dict[int, int]] = {}
    for run, claim, ev in report.evidence():
        if not claim.id.startswith("unitary.coverage") or ev.get("check") != "jacobian_rank":
            continue
        per = rank.setdefault(f"measured rank ({ev['backend']}){_suffix(report, run)}", {})
        for row in (ev.get("data") or {}).get("table") or []:
            if isinstance(row, dict) and "n" in row and "rank" in row:
                n = int(row["n"])
                per[n] = min(per.get(n, 10**9), int(row["rank"]))
    rank = {k: v for k, v in rank.items() if v}
    if not rank:
        return None
    ns = sorted({n for v in rank.values() for n in v})
    ss = [Series(k, sorted(v), [v[n] for n in sorted(v)], style="points") for k, v in rank.items()]
    ss += [
        Series("n² = dim U(n)", ns, [n * n for n in ns], style="line", dashed=True),
        Series("7n parameters", ns, [7 * n for n in ns], style="line", dashed=True),
        Series("7n − 7", ns, [max(7 * n - 7, 1) for n in ns], style="line"),
    ]
    svg = line_chart(
        ss,
        ident="fig-urnn-rank",
        title="uRNN: Jacobian rank of the map to U(n) against n²",
        xlabel="n",
        ylabel="dimension",
        ylog=True,
    )
    first = next(iter(rank.values()))
    rows = tuple((str(n), str(first.get(n, "–")), str(n * n), str(7 * n), str(7 * n - 7)) for n in ns)
    return Figure(
        "fig-urnn-rank",
        "uRNN: Jacobian rank of the map to U(n) against n²",
        "The generic rank of the uRNN parametrisation's Jacobian (minimum over the sampled points and "
        "permutations) meets n² up to n = 5 and then follows 7n − 7, below n² from n = 6: the image has measure "
        "zero in U(n) there (unitary.coverage_threshold).",
        svg,
        ("n", "rank", "n²", "7n", "7n − 7"),
        rows,
    )


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


def orthogonality_drift(report: Report) -> Figure | None:
    """‖W'W − I‖/(n eps) over updates: additive scaled-Cayley against the multiplicative update."""
    ss: list[Series] = []
    rows: list[tuple[str, ...]] = []
    for run, _claim, ev in report.evidence():
        data = ev.get("data") or {}
        if not {"step", "additive", "multiplicative"} <= set(data):
            continue
        step = [as_float(x) for x in data["step"]]
        tag = f"{ev['backend']}{_suffix(report, run)}"
        ss.append(Series(f"additive (scaled Cayley), {tag}", step, [as_float(x) for x in data["additive"]]))
        ss.append(
            Series(f"multiplicative (Stiefel), {tag}", step, [as_float(x) for x in data["multiplicative"]], dashed=True)
        )
        for i, s in enumerate(step):
            rows.append(
                (tag, fmt_num(s), fmt_num(as_float(data["additive"][i])), fmt_num(as_float(data["multiplicative"][i])))
            )
    if not ss:
        return None
    svg = line_chart(
        ss,
        ident="fig-drift",
        title="Orthogonality drift over updates",
        xlabel="update step",
        ylabel="‖W′W − I‖_F / (n eps)",
        xlog=True,
        ylog=True,
        refs=[RefLine(THRESHOLD, "threshold 30")],
    )
    return Figure(
        "fig-drift",
        "Orthogonality drift over updates",
        "The scaled Cayley update recomputes W from the skew A after each step, so its deviation from "
        "orthogonality stays at machine precision; the multiplicative update of W accumulates rounding errors "
        "(cayley.orthogonality_drift).",
        svg,
        ("backend", "step", "additive", "multiplicative"),
        tuple(rows),
    )


def report_figures(report: Report) -> list[Figure]:
    """Every figure the report's data supports, in reading order."""
    figs: list[Figure | None] = [
        ratio_against_n(report),
        coverage_residuals(report),
        cayley_max_abs(report),
        urnn_rank(report),
    ]
    out = [f for f in figs if f is not None]
    out.extend(gradient_norms(report))
    drift = orthogonality_drift(report)
    if drift is not None:
        out.append(drift)
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
