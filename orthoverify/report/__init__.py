"""Verification reports people read: one self-contained HTML file and a Markdown file (with its
figures as SVG files), rendered from one or more JSON results (runs side by side).

``render_report(["out/check-quick.json"])`` writes ``out/check-quick.html``, ``out/check-quick.md``
and ``out/check-quick-figures/*.svg``: the name comes from the result file(s), so one run's
report never lands on another's; replacing a report rendered from other results is announced.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orthoverify import _atomic
from orthoverify._files import read_regular
from orthoverify._package import OUT_DIR
from orthoverify._text import has_controls
from orthoverify.errors import ReportError
from orthoverify.report.content import sources_mark
from orthoverify.report.figures import Figure, claim_figure, report_figures
from orthoverify.report.html import render_html
from orthoverify.report.markdown import render_markdown
from orthoverify.report.model import Report, load_report

FORMATS: tuple[str, ...] = ("html", "md")

__all__ = [
    "FORMATS",
    "Report",
    "ReportPlan",
    "default_report_name",
    "load_report",
    "plan_report",
    "render_html",
    "render_markdown",
    "render_report",
    "report_files",
]


def default_report_name(results: Sequence[str | Path]) -> str:
    """The report's file name (without extension) derived from its inputs: the result file's
    name (``check-quick.json`` gives ``check-quick``), several joined by ``+``."""
    stems: list[str] = []
    for r in results:
        stem = Path(r).stem
        if stem not in stems:
            stems.append(stem)
    name = "+".join(stems) or "report"
    return name if not name.startswith(".") else "report" + name


_SOURCES = re.compile(r"orthoverify-sources: (.*?) -->")


def _rendered_from(path: Path) -> str | None:
    """The result files an existing report was rendered from (its ``orthoverify-sources`` mark)."""
    try:
        m = _SOURCES.search(read_regular(path, 4000, prefix=True).decode("utf-8", errors="replace"))
    except OSError:
        return None
    return m.group(1) if m else None


def render_report(
    results: Sequence[str | Path],
    *,
    formats: Sequence[str] = FORMATS,
    out_dir: str | Path = OUT_DIR,
    labels: Sequence[str] | None = None,
    name: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> list[Path]:
    """Merge the result files and write the report in each format; returns the files written.

    ``name`` defaults to :func:`default_report_name`. Replacing a report that was rendered from
    other result files is announced through ``notify`` (default: a ``UserWarning``), never silent.
    The report and its figures are written as one atomic set (:mod:`orthoverify._atomic`): a run
    killed while writing leaves the previous report or the new one, and figures of the previous
    report are removed only once the new set is in place.
    """
    plan = plan_report(results, formats=formats, out_dir=out_dir, labels=labels, name=name, notify=notify)
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
    out_dir: str | Path = OUT_DIR,
    labels: Sequence[str] | None = None,
    name: str | None = None,
    notify: Callable[[str], None] | None = None,
    data: dict[str, dict[str, Any]] | None = None,
) -> ReportPlan:
    """Everything :func:`render_report` writes, computed without writing (``data``: parsed contents
    of result files not written yet, by path)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ReportError(f"unknown report format(s) {unknown or list(formats)}; choose from {', '.join(FORMATS)}")
    if name is None:
        name = default_report_name(results)
    if not name or "/" in name or "\\" in name or name.startswith(".") or has_controls(name):
        raise ReportError(f"bad report name {name!r}: a plain file name without extension is expected")
    report = load_report(results, labels, data)
    out = Path(out_dir)
    rendered = report_files(report, out, formats=formats, name=name)
    sources = sources_mark(report)
    for rel in rendered:
        previous = _rendered_from(out / rel) if not rel.endswith(".svg") else None
        if previous is not None and previous != sources:
            message = f"replacing {out / rel}, which was rendered from {previous}, with a report of {sources}"
            if notify is not None:
                notify(message)
            else:
                warnings.warn(message, UserWarning, stacklevel=3)
    files = {out / rel: content for rel, content in rendered.items()}
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
