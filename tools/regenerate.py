"""Re-record everything derived from the claims' declarations, from the repository root:

    python tools/regenerate.py            # write what is out of date
    python tools/regenerate.py --check    # say what is out of date, write nothing (exit 1 if anything is)

A claim's declaration (its file's ``Claim``: ``expected``, ``origin``, ``place``, ``summary``,
``statement``, its checks) is the one home of its facts; this writes the places that repeat them:

- ``reports/check-default.json``: a registered claim the reference lacks, or records with another
  verdict than the declared one or with other checks than it declares, is run on the default
  profile with the reference's seed and its entry merged in (a claim's cases depend only on its
  id, its check and the seed, never on the claims run beside it), in registry order; an entry of
  a claim no longer registered is dropped; ``--all`` reruns the whole reference instead.
- ``reports/report.*``, the reports rendered from the reference: rendered again, last, when they
  differ from a rendering of the reference and of the proofs' entries they embed (a new claim, or
  a proof its author has just written into its entry).
- ``README.md``'s claim tables: each row's verdict cell is the claims' declared verdict; a claim
  without a row gets one (after its family's previous claim: its summary, "(added)" first for an
  added claim). The rows' own text stays as written.
- ``proofs/<family>.md``: each claim's heading is ``## <id> — <verdict>`` (``###`` for a corrected
  twin, " (added claim)" for an added one); a claim without an entry gets one, its statement, its
  place and its checks, for the author to complete with the proof.

A run whose verdict differs from the declared one is recorded as run and reported: the claim's
``expected`` (or the claim) is then wrong, and ``tests/claims/test_verdicts_agree.py`` fails until
it is fixed. Exit status 0 when everything agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from orthoverify import _atomic
from orthoverify.claims import MODULES
from orthoverify.engine import get_registry, run_checks
from orthoverify.engine.model import Claim
from orthoverify.engine.registry import with_extra_modules
from orthoverify.engine.result import to_json
from orthoverify.report import plan_report

ROOT = Path(__file__).resolve().parents[1]
VERDICT = r"(verified|refuted|inconclusive|error)"
COMMAND = "python tools/regenerate.py"


def heading(c: Claim, level: str | None = None) -> str:
    """The proofs heading of a claim, from its declaration (at ``level``, or ``###`` for a corrected
    twin and ``##`` otherwise)."""
    level = level or ("###" if c.origin == "corrected" else "##")
    return f"{level} {c.id} — {c.expected}" + (" (added claim)" if c.origin == "added" else "")


def verdict_cell(verdict: str) -> str:
    """A README verdict cell: a refutation in bold, as the tables write it."""
    return f"**{verdict}**" if verdict == "refuted" else verdict


def proof_entry(c: Claim) -> str:
    """A new claim's entry in proofs/<family>.md: what its declaration says, to be completed."""
    checks = ", ".join(f"`{k.name}`" for k in c.checks)
    return (
        f"{heading(c)}\n\n**Statement ({c.where}).** {c.statement.rstrip('.')}.\n\n**Checks.** {checks}.\n\n"
        f"**Proof.** (to be written: entry added by `{COMMAND}` from the claim's declaration.)\n\n"
    )


def proofs_text(text: str, claims: list[Claim], notes: list[str]) -> str:
    """``text`` (one family's proofs file) with every claim's heading from its declaration and an
    entry for each claim that has none (before the entry of the next claim that has one)."""
    pattern = re.compile(rf"^(#{{2,3}}) ([a-z0-9_.-]+) — {VERDICT}( \(added claim\))?[ \t]*$", re.M)
    by_id = {c.id: c for c in claims}

    def fix(m: re.Match[str]) -> str:
        c = by_id.get(m.group(2))
        if c is None:
            return m.group(0)
        if m.group(0) != heading(c, m.group(1)):
            notes.append(f"proofs: {m.group(0)!r} -> {heading(c, m.group(1))!r}")
        return heading(c, m.group(1))

    text = pattern.sub(fix, text)
    present = {m.group(2) for m in pattern.finditer(text)}
    for k, c in enumerate(claims):
        if c.id in present:
            continue
        later = [d.id for d in claims[k + 1 :] if d.id in present]
        at = len(text) if not later else re.search(rf"^#{{2,3}} {re.escape(later[0])} — ", text, re.M).start()  # type: ignore[union-attr]
        if at == len(text) and not text.endswith("\n\n"):
            text = text.rstrip("\n") + "\n\n"
        text = text[:at] + proof_entry(c) + text[at:]
        present.add(c.id)
        notes.append(f"proofs: entry added for {c.id}")
    return text


def readme_text(text: str, claims: list[Claim], notes: list[str]) -> str:
    """``text`` (the README) with each claim-table row's verdict cell from the declarations, and a
    row for each claim without one (corrected twins excepted: their printed claim's row tells)."""
    row = re.compile(rf"^\| ((?:`[a-z0-9_.-]+`(?:, )?)+) \| (\**{VERDICT}\**) \|(.*)$", re.M)
    by_id = {c.id: c for c in claims}

    def fix(m: re.Match[str]) -> str:
        ids = re.findall(r"`([a-z0-9_.-]+)`", m.group(1))
        verdicts = {by_id[i].expected for i in ids if i in by_id}
        if len(verdicts) != 1:
            return m.group(0)
        cell = verdict_cell(str(verdicts.pop()))
        if cell != m.group(2):
            notes.append(f"README: {', '.join(ids)}: {m.group(2)} -> {cell} (re-read the row's text)")
        return f"| {m.group(1)} | {cell} |{m.group(4)}"

    text = row.sub(fix, text)
    rows = {i: m for m in row.finditer(text) for i in re.findall(r"`([a-z0-9_.-]+)`", m.group(1))}
    for c in claims:
        if c.id in rows or c.origin == "corrected":
            continue
        family = [d.id for d in claims if d.paper == c.paper]
        before = [i for i in reversed(family[: family.index(c.id)]) if i in rows]
        after = [i for i in family[family.index(c.id) + 1 :] if i in rows]
        if before:
            at = rows[before[0]].end() + 1
        elif after:
            at = rows[after[0]].start()
        else:
            notes.append(f"README: no claim table of {c.paper} to add {c.id} to; add the table")
            continue
        summary = ("(added) " if c.origin == "added" else "") + (c.summary or c.statement)
        text = text[:at] + f"| `{c.id}` | {verdict_cell(str(c.expected))} | {summary} |\n" + text[at:]
        rows = {i: m for m in row.finditer(text) for i in re.findall(r"`([a-z0-9_.-]+)`", m.group(1))}
        notes.append(f"README: row added for {c.id}")
    return text


def stale(c: Claim, entry: dict[str, Any] | None) -> bool:
    """Whether the reference's entry for ``c`` must be run again: there is none, its verdict is not
    the declared one, or its checks are not the declared ones (the claim was changed)."""
    if entry is None or entry.get("verdict") != c.expected:
        return True
    return {e.get("check") for e in entry.get("evidence", [])} != {k.name for k in c.checks}


def reference(
    path: Path, claims: list[Claim], modules: tuple[str, ...], *, rerun_all: bool, write: bool, notes: list[str]
) -> bool:
    """Bring the reference result up to the registry (see the module docstring); True if it changed."""
    data: dict[str, Any] = json.loads(path.read_text())
    recorded = {c["id"]: c for c in data["claims"]}
    ids = [c.id for c in claims]
    missing = ids if rerun_all else [c.id for c in claims if stale(c, recorded.get(c.id))]
    gone = [i for i in recorded if i not in ids]
    if not missing and not gone:
        return False
    notes += [f"reference: {i} dropped (not registered)" for i in gone]
    notes.append(f"reference: running {len(missing)} claim(s) on the default profile" if missing else "")
    if not write:
        return True
    if missing:
        run = to_json(run_checks(missing, profile="default", seed=int(data["seed"]), modules=modules))
        recorded.update({c["id"]: c for c in run["claims"]})
        if rerun_all:
            data = run
        data["papers"] = {**data.get("papers", {}), **run["papers"]}
    data["claims"] = [recorded[i] for i in ids]
    counts = dict.fromkeys(("verified", "refuted", "inconclusive", "error"), 0)
    for c in data["claims"]:
        counts[c["verdict"]] += 1
    data["summary"] = counts
    _atomic.write_text(path, json.dumps(data, indent=1, allow_nan=False) + "\n")
    return True


def regenerate(root: Path, *, write: bool, rerun_all: bool = False) -> list[str]:
    """Bring every derived place under ``root`` up to the declarations; what changed (or would)."""
    modules = with_extra_modules(MODULES)
    claims = list(get_registry(modules))
    notes: list[str] = []
    ref = root / "reports" / "check-default.json"
    reference(ref, claims, modules, rerun_all=rerun_all, write=write, notes=notes)
    if write:
        recorded = {c["id"]: c["verdict"] for c in json.loads(ref.read_text())["claims"]}
        notes += [
            f"{c.id}: the run says {recorded[c.id]}, the claim declares {c.expected}: fix the claim or its `expected`"
            for c in claims
            if recorded.get(c.id) != c.expected
        ]
    files = {root / "README.md": lambda t: readme_text(t, claims, notes)}
    for paper in dict.fromkeys(c.paper for c in claims):
        family = [c for c in claims if c.paper == paper]
        files[root / "proofs" / f"{paper}.md"] = lambda t, family=family: proofs_text(t, family, notes)  # type: ignore[misc]
    for path, edit in files.items():
        if not path.exists():
            notes.append(f"{path.relative_to(root)}: missing")
            continue
        old = path.read_text()
        new = edit(old)
        if new != old and write:
            _atomic.write_text(path, new)
    reports(root, write=write, notes=notes)
    return [n for n in notes if n]


def reports(root: Path, *, write: bool, notes: list[str]) -> None:
    """``reports/report.*`` against the report the README's command would render from the reference
    (planned from the root, so that links and the result's name are the same): what differs, and
    figures no claim draws any more, are named and, with ``write``, written as one set (after the
    proofs, whose entries the report embeds)."""
    here = Path.cwd()
    os.chdir(root)
    try:
        plan = plan_report(["reports/check-default.json"], out_dir="reports", name="report", notify=notes.append)
        stale = [str(f) for f, text in plan.files.items() if not f.is_file() or f.read_text() != text]
        stale += [str(f) for f in plan.stale]
        if not stale:
            return
        more = ", ..." if len(stale) > 3 else ""
        notes.append(f"reports: {len(stale)} file(s) out of date ({', '.join(stale[:3])}{more})")
        if write:
            _atomic.write_files(plan.files, remove=plan.stale)
    finally:
        os.chdir(here)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything is out of date")
    p.add_argument("--all", action="store_true", help="rerun the whole reference, not only the claims it lacks")
    args = p.parse_args(argv)
    notes = regenerate(ROOT, write=not args.check, rerun_all=args.all)
    for n in notes:
        print(n)
    if args.check and notes:
        print(f"out of date: run `{COMMAND}`", file=sys.stderr)
    disagree = [n for n in notes if "the claim declares" in n or "failed" in n or "no claim table" in n]
    return 1 if (args.check and notes) or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
