"""A baseline of acknowledged ``validate`` findings: a gate that fails on new defects only.

``orthoverify validate TARGET --write-baseline FILE`` records the run's findings (each refuted or
fragile check, per dtype/device row that carries a counterexample); ``--baseline FILE`` reads them
back and the exit status then counts only findings not in the file (both are listed). The file is
reviewed like a lock file; it is read as untrusted data: a regular file of bounded size, strict
JSON, every field type-checked, nothing in it evaluated.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orthoverify import _atomic
from orthoverify._files import FileTooLargeError, NotRegularFileError, read_regular
from orthoverify.engine.runner import RunResult
from orthoverify.errors import InputError

FORMAT = "orthoverify-baseline"
VERSION = 1
MAX_BYTES = 1 << 20
"""The largest baseline file read (a run has a few dozen findings at most: a few kB)."""
MAX_FINDINGS = 10_000

FINDING_VERDICTS = ("refuted", "fragile")
"""The verdicts a baseline can acknowledge."""

Key = tuple[str, str]
"""A finding: (claim id, evidence row's backend label, e.g. torch-float64-cpu)."""


@dataclass(frozen=True)
class Finding:
    claim: str
    backend: str
    verdict: str
    note: str

    @property
    def key(self) -> Key:
        return (self.claim, self.backend)


def findings(result: RunResult) -> list[Finding]:
    """The run's findings: every evidence row with a counterexample, of a refuted or fragile claim."""
    out = []
    for c in result.claims:
        if c.verdict not in FINDING_VERDICTS:
            continue
        for e in c.evidence:
            if e.counterexample is not None:
                note = (e.notes or "").strip().splitlines()[0] if (e.notes or "").strip() else ""
                out.append(Finding(c.claim.id, e.backend, c.verdict, note[:300]))
    return out


def write(result: RunResult, path: str | os.PathLike[str], target: str) -> Path:
    """Write the findings of ``result`` as a baseline file (atomically)."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "target": target,
        "findings": [
            {"claim": f.claim, "backend": f.backend, "verdict": f.verdict, "note": f.note} for f in findings(result)
        ],
    }
    return _atomic.write_text(path, json.dumps(data, indent=1) + "\n")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load(path: str | os.PathLike[str]) -> set[Key]:
    """The acknowledged findings of the baseline file ``path``; :class:`InputError` naming the file
    and the problem for anything that is not a baseline written by ``--write-baseline``."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_BYTES)
    except FileNotFoundError:
        raise InputError(f"--baseline {p}: no such file") from None
    except (NotRegularFileError, FileTooLargeError) as exc:
        raise InputError(f"--baseline {exc}") from None
    except OSError as exc:
        raise InputError(f"--baseline {p}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"--baseline {p}: not JSON ({str(exc)[:200]})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f'--baseline {p}: not an orthoverify baseline (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise InputError(f"--baseline {p}: version {data.get('version')!r}, expected {VERSION}")
    items = data.get("findings")
    if not isinstance(items, list):
        raise InputError(f"--baseline {p}: field findings must be a list")
    if len(items) > MAX_FINDINGS:
        raise InputError(f"--baseline {p}: more than {MAX_FINDINGS} findings")
    out: set[Key] = set()
    for i, f in enumerate(items):
        if not isinstance(f, dict) or not all(isinstance(f.get(k), str) and f.get(k) for k in ("claim", "backend")):
            raise InputError(f"--baseline {p}: findings[{i}] must be an object with string fields claim and backend")
        out.add((f["claim"], f["backend"]))
    return out


def split(result: RunResult, acknowledged: set[Key], strict: bool = False) -> tuple[list[Finding], list[Finding]]:
    """(new, known): the findings that count towards the exit status (refuted ones, and fragile ones
    with ``strict``) not in ``acknowledged``, and those that are."""
    new: list[Finding] = []
    known: list[Finding] = []
    for f in findings(result):
        if f.verdict == "fragile" and not strict:
            continue
        (known if f.key in acknowledged else new).append(f)
    return new, known


__all__ = ["Finding", "findings", "load", "split", "write"]
