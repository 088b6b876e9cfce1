"""The HTML report: one self-contained file (inline CSS, inline SVG, no script, no network)."""

from __future__ import annotations

import html
from pathlib import Path

from orthoverify.report import content as ct
from orthoverify.report.figures import Figure, claim_figure, report_figures
from orthoverify.report.mdlite import to_html
from orthoverify.report.model import ClaimRow, Report, relative_link

CSS = """
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--panel:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--err:#8250df;--link:#0969da}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg)}
header,main,footer{max-width:1100px;margin:0 auto;padding:0 16px}
header{padding-top:20px}
h1{font-size:1.6em;margin:.2em 0}
h2{font-size:1.35em;border-bottom:1px solid var(--line);padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1.12em;margin:1.4em 0 .4em}
h4{font-size:1em;margin:1em 0 .3em}
a{color:var(--link)}
nav{display:flex;flex-wrap:wrap;gap:6px 14px;padding:8px 0;border-bottom:1px solid var(--line)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
pre{background:var(--panel);padding:8px 10px;border-radius:6px;overflow-x:auto;white-space:pre-wrap;
word-break:break-all;max-height:24em}
blockquote{margin:.5em 0;padding:.2em .9em;border-left:4px solid var(--line);color:var(--fg);background:var(--panel)}
.scroll{overflow-x:auto;max-width:100%}
p,li,blockquote,figcaption,h1,h2,h3,h4,summary{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
th{background:var(--panel)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.v{display:inline-block;padding:0 7px;border-radius:10px;font-size:.85em;font-weight:600;color:#fff;
white-space:nowrap}
.v-verified{background:var(--ok)}.v-refuted{background:var(--bad)}.v-inconclusive{background:var(--warn)}
.v-error{background:var(--err)}.v-absent{background:#8c959f}
.r-pass{color:var(--ok)}.r-counterexample{color:var(--bad);font-weight:600}.r-fail{color:var(--warn)}
.r-error{color:var(--err);font-weight:600}
.claim{border-top:1px solid var(--line);padding-top:.3em}
.meta{color:var(--muted);font-size:.92em;margin:.2em 0}
.erratum{border:1px solid #ffcecb;background:#fff8f7;border-radius:8px;padding:2px 14px 10px;margin:1em 0}
.corrected{border-left:4px solid var(--ok);padding:.1em .8em;background:#f3fbf5}
figure{margin:1.2em 0;padding:0}
figure svg{display:block;width:100%;height:auto}
figcaption{color:var(--muted);font-size:.9em;margin-top:.3em}
details{margin:.4em 0}
summary{cursor:pointer;color:var(--link)}
.notes li{margin:.2em 0;font-size:.9em}
footer{color:var(--muted);font-size:.85em;padding:2em 16px}
@media (max-width:600px){body{font-size:14px}th,td{padding:2px 4px}h1{font-size:1.3em}}
"""


def esc(x: object) -> str:
    return html.escape(str(x))


def badge(verdict: str | None) -> str:
    if verdict is None:
        return '<span class="v v-absent">not run</span>'
    return f'<span class="v v-{esc(verdict)}">{esc(verdict)}</span>'


def claim_anchor(claim_id: str) -> str:
    return "claim-" + claim_id


def _table(header: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    """A table from cells that are already HTML."""
    numeric = numeric or set()
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f"<th>{h}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for r in rows:
        cells = [f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _summary(report: Report) -> str:
    labels = [esc(r.label) for r in report.runs]
    parts = ['<section id="summary"><h2>Summary</h2>']
    parts.append(
        _table(
            ["verdict", *labels],
            [[badge(v) if v != "total" else "total", *(str(n) for n in ns)] for v, ns in ct.verdict_rows(report)],
            numeric=set(range(1, len(labels) + 1)),
        )
    )
    parts.append("<h3>Per paper</h3>")
    parts.append(
        _table(
            ["paper", *labels],
            [
                [f"<code>{esc(p)}</code> {esc(ct.paper_title(p))}", *(esc(c) for c in cells)]
                for p, cells in ct.paper_rows(report)
            ],
        )
    )
    parts.append("<h3>Runs</h3>")
    parts.append(_table(["", *labels], [[esc(k), *(esc(v) for v in vals)] for k, vals in ct.run_rows(report)]))
    dis = report.disagreements()
    if len(report.runs) > 1:
        if dis:
            parts.append(f"<h3>Where the runs disagree ({len(dis)})</h3>")
            parts.append(
                _table(
                    ["claim", *labels],
                    [[_claim_link(c), *(badge(v) for v in c.verdicts())] for c in dis],
                )
            )
        else:
            parts.append("<p>Every claim present in several runs has the same verdict in each.</p>")
    parts.append("<h3>Claims at a glance</h3>")
    rows = []
    for c in report.claims:
        entry = next((e for _, e in c.present()), None)
        rows.append(
            [
                _claim_link(c),
                *(badge(v) for v in c.verdicts()),
                esc(c.where),
                esc(ct.worst_ratio_text(entry)),
            ]
        )
    parts.append(_table(["claim", *labels, "where", "worst ratio / threshold"], rows))
    parts.append("</section>")
    return "".join(parts)


def _claim_link(c: ClaimRow) -> str:
    return f'<a href="#{esc(claim_anchor(c.id))}"><code>{esc(c.id)}</code></a>'


def _counterexample(report: Report, claim: ClaimRow) -> str:
    cx = ct.counterexample_view(report, claim)
    if cx is None:
        return ""
    lines = [f"<li>{esc(a)}{f'<code>{esc(v)}</code>' if v else ''}{esc(b)}</li>" for a, v, b in cx.items()]
    return (
        '<div class="cx"><h4>Counterexample</h4><ul>'
        + "".join(lines)
        + f"</ul><p>{esc(cx.inputs_heading)}</p><pre>{esc(cx.inputs)}</pre>"
        + f"<p>{esc(cx.replay_heading)}</p><pre><code>{esc(cx.replay)}</code></pre></div>"
    )


def _errata(report: Report) -> str:
    errata = report.errata()
    parts = [f'<section id="errata"><h2>Errata ({len(errata)})</h2>']
    if not errata:
        parts.append("<p>No claim was refuted.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Every claim refuted in a run: the statement as printed, what breaks it, the counterexample "
        "(confirmed at high precision or exactly), and the corrected statement where one is registered.</p>"
    )
    for c in errata:
        parts.append(f'<div class="erratum"><h3><a href="#{esc(claim_anchor(c.id))}"><code>{esc(c.id)}</code></a> ')
        parts.append(" ".join(badge(v) for v in c.verdicts()) + "</h3>")
        parts.append(f'<p class="meta">{esc(c.where)} · {esc(ct.paper_title(c.paper))}</p>')
        parts.append(f"<blockquote>{esc(c.statement)}</blockquote>")
        breaks = [r for r in ct.evidence_rows(report, c) if r.result == "counterexample"]
        if breaks:
            parts.append("<p><strong>What breaks it.</strong></p><ul>")
            parts += [f"<li><code>{esc(r.check)}</code> [{esc(r.backend)}]: {esc(r.notes)}</li>" for r in breaks]
            parts.append("</ul>")
        parts.append(_counterexample(report, c))
        fix = report.corrected(c.id)
        if fix is not None:
            parts.append(
                f'<div class="corrected"><p><strong>Corrected</strong> (<a href="#{esc(claim_anchor(fix.id))}">'
                f"<code>{esc(fix.id)}</code></a> {' '.join(badge(v) for v in fix.verdicts())}):</p>"
                f"<p>{esc(fix.statement)}</p></div>"
            )
        else:
            parts.append("<p><em>No corrected statement is registered for this claim.</em></p>")
        parts.append("</div>")
    parts.append("</section>")
    return "".join(parts)


def _figure(fig: Figure) -> str:
    data = ""
    if fig.rows:
        data = (
            "<details><summary>Data</summary>"
            + _table([esc(h) for h in fig.header], [[esc(c) for c in r] for r in fig.rows])
            + "</details>"
        )
    return (
        f'<figure id="{esc(fig.ident)}">{fig.svg}<figcaption><strong>{esc(fig.title)}.</strong> '
        f"{esc(fig.caption)}</figcaption>{data}</figure>"
    )


def _figures(report: Report, figs: list[Figure]) -> str:
    parts = ['<section id="figures"><h2>Figures</h2>']
    if not figs:
        parts.append("<p>These runs recorded no data for figures.</p>")
    parts += [_figure(f) for f in figs]
    parts.append("</section>")
    return "".join(parts)


def _claim(report: Report, c: ClaimRow, out_dir: Path) -> str:
    parts = [f'<article class="claim" id="{esc(claim_anchor(c.id))}">']
    parts.append(f"<h3><code>{esc(c.id)}</code> {' '.join(badge(v) for v in c.verdicts())}</h3>")
    parts.append(f'<p class="meta">{esc(c.where)} · kind: {esc(c.kind)} · {esc(ct.paper_title(c.paper))}</p>')
    if c.corrects:
        parts.append(
            f'<p class="meta">Corrects <a href="#{esc(claim_anchor(c.corrects))}">'
            f"<code>{esc(c.corrects)}</code></a>.</p>"
        )
    parts.append(f"<blockquote>{esc(c.statement)}</blockquote>")
    if len(report.runs) > 1:
        parts.append(
            "<p>" + " · ".join(f"{esc(label)}: {badge(v)}" for label, v in ct.verdict_summary(report, c)) + "</p>"
        )
    notes = [(report.runs[i].label, e.get("notes")) for i, e in c.present() if e.get("notes")]
    for label, text in notes[:1]:
        run = f" <small>({esc(label)})</small>" if len(report.runs) > 1 else ""
        parts.append(f"<p><strong>Notes.</strong> {esc(text)}{run}</p>")
    rows = ct.evidence_rows(report, c)
    multi = len(report.runs) > 1
    header = ct.evidence_header(multi)
    body = []
    for r in rows:
        cells = ([esc(r.run)] if multi else []) + [
            f"<code>{esc(r.check)}</code>",
            esc(r.method),
            esc(r.backend),
            esc(r.cases),
            esc(r.ratio),
            esc(r.seconds),
            f'<span class="r-{esc(r.result)}">{esc(r.result)}</span>',
        ]
        body.append(cells)
    k = 1 if multi else 0
    parts.append(_table(header, body, numeric={k + 3, k + 4, k + 5}))
    with_notes = [r for r in rows if r.notes]
    if with_notes:
        parts.append(f'<details><summary>Evidence notes ({len(with_notes)})</summary><ul class="notes">')
        parts += [
            f"<li><code>{esc(r.check)}</code> [{esc(r.backend)}]{' (' + esc(r.run) + ')' if multi else ''}: "
            f"{esc(r.notes)}</li>"
            for r in with_notes
        ]
        parts.append("</ul></details>")
    parts.append(_counterexample(report, c))
    fig = claim_figure(report, c)
    if fig is not None:
        parts.append(f"<details><summary>Figure: worst test ratio against n</summary>{_figure(fig)}</details>")
    link = ct.proof_link(report, c, out_dir)
    if link is None:
        parts.append(f"<p>No proof notes are shipped for <code>{esc(c.paper)}</code>.</p>")
    else:
        parts.append(f'<p>Proof notes: <a href="{esc(link.href)}">{esc(link.label)}</a></p>')
        if link.entry is not None:
            base = relative_link(link.entry.file.parent, out_dir) + "/"
            parts.append(
                "<details><summary>Read the proof notes here</summary>"
                + to_html(link.entry.body, link_base=base, heading_offset=2)
                + "</details>"
            )
    parts.append("</article>")
    return "".join(parts)


def _claims(report: Report, out_dir: Path) -> str:
    parts = ['<section id="claims"><h2>Claims</h2>']
    for p in report.papers():
        parts.append(f'<h2 id="paper-{esc(p)}"><code>{esc(p)}</code>: {esc(ct.paper_title(p))}</h2>')
        parts += [_claim(report, c, out_dir) for c in report.claims if c.paper == p]
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Report, out_dir: Path, figures: list[Figure] | None = None) -> str:
    """The whole report as one HTML document (links computed relative to ``out_dir``)."""
    from orthoverify import __version__

    figs = report_figures(report) if figures is None else figures
    runs = ", ".join(r.label for r in report.runs)
    title = f"orthoverify report: {runs}"
    counts = ct.verdict_rows(report)
    total = sum(ns[0] for v, ns in counts if v != "total")
    lead = " · ".join(f"{ns[0]} {v}" for v, ns in counts if v != "total" and ns[0])
    nav = (
        '<nav><a href="#summary">Summary</a><a href="#errata">Errata</a><a href="#figures">Figures</a>'
        + "".join(f'<a href="#paper-{esc(p)}">{esc(p)}</a>' for p in report.papers())
        + "</nav>"
    )
    return (
        f'<!DOCTYPE html>\n{ct.sources_comment(report)}\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>orthoverify verification report</h1>"
        f'<p class="meta">{esc(runs)} · {total} claims in the first run: {esc(lead)}</p>{nav}</header>'
        f"<main>{_summary(report)}{_errata(report)}{_figures(report, figs)}{_claims(report, out_dir)}</main>"
        f"<footer>Rendered by orthoverify {esc(__version__)} from {esc(', '.join(r.path for r in report.runs))}. "
        "A verdict is earned by the checks listed under each claim; every counterexample replays with the "
        "command shown.</footer></body></html>\n"
    )
