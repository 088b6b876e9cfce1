"""Result files merged into one report model: runs side by side, claims in registry order.

A report is a pure function of the JSON results it is given (and of the proof notes it links
to): nothing is re-run, so the same files always give the same report.
"""

from __future__ import annotations

import math
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orthoverify._text import printable, printable_data
from orthoverify.engine.model import VERDICTS, Paper
from orthoverify.engine.result import REPORT_KEYS, check_result, load_json, papers_of
from orthoverify.errors import ReportError


def paper_title(key: str, papers: Mapping[str, Paper]) -> str:
    """The citation of the paper with this key (from the result files' ``papers`` tables, which
    the run copied from the claim family's ``PAPER_INFO``); a key no file describes (a file
    written before results carried the table) is shown as itself."""
    paper = papers.get(key)
    return paper.citation() if paper is not None else key


@dataclass(frozen=True)
class Run:
    """One result file: its label in the report and its contents."""

    label: str
    path: str
    data: dict[str, Any]

    @property
    def profile(self) -> str:
        return str(self.data.get("profile", "?"))

    @property
    def seed(self) -> Any:
        return self.data.get("seed")

    @property
    def seconds(self) -> float:
        return float(self.data.get("seconds", 0.0))

    @property
    def environment(self) -> dict[str, Any]:
        env = self.data.get("environment") or {}
        return dict(env) if isinstance(env, dict) else {}

    def counts(self, paper: str | None = None) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for c in self.data["claims"]:
            if paper is None or c.get("paper") == paper:
                out[c["verdict"]] = out.get(c["verdict"], 0) + 1
        return out


@dataclass
class ClaimRow:
    """One claim across the runs: its statement, and its entry in each run (None where absent)."""

    id: str
    paper: str
    where: str
    statement: str
    kind: str
    corrects: str | None
    entries: list[dict[str, Any] | None] = field(default_factory=list)

    def verdicts(self) -> list[str | None]:
        return [e["verdict"] if e is not None else None for e in self.entries]

    def present(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(run index, entry) for the runs that have this claim."""
        for i, e in enumerate(self.entries):
            if e is not None:
                yield i, e

    @property
    def refuted(self) -> bool:
        return "refuted" in self.verdicts()

    @property
    def disagreement(self) -> bool:
        seen = {v for v in self.verdicts() if v is not None}
        return len(seen) > 1

    def counterexample(self) -> tuple[int, dict[str, Any]] | None:
        """The first run's recorded counterexample (run index, counterexample)."""
        for i, e in self.present():
            if e.get("counterexample"):
                return i, e["counterexample"]
        return None


@dataclass
class Report:
    """Everything a renderer needs: the runs and the claims (union over runs, first-seen order)."""

    runs: list[Run]
    claims: list[ClaimRow]
    proofs_dir: Path | None = None
    paper_info: dict[str, Paper] = field(default_factory=dict)
    """The source papers by key, from the runs' ``papers`` tables (the first run that describes a
    key wins)."""
    drawn: dict[str, Any] = field(default_factory=dict, repr=False)
    """Figures already drawn, by id (each format of a report reuses them)."""

    def papers(self) -> list[str]:
        out: list[str] = []
        for c in self.claims:
            if c.paper not in out:
                out.append(c.paper)
        return out

    def claim(self, claim_id: str) -> ClaimRow | None:
        for c in self.claims:
            if c.id == claim_id:
                return c
        return None

    def corrected(self, claim_id: str) -> ClaimRow | None:
        return self.claim(claim_id + ".corrected")

    def errata(self) -> list[ClaimRow]:
        """Every claim refuted in at least one run."""
        return [c for c in self.claims if c.refuted]

    def disagreements(self) -> list[ClaimRow]:
        return [c for c in self.claims if c.disagreement]

    def evidence(self) -> Iterator[tuple[int, ClaimRow, dict[str, Any]]]:
        """(run index, claim, evidence) for every evidence entry of every run."""
        for c in self.claims:
            for i, e in c.present():
                for ev in e.get("evidence", []):
                    yield i, c, ev


def _label(path: Path, data: dict[str, Any]) -> str:
    device = (data.get("environment") or {}).get("device")
    base = path.stem
    return f"{base} ({device})" if device and device != "cpu" else base


def load_run(path: str | Path, label: str | None = None, data: dict[str, Any] | None = None) -> Run:
    """Read one result file (or take its already-parsed ``data``), checked field by field
    (:func:`~orthoverify.engine.result.check_result`); a malformed one raises ReportError naming
    the file and the field."""
    p = Path(path)
    if data is None:
        data = load_json(p, error=ReportError, required=REPORT_KEYS)
    else:
        check_result(data, p, error=ReportError, required=REPORT_KEYS)
    data = printable_data(data)  # control characters and ANSI escapes shown as escapes, never acted on
    return Run(printable(label or _label(p, data), newlines=False), printable(str(path), newlines=False), data)


def load_report(
    paths: Sequence[str | Path], labels: Sequence[str] | None = None, data: dict[str, dict[str, Any]] | None = None
) -> Report:
    """Merge result files into one report; labels default to the file names (made unique).
    ``data`` gives the parsed contents of files not written yet, by path (``check --report``
    writes the result and its report together)."""
    if not paths:
        raise ReportError("no result files given")
    if labels is not None and len(labels) != len(paths):
        raise ReportError(f"{len(labels)} labels for {len(paths)} result files")
    runs: list[Run] = []
    for i, p in enumerate(paths):
        run = load_run(p, labels[i] if labels is not None else None, (data or {}).get(str(p)))
        taken = {r.label for r in runs}
        label, k = run.label, 2
        while label in taken:
            label, k = f"{run.label} #{k}", k + 1
        runs.append(Run(label, run.path, run.data))
    rows: dict[str, ClaimRow] = {}
    for i, run in enumerate(runs):
        for c in run.data["claims"]:
            row = rows.get(c["id"])
            if row is None:
                row = ClaimRow(
                    c["id"], c["paper"], c.get("where", ""), c["statement"], c.get("kind", ""), c.get("corrects")
                )
                row.entries = [None] * len(runs)
                rows[c["id"]] = row
            row.entries[i] = c
    papers: dict[str, Paper] = {}
    for run in runs:
        for key, paper in papers_of(run.data).items():
            papers.setdefault(key, paper)
    return Report(runs, list(rows.values()), find_proofs_dir(), papers)


def find_proofs_dir() -> Path | None:
    """The proof notes (``proofs/*.md``): the repository's top-level ``proofs/`` when the package
    runs from a source checkout (an editable install), else the copy an installed wheel carries
    under ``<prefix>/share/orthoverify/proofs`` (pyproject's data-files; checked by installing the
    wheel into a fresh venv: the report rendered there embeds every entry), so that a report
    rendered anywhere still embeds them; None when neither exists."""
    checkout = Path(__file__).resolve().parents[2]
    candidates = [checkout / "proofs"] if (checkout / "pyproject.toml").is_file() else []
    prefixes = dict.fromkeys([sysconfig.get_path("data"), sys.prefix, site.getuserbase()])  # --user: the user base
    candidates += [Path(p) / "share" / "orthoverify" / "proofs" for p in prefixes if p]
    return next((c for c in candidates if c.is_dir()), None)


def in_checkout(proofs_dir: Path) -> Path | None:
    """The repository whose top-level ``proofs/`` this is (its folder holds ``pyproject.toml``),
    else None (a copy installed under a prefix)."""
    d = proofs_dir.resolve()
    return d.parent if d.name == "proofs" and (d.parent / "pyproject.toml").is_file() else None


# ------------------------------------------------------------------------------ proof notes
_HEADING = re.compile(r"^(#{2,3}) (.+?)\s*$", re.M)


def github_slug(heading: str) -> str:
    """The anchor a code host (GitHub) gives a Markdown heading: lower case, punctuation dropped,
    spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


@dataclass(frozen=True)
class ProofEntry:
    """A claim's entry in ``proofs/<paper>.md``: the file, the heading's anchor, the text."""

    file: Path
    anchor: str
    heading: str
    body: str


_PAPER_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def known_paper(paper: object) -> bool:
    """Whether ``paper`` is the key of a paper whose proof notes orthoverify ships (a file
    ``<key>.md`` of :func:`find_proofs_dir`). A result file's ``paper`` field is untrusted: only
    such a key ever names a file to read."""
    return isinstance(paper, str) and _PAPER_KEY.fullmatch(paper) is not None and paper in shipped_papers()


def shipped_papers() -> frozenset[str]:
    """The keys of the papers whose proof notes orthoverify ships: the names of the ``*.md`` files
    of :func:`find_proofs_dir` (listed, so that no name from a result file reaches the file system)."""
    shipped = find_proofs_dir()
    return frozenset(p.stem for p in shipped.glob("*.md") if p.is_file()) if shipped is not None else frozenset()


def proof_file(proofs_dir: Path | None, paper: object) -> Path | None:
    """``proofs_dir/<paper>.md`` when ``paper`` is a registered paper key and the file exists, else
    None (an unknown key, an absolute path or ``../x`` from a result file reads nothing)."""
    if proofs_dir is None or not known_paper(paper):
        return None
    f = proofs_dir / f"{paper}.md"
    return f if f.is_file() else None


def proof_entry(proofs_dir: Path | None, paper: str, claim_id: str) -> ProofEntry | None:
    """The section of ``proofs/<paper>.md`` whose heading starts with ``claim_id`` (to the next heading
    of the same or a higher level); None for a paper that is not registered (see :func:`proof_file`)."""
    f = proof_file(proofs_dir, paper)
    if f is None:
        return None
    text = f.read_text()
    matches = list(_HEADING.finditer(text))
    for k, m in enumerate(matches):
        title = m.group(2)
        if title == claim_id or title.startswith(claim_id + " "):
            level = len(m.group(1))
            end = len(text)
            for m2 in matches[k + 1 :]:
                if len(m2.group(1)) <= level:
                    end = m2.start()
                    break
            body = text[m.end() : end].strip()
            body = re.sub(r"\n-{3,}\s*$", "", body).strip()
            return ProofEntry(f, github_slug(title), title, body)
    return None


def relative_link(target: Path, out_dir: Path) -> str:
    """A link from a file in ``out_dir`` to ``target``, with forward slashes."""
    try:
        rel = os.path.relpath(target.resolve(), out_dir.resolve())
    except ValueError:  # another drive on Windows
        rel = str(target.resolve())
    return rel.replace(os.sep, "/")


def fmt_num(x: Any, digits: int = 3) -> str:
    """A ratio, time or count for a table: compact, with inf/nan as written in the JSON."""
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    xf = float(x)
    if math.isnan(xf):
        return "nan"
    if math.isinf(xf):
        return "inf" if xf > 0 else "-inf"
    return f"{xf:.{digits}g}"


def as_float(x: Any) -> float:
    """A JSON number or one of the strings "inf", "-inf", "nan" as a float."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan
