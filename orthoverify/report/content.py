"""What the HTML and Markdown reports both say, computed once: rows of the tables, the
counterexample lines, the replay commands, the proof links. The renderers only lay it out."""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orthoverify.engine.model import COUNTED, VERDICTS, Paper
from orthoverify.engine.ratios import THRESHOLD
from orthoverify.notation import math_text, shorten
from orthoverify.report.model import (
    ClaimRow,
    ProofEntry,
    Report,
    as_float,
    fmt_num,
    in_checkout,
    proof_entry,
    proof_file,
    relative_link,
)
from orthoverify.report.model import paper_title as paper_title  # the citation, from the result's papers

MAX_INPUT_CHARS = 3000
"""Counterexample inputs longer than this are shortened in the report (the JSON has them all)."""


def plural(n: int, noun: str) -> str:
    """``1 claim``, ``2 claims``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def sources_mark(report: Report) -> str:
    """The runs a report is rendered from (each result file and when its run started), as its
    first lines record them (an HTML comment ``<!-- orthoverify-sources: ... -->``), so that
    rendering another run over it, even one written to the same file, can say so."""
    runs = (f"{r.path} (started {r.data.get('started', '?')})" for r in report.runs)
    # no "--" left (an HTML comment cannot be closed early) and no markup, even inside the comment
    return re.sub(r"-(?=-)", "- ", ", ".join(runs)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sources_comment(report: Report) -> str:
    return f"<!-- orthoverify-sources: {sources_mark(report)} -->"


def run_rows(report: Report) -> list[tuple[str, list[str]]]:
    """The runs side by side: (field, one value per run)."""
    runs = report.runs
    rows: list[tuple[str, list[str]]] = [
        ("result file", [r.path for r in runs]),
        ("profile", [r.profile for r in runs]),
        ("seed", [str(r.seed) for r in runs]),
        ("duration", [f"{r.seconds:.1f} s" for r in runs]),
        ("started", [str(r.data.get("started", "–")) for r in runs]),
        ("workers", [str(r.data.get("workers", "–")) for r in runs]),
        ("orthoverify", [str(r.data.get("orthoverify", "–")) for r in runs]),
        ("claims", [str(len(r.data["claims"])) for r in runs]),
    ]
    keys: list[str] = []
    for r in runs:
        keys += [k for k in r.environment if k not in keys and k != "orthoverify"]
    rows += [(k, [str(r.environment.get(k, "–")) for r in runs]) for k in keys]
    return rows


def verdict_rows(report: Report) -> list[tuple[str, list[int]]]:
    """Counts per verdict, one column per run, and the total."""
    counts = [r.counts() for r in report.runs]
    rows = [(v, [c.get(v, 0) for c in counts]) for v in VERDICTS if v in COUNTED or any(c.get(v) for c in counts)]
    rows.append(("total", [len(r.data["claims"]) for r in report.runs]))
    return rows


def paper_rows(report: Report) -> list[tuple[str, list[str]]]:
    """Counts per paper, one cell per run ("13 verified, 5 refuted")."""
    out = []
    for p in report.papers():
        cells = []
        for r in report.runs:
            c = r.counts(p)
            cells.append(", ".join(f"{n} {v}" for v, n in c.items() if n) or "–")
        out.append((p, cells))
    return out


@dataclass(frozen=True)
class EvidenceRow:
    run: str
    check: str
    method: str
    backend: str
    cases: str
    ratio: str
    seconds: str
    result: str
    notes: str


EVIDENCE_COLUMNS = ("check", "method", "backend", "cases", "worst ratio / threshold", "time (s)", "result")


def evidence_header(multi: bool) -> list[str]:
    """The evidence table's columns (with the run's label first when several runs are merged)."""
    return (["run"] if multi else []) + list(EVIDENCE_COLUMNS)


def evidence_rows(report: Report, claim: ClaimRow) -> list[EvidenceRow]:
    out = []
    for i, entry in claim.present():
        for ev in entry.get("evidence", []):
            if ev.get("error"):
                result = "error"
            elif ev.get("passed"):
                result = "pass"
            elif ev.get("refutes", (entry.get("counterexample") or {}).get("check") == ev["check"]):
                result = "counterexample"
            else:
                result = "fail"
            thr = ev.get("threshold")
            wr = ev.get("worst_ratio")
            if wr is None and thr is None:
                ratio = "exact"
            else:
                ratio = f"{fmt_num(wr)} / {fmt_num(thr)}" if thr is not None else fmt_num(wr)
            notes = ev.get("notes") or ""
            if ev.get("error"):
                notes = (notes + " " + str(ev["error"]).strip().splitlines()[0]).strip()
            out.append(
                EvidenceRow(
                    report.runs[i].label,
                    ev["check"],
                    ev.get("method", ""),
                    ev.get("backend", ""),
                    str(ev.get("cases", "")),
                    ratio,
                    f"{float(ev.get('seconds', 0.0)):.2f}",
                    result,
                    notes,
                )
            )
    return out


@dataclass(frozen=True)
class CounterexampleView:
    run: str
    check: str
    quantity: str
    value: str
    precision: str
    float64: str | None
    threshold: str | None
    inputs: str
    truncated: bool
    replay: str
    target: str | None = None
    """The target a validate run judged (its replay runs that code), None for a check run."""
    float64_elsewhere: str | None = None
    """Where the counterexample's float64 value passes: the failing float64 evidence of the
    same run on other inputs (its test ratio and check), which the replay shows too."""

    def items(self) -> list[tuple[str, str, str]]:
        """The facts to list, each as (text before, code value or "", text after)."""
        out = [
            ("check ", self.check, f" (run {self.run})"),
            (f"{math_text(self.quantity)} = ", math_text(self.value), f" ({self.precision})"),
        ]
        if self.float64 is not None:
            out.append(("in float64: ", math_text(self.float64), ""))
        if self.float64_elsewhere is not None:
            out.append((f"float64 fails on other inputs: {self.float64_elsewhere}", "", ""))
        if self.threshold is not None:
            out.append((f"threshold: {self.threshold}", "", ""))
        return out

    @property
    def input_names(self) -> list[str]:
        return [line.split(" = ", 1)[0] for line in self.inputs.splitlines() if " = " in line]

    @property
    def inputs_heading(self) -> str:
        return "Inputs" + (" (shortened; the JSON result has every digit)" if self.truncated else "") + ":"

    @property
    def replay_heading(self) -> str:
        if self.target is not None:
            return "Replay it on the target (this imports and runs the target; replay never does on the file's word):"
        if self.precision == "exact":
            return "Replay it (exact arithmetic):"
        return f"Replay it ({'float64 and ' if self.float64 is not None else ''}{self.precision}):"


def counterexample_view(report: Report, claim: ClaimRow) -> CounterexampleView | None:
    found = claim.counterexample()
    if found is None:
        return None
    i, cx = found
    digits = cx.get("precision_digits")
    precision = "exact" if digits == "exact" else f"{digits} digits"
    inputs = format_inputs(cx.get("inputs") or {})
    truncated = len(inputs) > MAX_INPUT_CHARS
    if truncated:
        inputs = inputs[:MAX_INPUT_CHARS] + "\n…"
    thr = cx.get("threshold")
    target = claim.where if claim.paper == "conformance" and claim.id.startswith("conformance.") else None
    return CounterexampleView(
        report.runs[i].label,
        str(cx.get("check", "")),
        _quantity_shown(cx),
        str(cx.get("value", "")),
        precision,
        cx.get("float64_value"),
        fmt_num(thr) if thr is not None else None,
        inputs,
        truncated,
        replay_command(report.runs[i].path, claim.id, target),
        target,
        _float64_elsewhere(claim, i, cx),
    )


def _quantity_shown(cx: dict[str, Any]) -> str:
    """The counterexample's quantity as its value reads: an exact bare number is an entry of the
    exact difference (the quantity's scale by n ε means nothing without rounding)."""
    quantity = str(cx.get("quantity", ""))
    if cx.get("precision_digits") == "exact" and _NUMBER_ONLY.fullmatch(str(cx.get("value", "")).strip()):
        return f"an entry of {_norm_inside(quantity).strip()} (0 if the claim held)"
    return quantity


def _float64_elsewhere(claim: ClaimRow, run: int, cx: dict[str, Any]) -> str | None:
    """The first failing float64 evidence of run ``run`` (the one the replay shows) when the
    counterexample's own float64 value is within the threshold (it breaks only at high precision),
    said as test ratio and check."""
    thr = as_float(cx.get("threshold"))
    if not math.isfinite(thr):
        thr = THRESHOLD
    if cx.get("precision_digits") == "exact" or not (as_float(cx.get("float64_value")) <= thr):
        return None
    entry = claim.entries[run] or {}
    failing = [
        ev for ev in entry.get("evidence", [])
        if "float64" in str(ev.get("backend", "")) and ev.get("passed") is False and ev.get("counterexample")
    ]  # fmt: skip
    if not failing:
        return None
    first = failing[0]  # the case the replay shows (orthoverify.engine.replay.with_float64_case)
    return (
        f"test ratio {fmt_num(as_float(first.get('worst_ratio')))} > {fmt_num(first.get('threshold'))} "
        f"(check {first['check']} [{first['backend']}]; the replay shows that case too)"
    )


def format_inputs(inputs: dict[str, Any]) -> str:
    """Counterexample inputs, one per line: ``name = value`` (matrices as nested lists)."""
    lines = []
    for k, v in inputs.items():
        text = v if isinstance(v, str) else json.dumps(v, separators=(", ", ": "))
        lines.append(f"{k} = {text}")
    return "\n".join(lines)


def replay_command(path: str, claim_id: str, target: str | None = None) -> str:
    """The shell line that replays ``claim_id`` of the result at ``path`` (on ``target``, for a
    validate run: replay runs a validate counterexample only on a target named on its command line)."""
    line = f"orthoverify replay {shlex.quote(path)} {shlex.quote(claim_id)}"
    return line if target is None else f"{line} --target {shlex.quote(target)}"


@dataclass(frozen=True)
class ProofLink:
    """A claim's proof notes: the entry (embedded in the report, so that it reads anywhere), its
    name (``<paper>.md — id``), and a link to the file only where the link works wherever the
    repository is read (None otherwise)."""

    href: str | None
    label: str
    entry: ProofEntry | None


def proof_link(report: Report, claim: ClaimRow, out_dir: Path) -> ProofLink | None:
    """The claim's proof notes. The file is linked (relative to the report's folder) only when the
    notes are the repository's ``proofs/`` and the report is written inside that repository, so the
    link holds in a clone and on a code host; a report written elsewhere, or from an installed copy,
    never links into a virtual environment or a folder of this machine: it embeds the entry."""
    f = proof_file(report.proofs_dir, claim.paper)  # a registered paper key only, never a path from the file
    if f is None:
        return None
    entry = proof_entry(report.proofs_dir, claim.paper, claim.id)
    href = None
    repo = in_checkout(f.parent)
    if repo is not None and out_dir.resolve().is_relative_to(repo):
        href = relative_link(f, out_dir) + (f"#{entry.anchor}" if entry is not None else "")
    label = f"proofs/{claim.paper}.md" + (f" — {claim.id}" if entry is not None else "")
    return ProofLink(href, label, entry)


def verdict_summary(report: Report, claim: ClaimRow) -> list[tuple[str, str | None]]:
    """(run label, verdict or None) for every run."""
    return [(r.label, v) for r, v in zip(report.runs, claim.verdicts(), strict=True)]


def worst_ratio_text(entry: dict[str, Any] | None) -> str:
    if entry is None or entry.get("worst_ratio") is None:
        return "–"
    return f"{fmt_num(entry['worst_ratio'])} / {fmt_num(entry.get('worst_ratio_threshold'))}"


# ------------------------------------------------------------------------------ reading aids
def paper_short(key: str, papers: Mapping[str, Paper]) -> str:
    """The paper's short citation: first author et al., venue, and the method's name (the key
    itself for a paper the result files do not describe)."""
    paper = papers.get(key)
    if paper is None:
        return key
    first = paper.authors.split(",")[0].strip()
    more = " et al." if "," in paper.authors else ""
    return f"{paper.short}: {first}{more}, {paper.venue}"


def refuting_rows(report: Report, claim: ClaimRow) -> list[EvidenceRow]:
    """The evidence rows that hold a confirmed counterexample."""
    return [r for r in evidence_rows(report, claim) if r.result == "counterexample"]


_TERM = r"(?:\d+(?:\.\d+)?(?:/\d+)?|sqrt\(\d+\))"
_NUMBER_ONLY = re.compile(rf"[-+]?\s*{_TERM}(?:\s*[-+*/]\s*{_TERM})*")
"""An exact value that is a bare number (``-6``, ``2``, ``3/5``, ``1 - sqrt(2)``)."""


def _parts(value: str) -> list[str]:
    """A value that lists several findings (joined by `` | `` or `` || ``), one finding each."""
    return [p.strip() for p in re.split(r" \|\|? ", value) if p.strip()]


def _norm_inside(quantity: str) -> str:
    """The difference a quantity measures: the inside of its first norm ``||X - Y||``, else the
    quantity itself (``printed gradient - SymPy's exact derivative``)."""
    m = re.search(r"\|\|(.+?)\|\|", quantity)
    return m.group(1) if m else quantity


def reason_parts(report: Report, claim: ClaimRow) -> list[str]:
    """Why a refuted claim is refuted, each finding whole (never cut inside a display), in the
    paper's notation: the recorded counterexample's breaking value; an exact value that is a bare
    number says what it is (an entry of the exact difference, which the claim needs to be 0); a
    value measured in floating point is the test ratio against its threshold at the confirming
    precision."""
    found = claim.counterexample()
    if found is None:
        return []
    _i, cx = found
    value = str(cx.get("value", ""))
    quantity = str(cx.get("quantity", ""))
    digits = cx.get("precision_digits")
    try:
        ratio: float | None = float(value)
    except ValueError:
        ratio = None
    if ratio is not None and digits != "exact":
        thr = cx.get("threshold")
        parts = [
            f"{quantity}: test ratio {fmt_num(ratio)}"
            + (f" > {fmt_num(thr)}" if thr is not None else "")
            + f" at {digits} digits"
        ]
    elif digits == "exact" and _NUMBER_ONLY.fullmatch(value.strip()):
        parts = [f"{_norm_inside(quantity).strip()} is not 0: an entry equals {value.strip()} in exact arithmetic"]
    else:
        parts = _parts(value)
    return [math_text(_LONG_DECIMAL.sub(lambda m: f"{float(m.group(0)):.6g}", p)) for p in parts]


def reason(report: Report, claim: ClaimRow, limit: int = 200) -> str:
    """The reason on one line (the index): the first finding, cut only between clauses when it is
    long, and how many more there are (the erratum lists them all)."""
    parts = reason_parts(report, claim)
    if not parts:
        return ""
    first = parts[0]
    if len(first) > limit:
        clauses = re.split(r"(?<=[;)]) ", first)
        kept = clauses[0]
        for c in clauses[1:]:
            if len(kept) + 1 + len(c) > limit:
                break
            kept += " " + c
        first = kept.rstrip(";,") + (" …" if kept != first else "")
    more = len(parts) - 1
    return first + (f" (and {plural(more, 'more finding')})" if more else "")


@dataclass(frozen=True)
class Refutation:
    """One piece of evidence that refutes a claim, for a reader: the check, the arithmetic, what
    fails and by how much (from the evidence's confirmation), and the test ratio in words."""

    check: str
    backend: str
    method: str
    what: str
    ratio: str

    @property
    def text(self) -> str:
        """What fails and the ratio on one line (the ratio first when the quantity is itself the
        ratio, and ``what`` only says that a higher precision confirms it)."""
        if not self.what:
            return self.ratio
        if self.what.startswith("the same inputs"):
            return f"{self.ratio}; {self.what}"
        return f"{self.what}; {self.ratio}"


_CONFIRMED = re.compile(r"failure on (\S+) \((.*)\) confirmed: (.*)$", re.S)


def _what_fails(notes: str) -> str:
    """What fails and by how much, from an evidence's confirmation note (``failure on B (what)
    confirmed: discrepancy 3.82 at 50 digits, ...`` or ``... its ratio in 50-digit arithmetic is X``)."""
    m = _CONFIRMED.search(" ".join(notes.split()))
    if m is None:
        return ""
    what, confirmed = m.group(2), m.group(3)
    gap = re.match(r"discrepancy (\S+) at (\d+) digits", confirmed)
    try:
        float(what)
        numeric = True
    except ValueError:
        numeric = False
    if not numeric:
        return shorten(math_text(_LONG_DECIMAL.sub(lambda x: f"{float(x.group(0)):.6g}", what)), 140)
    if gap:
        return f"computed and true value differ by {gap.group(1)} (relative), confirmed at {gap.group(2)} digits"
    again = re.match(r"its ratio in (\d+)-digit arithmetic is (\S+)", confirmed)
    if again:
        return f"the same inputs at {again.group(1)} digits: test ratio {again.group(2)}, so not a rounding accident"
    return ""


def _ratio_words(row: EvidenceRow, method: str) -> str:
    """The test ratio against the threshold, said as what it is: the error in units of what
    rounding in that arithmetic allows."""
    if row.ratio == "exact" or method == "symbolic" or " / " not in row.ratio:
        return "exact arithmetic: no rounding, so no threshold"
    ratio, thr = row.ratio.split(" / ", 1)
    return f"test ratio {ratio}: the error is {ratio} times what rounding in {row.backend} allows (threshold {thr})"


def refutations(report: Report, claim: ClaimRow) -> list[Refutation]:
    """The evidence that refutes the claim, each with what fails and its test ratio in words."""
    out = []
    for r in refuting_rows(report, claim):
        what = _what_fails(r.notes)
        if not what and (r.ratio == "exact" or r.method == "symbolic"):
            what = "the counterexample below"
        out.append(Refutation(r.check, r.backend, r.method, what, _ratio_words(r, r.method)))
    return out


_LONG_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{7,}(?![\d.])")
"""A decimal with more digits than a one-line reason needs (the counterexample keeps them all)."""
