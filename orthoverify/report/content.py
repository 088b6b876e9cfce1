"""What the HTML and Markdown reports both say, computed once: rows of the tables, the
counterexample lines, the replay commands, the proof links. The renderers only lay it out."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orthoverify.engine.model import COUNTED, VERDICTS
from orthoverify.report.model import (
    ClaimRow,
    ProofEntry,
    Report,
    fmt_num,
    proof_entry,
    proof_file,
    relative_link,
)
from orthoverify.report.model import paper_title as paper_title  # the citation, from the claim family

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

    def items(self) -> list[tuple[str, str, str]]:
        """The facts to list, each as (text before, code value or "", text after)."""
        out = [
            ("check ", self.check, f" (run {self.run})"),
            (f"{self.quantity} = ", self.value, f" ({self.precision})"),
        ]
        if self.float64 is not None:
            out.append(("in float64: ", self.float64, ""))
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
        return "Replay it (float64 and high precision):"


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
        str(cx.get("quantity", "")),
        str(cx.get("value", "")),
        precision,
        cx.get("float64_value"),
        fmt_num(thr) if thr is not None else None,
        inputs,
        truncated,
        replay_command(report.runs[i].path, claim.id, target),
        target,
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
    href: str
    label: str
    entry: ProofEntry | None


def proof_link(report: Report, claim: ClaimRow, out_dir: Path) -> ProofLink | None:
    """Where the claim's proof notes are, relative to the report's folder."""
    f = proof_file(report.proofs_dir, claim.paper)  # a registered paper key only, never a path from the file
    if f is None:
        return None
    entry = proof_entry(report.proofs_dir, claim.paper, claim.id)
    href = relative_link(f, out_dir) + (f"#{entry.anchor}" if entry is not None else "")
    return ProofLink(href, f"{claim.paper}.md" + (f" — {claim.id}" if entry is not None else ""), entry)


def verdict_summary(report: Report, claim: ClaimRow) -> list[tuple[str, str | None]]:
    """(run label, verdict or None) for every run."""
    return [(r.label, v) for r, v in zip(report.runs, claim.verdicts(), strict=True)]


def worst_ratio_text(entry: dict[str, Any] | None) -> str:
    if entry is None or entry.get("worst_ratio") is None:
        return "–"
    return f"{fmt_num(entry['worst_ratio'])} / {fmt_num(entry.get('worst_ratio_threshold'))}"


# ------------------------------------------------------------------------------ reading aids
_LEGACY_NUMBERS = {"001": "householder", "002": "cayley", "003": "svd", "004": "unitary"}
"""Some claims' ``where`` still cite a paper by a number ("004 Lemma 1"); the report shows the
paper's short name instead ("uRNN Lemma 1"), never the number."""

_NUMBER = re.compile(r"\b(00[1-4])\b(?=[ ,;.'’]|$)")


def display_where(where: str) -> str:
    """A claim's location in the paper's own numbering, with any paper number replaced by the
    paper's short name (``004 Lemma 1`` reads ``uRNN Lemma 1``)."""
    from orthoverify.engine.registry import default_modules, get_registry

    papers = get_registry(default_modules()).papers

    def name(m: re.Match[str]) -> str:
        paper = papers.get(_LEGACY_NUMBERS[m.group(1)])
        return paper.short if paper is not None else m.group(0)

    return _NUMBER.sub(name, where)


def paper_short(key: str) -> str:
    """The paper's short citation: first author et al., venue, and the method's name."""
    from orthoverify.engine.registry import default_modules, get_registry

    paper = get_registry(default_modules()).papers.get(key)
    if paper is None:
        return key
    first = paper.authors.split(",")[0].strip()
    more = " et al." if "," in paper.authors else ""
    return f"{paper.short}: {first}{more}, {paper.venue}"


_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "eps": "ε", "epsilon": "ε", "theta": "θ",
    "lambda": "λ", "rho": "ρ", "sigma": "σ", "Sigma": "Σ", "pi": "π", "phi": "φ", "eta": "η",
}  # fmt: skip
_TYPESET: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b([A-Za-z])bar\b"), "\\1\u0304"),  # Cbar -> C̄, hbar -> h̄
    (re.compile(r"\b([A-Za-z])_bar\b"), "\\1\u0304"),
    (re.compile(r"\bsigma_(min|max)\b"), "σ_\\1"),
    (re.compile(r"([A-Za-z])~"), "\\1\u0303"),  # C~ -> C̃, UC~ -> UC̃
    (re.compile(r"(?<![A-Za-z])((?:[A-Za-z][\u0303\u0304]?){1,2})'(?!s\b)"), "\\1′"),  # W' -> W′, C̃' -> C̃′
    (re.compile(r"\|\|"), "‖"),
    (re.compile(r"<="), "≤"),
    (re.compile(r">="), "≥"),
    (re.compile(r"!="), "≠"),
    (re.compile(r"\+-"), "±"),
    (re.compile(r"(?<![<-])->"), "→"),
    (re.compile(r"\bsqrt\("), "√("),
    (re.compile(r"\^-1\b"), "⁻¹"),
    (re.compile(r"\^-T\b"), "⁻ᵀ"),
    (re.compile(r"\^2\b"), "²"),
    (re.compile(r"\^3\b"), "³"),
    (re.compile(r"\b(" + "|".join(_GREEK) + r")\b"), ""),
]


def typeset(text: str) -> str:
    """Mathematics written in ASCII (``C~'h'``, ``Cbar'``, ``||x|| <= 1``, ``sigma``) in Unicode
    (``C̃′h′``, ``C̄′``, ``‖x‖ ≤ 1``, ``σ``): plain text, no markup, no network. Identifiers
    joined by underscores (check names, ``sigma_min``) are left alone."""
    out = str(text)
    for pattern, repl in _TYPESET:
        if repl:
            out = pattern.sub(repl, out)
        else:
            out = pattern.sub(lambda m: _GREEK[m.group(1)], out)
    return out


def shorten(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, cut at a word with an ellipsis."""
    one = " ".join(str(text).split())
    if len(one) <= limit:
        return one
    cut = one[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " …"


def refuting_rows(report: Report, claim: ClaimRow) -> list[EvidenceRow]:
    """The evidence rows that hold a confirmed counterexample."""
    return [r for r in evidence_rows(report, claim) if r.result == "counterexample"]


def reason(report: Report, claim: ClaimRow) -> str:
    """Why a refuted claim is refuted, in one line: the recorded counterexample's breaking value
    (exact, or the test ratio against its threshold at the confirming precision)."""
    found = claim.counterexample()
    if found is None:
        return ""
    _i, cx = found
    value = str(cx.get("value", ""))
    digits = cx.get("precision_digits")
    try:
        ratio = float(value)
    except ValueError:
        ratio = None
    if ratio is not None and digits != "exact":
        thr = cx.get("threshold")
        text = f"test ratio {fmt_num(ratio)}" + (f" > {fmt_num(thr)}" if thr is not None else "")
        text += f" at {digits} digits: {cx.get('quantity', '')}"
    elif digits == "exact":
        text = value if len(value) > 12 else f"{cx.get('quantity', '')} = {value} (exact)"
    else:
        text = value
    return typeset(shorten(_LONG_DECIMAL.sub(lambda m: f"{float(m.group(0)):.6g}", text)))


_LONG_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{7,}(?![\d.])")
"""A decimal with more digits than a one-line reason needs (the counterexample keeps them all)."""
