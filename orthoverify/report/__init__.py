"""Verification reports people read: one self-contained HTML file and a Markdown file (with its
figures as SVG files), rendered from one or more JSON results (runs side by side).

``render_report(["reports/check-default.json"], out_dir="reports")`` writes
``reports/report.html``, ``reports/report.md`` and ``reports/report-figures/*.svg``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orthoverify.errors import ReportError
from orthoverify.report.figures import Figure, claim_figure, report_figures
from orthoverify.report.html import render_html
from orthoverify.report.markdown import render_markdown
from orthoverify.report.model import Report, load_report

FORMATS: tuple[str, ...] = ("html", "md")

__all__ = ["FORMATS", "Report", "load_report", "render_html", "render_markdown", "render_report", "report_files"]


def render_report(
    results: Sequence[str | Path],
    *,
    formats: Sequence[str] = FORMATS,
    out_dir: str | Path = "reports",
    labels: Sequence[str] | None = None,
    name: str = "report",
) -> list[Path]:
    """Merge the result files and write the report in each format; returns the files written."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ReportError(f"unknown report format(s) {unknown or list(formats)}; choose from {', '.join(FORMATS)}")
    if not name or "/" in name or name.startswith("."):
        raise ReportError(f"bad report name {name!r}: a plain file name without extension is expected")
    report = load_report(results, labels)
    out = Path(out_dir)
    files = report_files(report, out, formats=formats, name=name)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fig_dir = out / f"{name}-figures"
        if fig_dir.is_dir():
            for stale in fig_dir.glob("fig-*.svg"):
                stale.unlink()
        written = []
        for rel, content in files.items():
            p = out / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(content, encoding="utf-8")
            if p.suffix != ".svg":
                written.append(p)
    except OSError as exc:
        raise ReportError(f"cannot write the report into {out}: {exc}") from None
    return written


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
