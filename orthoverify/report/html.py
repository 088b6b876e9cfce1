"""The HTML report: one self-contained file (inline CSS, inline SVG, no script, no network)."""

from __future__ import annotations

import html
from pathlib import Path

from orthoverify._package import __version__
from orthoverify.notation import shorten, typeset
from orthoverify.report import content as ct
from orthoverify.report.figures import Figure, claim_figure, no_report_figures, report_figures
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
#summary th,#summary td{overflow-wrap:anywhere}
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
.erratum{border:1px solid #ffcecb;border-radius:8px;padding:2px 14px 10px;margin:1em 0}
.corrected{border-left:4px solid var(--ok);padding:.1em .8em;background:#f3fbf5}
figure{margin:1.2em 0;padding:0}
figure svg{display:block;width:100%;height:auto}
figcaption{color:var(--muted);font-size:.9em;margin-top:.3em}
details{margin:.4em 0}
summary{cursor:pointer;color:var(--link)}
.notes li{margin:.2em 0;font-size:.9em}
footer{color:var(--muted);font-size:.85em;padding:2em 16px}
.cols{display:flex;flex-wrap:wrap;gap:0 24px;align-items:flex-start}
.flt{position:absolute;opacity:0;width:1px;height:1px}
.filters{margin:.4em 0;line-height:2}
.filters label{display:inline-block;border:1px solid var(--line);border-radius:12px;padding:0 9px;margin:0 2px;
cursor:pointer;font-size:.88em;white-space:nowrap}
.flt:focus-visible~.filters{outline:2px solid var(--link)}
.idx{list-style:none;padding:0;margin:.4em 0;border-top:1px solid var(--line)}
.idx li{display:flex;flex-wrap:wrap;align-items:baseline;gap:0 8px;padding:3px 0;border-bottom:1px solid var(--line)}
.where{color:var(--muted);font-size:.9em}
.idx .stmt{flex:1 1 16em;min-width:0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-size:.9em;
color:var(--muted)}
.idx .why{flex:1 1 100%;font-size:.9em;padding-left:1em;color:var(--bad);overflow-wrap:anywhere}
.reason{border-left:4px solid var(--bad);padding:.1em .8em;background:#fff8f7}
tr.refutes td{background:#fff1f0}
details.claim{border-top:1px solid var(--line);padding:.3em 0}
details.claim>summary{color:var(--fg)}
details.claim[open]>summary{margin-bottom:.4em}
.erratum h3{margin-top:.6em}
.replay{white-space:pre-wrap;word-break:normal;overflow-wrap:normal}
@media (max-width:600px){body{font-size:14px}th,td{padding:2px 4px}h1{font-size:1.3em}
header,main,footer{padding:0 10px}.erratum{padding:2px 8px 8px}}
"""


def esc(x: object) -> str:
    return html.escape(str(x))


def badge(verdict: str | None) -> str:
    if verdict is None:
        return '<span class="v v-absent">not run</span>'
    style = "inconclusive" if verdict in ("unsupported", "fragile") else verdict  # findings of validate, no defect
    return f'<span class="v v-{esc(style)}">{esc(verdict)}</span>'


def claim_anchor(claim_id: str) -> str:
    return "claim-" + claim_id


def _table(
    header: list[str], rows: list[list[str]], numeric: set[int] | None = None, marked: set[int] | None = None
) -> str:
    """A table from cells that are already HTML; rows in ``marked`` are highlighted."""
    numeric = numeric or set()
    marked = marked or set()
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f"<th>{h}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for k, r in enumerate(rows):
        cells = [f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)]
        out.append(('<tr class="refutes">' if k in marked else "<tr>") + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _summary(report: Report) -> str:
    """Counts per verdict and per paper (papers cited by authors, title, venue), and the runs
    (profile, seed, duration, environment) folded."""
    labels = [esc(r.label) for r in report.runs]
    parts = ['<section id="summary"><h2>Summary</h2><div class="cols">']
    counts = ct.verdict_rows(report)
    parts.append(  # one row per verdict, one column per run: as narrow as the runs are few (a phone)
        _table(
            ["verdict", *labels],
            [[badge(v) if v != "total" else "total", *(str(n) for n in ns)] for v, ns in counts],
            numeric=set(range(1, len(labels) + 1)),
        )
    )
    parts.append(
        _table(
            ["paper", *labels],
            [
                [f'<a href="#paper-{esc(p)}">{esc(ct.paper_title(p, report.paper_info))}</a>', *(esc(c) for c in cells)]
                for p, cells in ct.paper_rows(report)
            ],
        )
    )
    parts.append("</div>")
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
    parts.append(
        "<details><summary>Runs: profile, seed, duration, environment</summary>"
        + _table(["", *labels], [[esc(k), *(esc(v) for v in vals)] for k, vals in ct.run_rows(report)])
        + "</details>"
    )
    parts.append("</section>")
    return "".join(parts)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text)


def _index(report: Report) -> str:
    """Every claim on one line (verdict, where in the paper, and for a refuted claim the reason),
    filtered by paper and verdict with radio buttons and CSS alone (the page has no script)."""
    verdicts = [v for v in ct.VERDICTS if any(v in c.verdicts() for c in report.claims)]
    papers = report.papers()
    parts = ['<section id="index"><h2>Index</h2>']
    parts.append(
        '<p class="meta">Every claim, one line each; a refuted claim links to its erratum (reason, '
        "counterexample, replay command), every claim to its details below.</p>"
    )
    radios, labels_v, labels_p, rules = [], [], [], []
    radios.append('<input type="radio" name="fv" id="fv-all" class="flt" checked>')
    labels_v.append('<label for="fv-all">all</label>')
    for v in verdicts:
        n = sum(1 for c in report.claims if v in c.verdicts())
        radios.append(f'<input type="radio" name="fv" id="fv-{esc(v)}" class="flt">')
        labels_v.append(f'<label for="fv-{esc(v)}">{esc(v)} ({n})</label>')
        rules.append(f"#fv-{v}:checked~.idx li:not(.fv-{v}){{display:none}}")
        rules.append(f'#fv-{v}:checked~.filters label[for="fv-{v}"]{{background:var(--panel);border-color:var(--fg)}}')
    radios.append('<input type="radio" name="fp" id="fp-all" class="flt" checked>')
    labels_p.append('<label for="fp-all">all papers</label>')
    for p in papers:
        s = _slug(p)
        radios.append(f'<input type="radio" name="fp" id="fp-{esc(s)}" class="flt">')
        labels_p.append(f'<label for="fp-{esc(s)}">{esc(ct.paper_short(p, report.paper_info))}</label>')
        rules.append(f"#fp-{s}:checked~.idx li:not(.fp-{s}){{display:none}}")
        rules.append(f'#fp-{s}:checked~.filters label[for="fp-{s}"]{{background:var(--panel);border-color:var(--fg)}}')
    rules.append(
        '#fv-all:checked~.filters label[for="fv-all"],#fp-all:checked~.filters label[for="fp-all"]'
        "{background:var(--panel);border-color:var(--fg)}"
    )
    parts.append(f"<style>{''.join(rules)}</style>")
    parts += radios
    parts.append(
        '<div class="filters"><span class="meta">verdict:</span> '
        + " ".join(labels_v)
        + '<br><span class="meta">paper:</span> '
        + " ".join(labels_p)
        + "</div>"
    )
    parts.append('<ul class="idx">')
    for c in report.claims:
        vs = c.verdicts()
        classes = " ".join([f"fp-{_slug(c.paper)}", *sorted({f"fv-{v}" for v in vs if v is not None})])
        target = f"erratum-{c.id}" if c.refuted else claim_anchor(c.id)
        text = ct.reason(report, c) if c.refuted else typeset(shorten(c.statement, 110))
        cls = "why" if c.refuted else "stmt"
        parts.append(
            f'<li class="{esc(classes)}"><a href="#{esc(target)}"><code>{esc(c.id)}</code></a> '
            + " ".join(badge(v) for v in vs)
            + f' <span class="where">{esc(c.where)}</span>'
            + f' <span class="{cls}">{esc(text)}</span></li>'
        )
    parts.append("</ul></section>")
    return "".join(parts)


def _claim_link(c: ClaimRow) -> str:
    return f'<a href="#{esc(claim_anchor(c.id))}"><code>{esc(c.id)}</code></a>'


def _counterexample(report: Report, claim: ClaimRow) -> str:
    """The counterexample in three lines (which check, at what precision, on which inputs), its
    values and inputs folded, and the command that replays it."""
    cx = ct.counterexample_view(report, claim)
    if cx is None:
        return ""
    items = [f"<li>{esc(a)}{f'<code>{esc(v)}</code>' if v else ''}{esc(b)}</li>" for a, v, b in cx.items()]
    names = ", ".join(cx.input_names)
    return (
        '<div class="cx"><p><strong>Counterexample</strong>: check '
        f"<code>{esc(cx.check)}</code>, {esc(cx.precision)}"
        + (f", on inputs {esc(names)}" if names else "")
        + f".</p><details><summary>Its values and inputs</summary><ul>{''.join(items)}</ul>"
        + f"<p>{esc(cx.inputs_heading)}</p><pre>{esc(cx.inputs)}</pre></details>"
        + f'<p class="meta">{esc(cx.replay_heading)}</p><pre class="replay"><code>{esc(cx.replay)}</code></pre></div>'
    )


def _breaks(report: Report, c: ClaimRow) -> str:
    """The evidence that refuted the claim, one line each: the check and its arithmetic, what
    fails and by how much, and the test ratio said as what it is; the counterexample itself is
    shown once, below."""
    rows = ct.refutations(report, c)
    if not rows:
        return ""
    items = "".join(f"<li><code>{esc(r.check)}</code> [{esc(r.backend)}]: {esc(r.text)}</li>" for r in rows)
    return f'<div class="refuted-by"><p><strong>Refuted by</strong> ({len(rows)}):</p><ul>{items}</ul></div>'


def _why(report: Report, c: ClaimRow) -> str:
    """Why the claim is refuted: every finding whole (a list when there are several)."""
    found = ct.reason_parts(report, c)
    if len(found) <= 1:
        return f'<p class="reason"><strong>Why:</strong> {esc(found[0] if found else "")}</p>'
    items = "".join(f"<li>{esc(f)}</li>" for f in found)
    return f'<div class="reason"><p><strong>Why</strong> ({len(found)} findings):</p><ul>{items}</ul></div>'


def _errata(report: Report) -> str:
    errata = report.errata()
    parts = [f'<section id="errata"><h2>Errata ({len(errata)})</h2>']
    if not errata:
        parts.append("<p>No claim was refuted.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Every claim refuted in a run: why, the statement as printed, the evidence that refutes it, "
        "the counterexample (confirmed at high precision or exactly) with the command that replays it, and "
        "the corrected statement where one is registered.</p>"
    )
    for c in errata:
        parts.append(f'<article class="erratum" id="erratum-{esc(c.id)}"><h3>{_claim_link(c)} ')
        parts.append(" ".join(badge(v) for v in c.verdicts()) + "</h3>")
        where, paper = c.where, ct.paper_short(c.paper, report.paper_info)
        parts.append(f'<p class="meta">{esc(where)} · {esc(paper)}</p>')
        parts.append(f"<blockquote>{esc(typeset(c.statement))}</blockquote>")
        parts.append(_why(report, c))
        parts.append(_breaks(report, c))
        parts.append(_counterexample(report, c))
        fix = report.corrected(c.id)
        if fix is not None:
            parts.append(
                f'<div class="corrected"><p><strong>Corrected</strong> (<a href="#{esc(claim_anchor(fix.id))}">'
                f"<code>{esc(fix.id)}</code></a> {' '.join(badge(v) for v in fix.verdicts())}):</p>"
                f"<p>{esc(typeset(fix.statement))}</p></div>"
            )
        else:
            parts.append('<p class="meta"><em>No corrected statement is registered for this claim.</em></p>')
        parts.append("</article>")
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
        parts.append(f"<p>{esc(no_report_figures(report))}</p>")
    parts += [_figure(f) for f in figs]
    parts.append("</section>")
    return "".join(parts)


def _claim(report: Report, c: ClaimRow, out_dir: Path) -> str:
    """One claim, folded: the summary line shows id, verdict and where; the body the statement,
    notes, evidence (the rows that refute marked), counterexample, figure and proof notes."""
    parts = [f'<details class="claim" id="{esc(claim_anchor(c.id))}"><summary>']
    parts.append(f"<code>{esc(c.id)}</code> {' '.join(badge(v) for v in c.verdicts())}")
    parts.append(f' <span class="where">{esc(c.where)}</span></summary>')
    parts.append(f'<p class="meta">kind: {esc(c.kind)} · {esc(ct.paper_short(c.paper, report.paper_info))}</p>')
    if c.corrects:
        parts.append(
            f'<p class="meta">Corrects <a href="#{esc(claim_anchor(c.corrects))}">'
            f"<code>{esc(c.corrects)}</code></a>.</p>"
        )
    parts.append(f"<blockquote>{esc(typeset(c.statement))}</blockquote>")
    if c.refuted:
        parts.append(
            f'<p class="reason"><strong>Why refuted:</strong> {esc(ct.reason(report, c))} '
            f'(<a href="#erratum-{esc(c.id)}">erratum</a>)</p>'
        )
    if len(report.runs) > 1:
        parts.append(
            "<p>" + " · ".join(f"{esc(label)}: {badge(v)}" for label, v in ct.verdict_summary(report, c)) + "</p>"
        )
    notes = [(report.runs[i].label, e.get("notes")) for i, e in c.present() if e.get("notes")]
    for label, text in notes[:1]:
        run = f" <small>({esc(label)})</small>" if len(report.runs) > 1 else ""
        parts.append(f"<p><strong>Notes.</strong> {esc(typeset(str(text)))}{run}</p>")
    rows = ct.evidence_rows(report, c)
    multi = len(report.runs) > 1
    header = ct.evidence_header(multi)
    body = []
    for r in rows:
        mark = "refutes ◀" if r.result == "counterexample" else r.result
        cells = ([esc(r.run)] if multi else []) + [
            f"<code>{esc(r.check)}</code>",
            esc(r.method),
            esc(r.backend),
            esc(r.cases),
            esc(r.ratio),
            esc(r.seconds),
            f'<span class="r-{esc(r.result)}">{esc(mark)}</span>',
        ]
        body.append(cells)
    k = 1 if multi else 0
    marked = {i for i, r in enumerate(rows) if r.result == "counterexample"}
    parts.append(_table(header, body, numeric={k + 3, k + 4, k + 5}, marked=marked))
    with_notes = [r for r in rows if r.notes]
    if with_notes:
        parts.append(f'<details><summary>Evidence notes ({len(with_notes)})</summary><ul class="notes">')
        parts += [
            f"<li><code>{esc(r.check)}</code> [{esc(r.backend)}]{' (' + esc(r.run) + ')' if multi else ''}: "
            f"{esc(typeset(r.notes))}</li>"
            for r in with_notes
        ]
        parts.append("</ul></details>")
    parts.append(_counterexample(report, c))
    fig = claim_figure(report, c)
    if fig is not None:
        what = fig.title.rsplit(": ", 1)[-1]
        parts.append(f"<details><summary>Figure: {esc(what)}</summary>{_figure(fig)}</details>")
    link = ct.proof_link(report, c, out_dir)
    if link is None:
        parts.append(f"<p>No proof notes are shipped for <code>{esc(c.paper)}</code>.</p>")
    else:
        source = f'<a href="{esc(link.href)}">{esc(link.label)}</a>' if link.href else f"<code>{esc(link.label)}</code>"
        if link.entry is not None:
            base = relative_link(link.entry.file.parent, out_dir) + "/" if link.href else ""
            parts.append(
                "<details><summary>Proof notes</summary>"
                + to_html(link.entry.body, link_base=base, heading_offset=2)
                + f'<p class="meta">From {source} in the orthoverify repository.</p></details>'
            )
        else:
            parts.append(f"<p>Proof notes: {source} in the orthoverify repository.</p>")
    parts.append("</details>")
    return "".join(parts)


def _claims(report: Report, out_dir: Path) -> str:
    parts = ['<section id="claims"><h2>Claims</h2><p class="meta">Each claim folded: open it for its evidence.</p>']
    for p in report.papers():
        parts.append(f'<h3 id="paper-{esc(p)}">{esc(ct.paper_title(p, report.paper_info))}</h3>')
        parts += [_claim(report, c, out_dir) for c in report.claims if c.paper == p]
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Report, out_dir: Path, figures: list[Figure] | None = None) -> str:
    """The whole report as one HTML document (links computed relative to ``out_dir``)."""
    figs = report_figures(report) if figures is None else figures
    runs = ", ".join(r.label for r in report.runs)
    title = f"orthoverify report: {runs}"
    counts = ct.verdict_rows(report)
    total = sum(ns[0] for v, ns in counts if v != "total")
    lead = " · ".join(f"{ns[0]} {v}" for v, ns in counts if v != "total" and ns[0])
    scope = "" if len(report.runs) == 1 else " in the first run"
    nav = (
        '<nav><a href="#summary">Summary</a><a href="#index">Index</a><a href="#errata">Errata</a>'
        '<a href="#figures">Figures</a><a href="#claims">Claims</a></nav>'
    )
    return (
        f'<!DOCTYPE html>\n{ct.sources_comment(report)}\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>orthoverify verification report</h1>"
        f'<p class="meta">{esc(runs)} · {ct.plural(total, "claim")}{scope}: {esc(lead)}</p>{nav}</header>'
        f"<main>{_summary(report)}{_index(report)}{_errata(report)}{_figures(report, figs)}"
        f"{_claims(report, out_dir)}</main>"
        f"<footer>Rendered by orthoverify {esc(__version__)} from {esc(', '.join(r.path for r in report.runs))}. "
        "A verdict is earned by the checks listed under each claim; every counterexample replays with the "
        "command shown.</footer></body></html>\n"
    )
