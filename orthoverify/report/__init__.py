"""Verification reports people read: one self-contained HTML file and a Markdown file (with its
figures as SVG files), rendered from one or more JSON results (runs side by side).

``render_report(["reports/check-default.json"], out_dir="reports")`` writes
``reports/report.html``, ``reports/report.md`` and ``reports/report-figures/*.svg``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orthoverify import _atomic
from orthoverify.errors import ReportError
from orthoverify.report.figures import Figure, claim_figure, report_figures
from orthoverify.report.html import render_html
from orthoverify.report.markdown import render_markdown
from orthoverify.report.model import Report, load_report

FORMATS: tuple[str, ...] = ("html", "md")

__all__ = [
    "FORMATS",
    "Report",
    "ReportPlan",
    "load_report",
    "plan_report",
    "render_html",
    "render_markdown",
    "render_report",
    "report_files",
]


def render_report(
    results: Sequence[str | Path],
    *,
    formats: Sequence[str] = FORMATS,
    out_dir: str | Path = "reports",
    labels: Sequence[str] | None = None,
    name: str = "report",
) -> list[Path]:
    """Merge the result files and write the report in each format; returns the files written.

    The report and its figures are written as one atomic set (:mod:`orthoverify._atomic`): a run
    killed while writing leaves the previous report or the new one, and figures of the previous
    report are removed only once the new set is in place."""
    plan = plan_report(results, formats=formats, out_dir=out_dir, labels=labels, name=name)
    try:
        _atomic.write_files(plan.files, remove=plan.stale)
    except OSError as exc:
        raise ReportError(f"cannot write the report into {out_dir}: {exc}") from None
    return plan.written


@dataclass(frozen=True)
class ReportPlan:
    """A report ready to be written: every file with its content, the previous report's figures that
    the new one no longer has, and the files to name to the user (the figures are not named)."""

    files: dict[Path, str]
    stale: list[Path]
    written: list[Path]


def plan_report(
    results: Sequence[str | Path],
    *,
    formats: Sequence[str] = FORMATS,
    out_dir: str | Path = "reports",
    labels: Sequence[str] | None = None,
    name: str = "report",
    data: dict[str, dict[str, Any]] | None = None,
) -> ReportPlan:
    """Everything :func:`render_report` writes, computed without writing (``data``: parsed contents
    of result files not written yet, by path)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ReportError(f"unknown report format(s) {unknown or list(formats)}; choose from {', '.join(FORMATS)}")
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ReportError(f"bad report name {name!r}: a plain file name without extension is expected")
    report = load_report(results, labels, data)
    out = Path(out_dir)
    files = {out / rel: content for rel, content in report_files(report, out, formats=formats, name=name).items()}
    fig_dir = out / f"{name}-figures"
    stale = sorted(fig_dir.glob("fig-*.svg")) if "md" in formats and fig_dir.is_dir() else []
    return ReportPlan(files, [f for f in stale if f not in files], [p for p in files if p.suffix != ".svg"])


def report_files(
    report: Report, out_dir: Path, *, formats: Sequence[str] = FORMATS, name: str = "report"
) -> dict[str, str]:
    """Every file of the report (path relative to ``out_dir``, content); links are computed as
    seen from ``out_dir``. The same results always give the same files."""
    figs = report_figures(report)
    files: dict[str, str] = {}
    if "html" in formats:
        files[f"{name}.html"] = render_html(report, out_dir, figs)
    if "md" in formats:
        fig_dir = f"{name}-figures"
        all_figs: list[Figure] = list(figs)
        all_figs += [f for f in (claim_figure(report, c) for c in report.claims) if f is not None]
        for f in all_figs:
            files[f"{fig_dir}/{f.ident}.svg"] = f.svg + "\n"
        files[f"{name}.md"] = render_markdown(report, out_dir, fig_dir, figs)
    return files
