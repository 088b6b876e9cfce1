"""The Markdown report: the HTML report's content for reading on a code host, with the
figures as SVG files in ``figures/`` beside it."""

from __future__ import annotations

import re
from pathlib import Path

from orthoverify._package import __version__
from orthoverify.notation import typeset
from orthoverify.report import content as ct
from orthoverify.report.figures import Figure, claim_figure, no_report_figures, report_figures
from orthoverify.report.model import ClaimRow, Report, github_slug

_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")
_BREAKS = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_BLOCK_START = re.compile(r"^(?:[-+=]|\d+(?=[.)](?:\s|$)))")
_PLAIN_ID = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")


def _one_line(x: object) -> str:
    """``x`` as one line: line breaks to spaces, control characters to U+FFFD."""
    return _CONTROL.sub("\ufffd", _BREAKS.sub(" ", str(x)))


def text(x: object) -> str:
    """Any string from a result file or a target (a statement, a note, a label, an environment
    field) as literal Markdown text on one line: every character that could open markup (emphasis,
    a link or image, raw HTML such as ``<script>``, a table cell, a heading, a list) is escaped, so
    ``W*``, ``a_ij``, ``|x|`` or ``<= 1`` read as written and nothing is injected."""
    s = _SPECIAL.sub(r"\\\1", _one_line(x).lstrip())  # leading blanks: an indented code block
    m = _BLOCK_START.match(s)  # would start a list item, a thematic break or a setext underline
    if m:
        k = m.end() - 1 if s[m.end() - 1] in "-+=" else m.end()
        s = f"{s[:k]}\\{s[k:]}"
    return s


def ident(x: object) -> str:
    """A claim id or paper key: as is when it is a plain identifier (letters and digits joined by
    single ``.``, ``_`` or ``-``, which cannot open markup), else escaped like :func:`text`."""
    s = str(x)
    return s if _PLAIN_ID.fullmatch(s) else text(s)


def code(x: object, *, table: bool = False) -> str:
    """An inline code span that survives backticks in its content (code spans show HTML literally);
    ``table=True`` also escapes ``|``, which would end a table cell even inside a code span."""
    s = _one_line(x)
    if table:
        s = s.replace("|", "\\|")
    ticks = "`"
    while ticks in s:
        ticks += "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def cell(x: object) -> str:
    """Text for a table cell: escaped as :func:`text` (pipes included), on one line."""
    return text(x)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return [*out, ""]


def verdict_text(v: str | None) -> str:
    if v is None:
        return "not run"
    return f"**{v}**" if v in ("refuted", "error") else v


def claim_heading(c: ClaimRow) -> str:
    """The heading's text as it renders (the anchor is computed from it)."""
    return f"{c.id}"


def claim_link(c: ClaimRow, *, table: bool = False) -> str:
    return f"[{code(c.id, table=table)}](#{github_slug(claim_heading(c))})"


def _shift_headings(body: str) -> str:
    """A proof entry's Markdown (trusted: the repository's own notes) with its headings set below
    the claim's, so that it nests in the report (``## x`` becomes ``#### x``)."""
    return re.sub(r"^(#{1,4}) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", body, flags=re.M)


def _fence(text: str, lang: str = "") -> list[str]:
    fence = "```"
    while fence in text:
        fence += "`"
    return [fence + lang, text, fence, ""]


def _counterexample(report: Report, claim: ClaimRow) -> list[str]:
    cx = ct.counterexample_view(report, claim)
    if cx is None:
        return []
    out = ["**Counterexample**", ""]
    out += [f"- {text(a)}{code(v) if v else ''}{' ' if b.startswith(' ') else ''}{text(b)}" for a, v, b in cx.items()]
    out += ["", text(cx.inputs_heading), "", *_fence(cx.inputs), text(cx.replay_heading), ""]
    out += _fence(cx.replay, "bash")
    return out


def _figure(fig: Figure, fig_dir: str) -> list[str]:
    out = [f"![{text(fig.title)}]({fig_dir}/{fig.ident}.svg)", "", f"*{text(fig.title)}.* {text(fig.caption)}", ""]
    if fig.rows:
        out += ["<details><summary>Data</summary>", ""]
        out += _table([cell(h) for h in fig.header], [[cell(c) for c in r] for r in fig.rows])
        out += ["</details>", ""]
    return out


def render_markdown(report: Report, out_dir: Path, fig_dir: str, figures: list[Figure] | None = None) -> str:
    """The whole report as Markdown; figures are referenced as ``fig_dir/<ident>.svg``."""
    figs = report_figures(report) if figures is None else figures
    labels = [r.label for r in report.runs]
    multi = len(labels) > 1
    md: list[str] = [ct.sources_comment(report), "", "# orthoverify verification report", ""]
    md += [f"Runs: {', '.join(code(lb) for lb in labels)}.", ""]
    errata = report.errata()
    errata_heading = f"Errata ({len(errata)})"
    md += ["- [Summary](#summary)", f"- [Errata](#{github_slug(errata_heading)})", "- [Figures](#figures)"]
    titles = [ct.paper_title(p, report.paper_info) for p in report.papers()]
    md += [f"- [{text(t)}](#{github_slug(t)})" for t in titles]
    heads = [cell(lb) for lb in labels]
    md += ["", "## Summary", ""]
    md += _table(["verdict", *heads], [[cell(v), *(str(n) for n in ns)] for v, ns in ct.verdict_rows(report)])
    md += ["### Per paper", ""]
    md += _table(
        ["paper", *heads],
        [[cell(ct.paper_title(p, report.paper_info)), *map(cell, cells)] for p, cells in ct.paper_rows(report)],
    )
    md += ["### Runs", ""]
    md += _table(["", *heads], [[cell(k), *(cell(v) for v in vals)] for k, vals in ct.run_rows(report)])
    if multi:
        dis = report.disagreements()
        if dis:
            md += [f"### Where the runs disagree ({len(dis)})", ""]
            md += _table(
                ["claim", *heads], [[claim_link(c, table=True), *(verdict_text(v) for v in c.verdicts())] for c in dis]
            )
        else:
            md += ["Every claim present in several runs has the same verdict in each.", ""]
    md += ["### Claims at a glance", ""]
    rows = []
    for c in report.claims:
        why = text(ct.reason(report, c)) if c.refuted else ""
        rows.append(
            [
                claim_link(c, table=True),
                *(verdict_text(v) for v in c.verdicts()),
                cell(c.where),
                why,
            ]
        )
    md += _table(["claim", *heads, "where", "why refuted"], rows)

    md += [f"## {errata_heading}", ""]
    if not errata:
        md += ["No claim was refuted.", ""]
    for c in errata:
        md += [f"### Erratum: {ident(c.id)}", ""]
        where = text(c.where)
        verdicts = " ".join(verdict_text(v) for v in c.verdicts())
        md += [f"{claim_link(c)} {verdicts} · {where} · {text(ct.paper_short(c.paper, report.paper_info))}"]
        found = ct.reason_parts(report, c)
        if len(found) <= 1:
            md += ["", f"**Why:** {text(found[0] if found else '')}", ""]
        else:
            md += ["", f"**Why** ({len(found)} findings):", "", *(f"- {text(f)}" for f in found), ""]
        md += [f"> {text(typeset(c.statement))}", ""]
        breaks = ct.refutations(report, c)
        if breaks:
            md += [f"**Refuted by** ({len(breaks)}):", ""]
            md += [f"- {code(r.check)} \\[{text(r.backend)}\\]: {text(r.text)}" for r in breaks]
            md += [""]
        md += _counterexample(report, c)
        fix = report.corrected(c.id)
        if fix is not None:
            verdicts = " ".join(verdict_text(v) for v in fix.verdicts())
            md += [f"**Corrected** ({claim_link(fix)} {verdicts}):", "", f"> {text(typeset(fix.statement))}", ""]
        else:
            md += ["*No corrected statement is registered for this claim.*", ""]

    md += ["## Figures", ""]
    if not figs:
        md += [text(no_report_figures(report)), ""]
    for f in figs:
        md += _figure(f, fig_dir)

    for p in report.papers():
        md += [f"## {text(ct.paper_title(p, report.paper_info))}", ""]
        for c in (c for c in report.claims if c.paper == p):
            md += _claim(report, c, out_dir, fig_dir)
    md += [
        "---",
        "",
        f"Rendered by orthoverify {__version__} from {', '.join(code(r.path) for r in report.runs)}. A verdict is "
        "earned by the checks listed under each claim; every counterexample replays with the command shown.",
        "",
    ]
    return "\n".join(md)


def _claim(report: Report, c: ClaimRow, out_dir: Path, fig_dir: str) -> list[str]:
    multi = len(report.runs) > 1
    md = [f"### {ident(claim_heading(c))}", ""]
    md += [
        " · ".join(
            f"{text(lb)}: {verdict_text(v)}" if multi else verdict_text(v) for lb, v in ct.verdict_summary(report, c)
        )
    ]
    md += [
        "",
        f"{text(c.where)} · kind: {text(c.kind)}"
        + (f" · corrects [{code(c.corrects)}](#{github_slug(str(c.corrects))})" if c.corrects else ""),
        "",
    ]
    md += [f"> {text(typeset(c.statement))}", ""]
    if c.refuted:
        md += [f"**Why refuted:** {text(ct.reason(report, c))}", ""]
    notes = next((e.get("notes") for _, e in c.present() if e.get("notes")), "")
    if notes:
        md += [f"**Notes.** {text(typeset(notes))}", ""]
    rows = ct.evidence_rows(report, c)
    header = ct.evidence_header(multi)
    body = [
        ([cell(r.run)] if multi else [])
        + [
            code(r.check, table=True),
            cell(r.method),
            cell(r.backend),
            cell(r.cases),
            cell(r.ratio),
            cell(r.seconds),
            "**refutes**" if r.result == "counterexample" else verdict_text(r.result) if r.result != "pass" else "pass",
        ]
        for r in rows
    ]
    md += _table(header, body)
    with_notes = [r for r in rows if r.notes]
    if with_notes:
        md += [f"<details><summary>Evidence notes ({len(with_notes)})</summary>", ""]
        md += [
            f"- {code(r.check)} \\[{text(r.backend)}\\]{' (' + text(r.run) + ')' if multi else ''}: "
            f"{text(typeset(r.notes))}"
            for r in with_notes
        ]
        md += ["", "</details>", ""]
    md += _counterexample(report, c)
    fig = claim_figure(report, c)
    if fig is not None:
        md += [f"![{text(fig.title)}]({fig_dir}/{fig.ident}.svg)", ""]
    link = ct.proof_link(report, c, out_dir)
    if link is None:
        md += [f"No proof notes are shipped for {code(c.paper)}.", ""]
    else:
        source = f"[{text(link.label)}]({link.href})" if link.href else code(link.label)
        if link.entry is not None:
            md += ["<details><summary>Proof notes</summary>", "", _shift_headings(link.entry.body), ""]
            md += [f"From {source} in the orthoverify repository.", "", "</details>", ""]
        else:
            md += [f"Proof notes: {source} in the orthoverify repository.", ""]
    return md
