"""The JSON result: the canonical record of a run (reports and replay read only this)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orthoverify import _atomic
from orthoverify._files import FileTooLargeError, NotRegularFileError, read_regular
from orthoverify._package import __version__
from orthoverify.engine.model import VERDICTS, Paper, json_float
from orthoverify.engine.runner import ClaimResult, RunResult
from orthoverify.errors import OrthoverifyError, ReplayError

SCHEMA_VERSION = 1

MAX_RESULT_BYTES = 64 * 2**20
"""The largest result file ``load_json`` reads (a default run's file is under 1 MB)."""

MAX_CLAIMS, MAX_EVIDENCE, MAX_PAPERS = 10_000, 200_000, 1_000
"""Bounds on the claims, evidence entries (all claims together) and distinct papers of a result
file, so that a crafted file cannot make a report's rendering run for hours (orthoverify registers
under 100 claims of 4 papers)."""

MAX_FIGURES = 20
"""The most figures one claim entry may declare (``claims[].figures``; orthoverify's claims declare one)."""


def claim_json(c: ClaimResult) -> dict[str, Any]:
    """One claim's entry in the result."""
    cx = c.counterexample
    worst = c.worst_ratio
    return {
        "id": c.claim.id,
        "paper": c.claim.paper,
        "where": c.claim.where,
        "statement": c.claim.statement,
        "kind": c.claim.kind,
        "corrects": c.claim.corrects,
        "verdict": c.verdict,
        "methods": c.methods,
        "worst_ratio": json_float(worst[0]) if worst else None,
        "worst_ratio_threshold": worst[1] if worst else None,
        "evidence": [e.to_json() for e in c.evidence],
        "counterexample": cx.to_json() if cx is not None else None,
        "notes": c.notes(),
        "figures": [f for f in (p.to_json(c.evidence) for p in c.claim.figures) if f is not None],
    }


PAPER_FIELDS: tuple[str, ...] = ("authors", "title", "venue", "short", "scope")
"""The fields of a paper in the result's ``papers`` table (:class:`~orthoverify.engine.model.Paper`
less its key, which is the table's)."""


def paper_json(p: Paper) -> dict[str, str]:
    """A source paper's entry in the result's ``papers`` table: what a report cites it by."""
    return {k: getattr(p, k) for k in PAPER_FIELDS}


def papers_of(data: dict[str, Any]) -> dict[str, Paper]:
    """The ``papers`` table of a result file checked by :func:`check_result`, as Papers by key
    (empty for a file written before results carried it)."""
    table = data.get("papers") or {}
    return {key: Paper(key=key, **{k: str(v.get(k, "")) for k in PAPER_FIELDS}) for key, v in table.items()}


def to_json(result: RunResult) -> dict[str, Any]:
    """The whole result as a JSON-ready dict (keys documented in the README)."""
    return {
        "orthoverify": __version__,
        "schema": SCHEMA_VERSION,
        "profile": result.profile,
        "seed": result.seed,
        "environment": result.environment,
        "workers": result.workers,
        "executor": result.executor,
        "backends": result.backends,
        "started": result.started,
        "seconds": round(result.seconds, 2),
        "summary": result.counts(),
        "papers": {key: paper_json(p) for key, p in result.papers.items()},
        "claims": [claim_json(c) for c in result.claims],
        **result.meta,
    }


def dumps(result: RunResult) -> str:
    """The result as the text of its JSON file: strict JSON (no NaN/Infinity), one key per line."""
    return json.dumps(to_json(result), indent=1, allow_nan=False) + "\n"


def write_json(result: RunResult, path: str | Path) -> Path:
    """Write the result to ``path`` (parents created) atomically: a reader, or a run killed while
    writing, sees the previous complete file or the new one."""
    return _atomic.write_text(path, dumps(result))


REPLAY_KEYS: tuple[str, ...] = ("id", "verdict")
"""The keys every claim entry needs for ``replay``."""

REPORT_KEYS: tuple[str, ...] = ("id", "verdict", "statement", "paper")
"""The keys every claim entry needs for ``report``."""


def load_json(
    path: str | Path, *, error: type[OrthoverifyError] = ReplayError, required: tuple[str, ...] = REPLAY_KEYS
) -> dict[str, Any]:
    """Read a result file written by :func:`write_json`, checking every field that ``report`` and
    ``replay`` read (``required``: the keys each claim entry must have). The file is untrusted data:
    anything malformed (not JSON, too large, a missing key, a wrong type) raises ``error`` naming
    the file and the field; nothing in it is evaluated."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_RESULT_BYTES)
    except FileNotFoundError:
        raise error(f"result file {p} does not exist") from None
    except FileTooLargeError as exc:
        raise error(f"result file {exc}") from None
    except NotRegularFileError as exc:
        raise error(f"result file {exc}") from None
    except OSError as exc:
        raise error(f"cannot read result file {p}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise error(f"cannot read result file {p}: not JSON ({str(exc)[:200]})") from None
    check_result(data, p, error=error, required=required)
    out: dict[str, Any] = data
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (orthoverify writes non-finite numbers as strings)")


_NUM = (int, float)


def _is_num(x: object) -> bool:
    return isinstance(x, _NUM) and not isinstance(x, bool)


def _ratio(x: object) -> bool:
    """A ratio as written by ``json_float``: a number, or "inf", "-inf", "nan"; or null."""
    return x is None or _is_num(x) or x in ("inf", "-inf", "nan")


def _opt_str(x: object) -> bool:
    return x is None or isinstance(x, str)


_TOP: dict[str, tuple[Callable[[object], bool], str]] = {
    "profile": (lambda x: isinstance(x, str), "a string"),
    "seed": (lambda x: x is None or (isinstance(x, int) and not isinstance(x, bool)), "an integer"),
    "seconds": (lambda x: _is_num(x) and math.isfinite(float(x)), "a finite number"),  # type: ignore[arg-type]
    "started": (_opt_str, "a string"),
    "environment": (lambda x: isinstance(x, dict), "an object"),
}
_CLAIM: dict[str, tuple[Callable[[object], bool], str]] = {
    "where": (_opt_str, "a string"),
    "kind": (_opt_str, "a string"),
    "corrects": (_opt_str, "a string or null"),
    "notes": (_opt_str, "a string or null"),
    "worst_ratio": (_ratio, "a number or null"),
    "worst_ratio_threshold": (lambda x: x is None or _is_num(x), "a number or null"),
    "methods": (lambda x: isinstance(x, list) and all(isinstance(m, str) for m in x), "a list of strings"),
    "evidence": (lambda x: isinstance(x, list), "a list"),
    "counterexample": (lambda x: x is None or isinstance(x, dict), "an object or null"),
    "figures": (
        lambda x: isinstance(x, list) and len(x) <= MAX_FIGURES and all(isinstance(f, dict) for f in x),
        f"a list of at most {MAX_FIGURES} objects",
    ),
}
_EVIDENCE: dict[str, tuple[Callable[[object], bool], str]] = {
    "method": (lambda x: isinstance(x, str), "a string"),
    "backend": (lambda x: isinstance(x, str), "a string"),
    "cases": (lambda x: _is_num(x) or isinstance(x, str), "a number"),
    "worst_ratio": (_ratio, "a number or null"),
    "threshold": (lambda x: x is None or _is_num(x), "a number or null"),
    "seconds": (lambda x: _is_num(x) and math.isfinite(float(x)), "a finite number"),  # type: ignore[arg-type]
    "passed": (lambda x: isinstance(x, bool), "true or false"),
    "refutes": (lambda x: isinstance(x, bool), "true or false"),
    "notes": (_opt_str, "a string or null"),
    "error": (_opt_str, "a string or null"),
    "data": (lambda x: x is None or isinstance(x, dict), "an object or null"),
}
_COUNTEREXAMPLE: dict[str, tuple[Callable[[object], bool], str]] = {
    "inputs": (lambda x: isinstance(x, dict), "an object"),
    "quantity": (lambda x: isinstance(x, str), "a string"),
    "value": (lambda x: isinstance(x, str) or _is_num(x), "a string"),
    "precision_digits": (
        lambda x: x == "exact" or (isinstance(x, int) and not isinstance(x, bool)),
        '"exact" or an integer',
    ),
    "check": (lambda x: isinstance(x, str), "a string"),
    "threshold": (lambda x: x is None or _is_num(x), "a number or null"),
    "float64_value": (lambda x: x is None or isinstance(x, str) or _is_num(x), "a string or null"),
}
_CX_REQUIRED = ("inputs", "quantity", "value", "precision_digits", "check")


def _fields(
    obj: dict[str, Any], spec: dict[str, tuple[Callable[[object], bool], str]], where: str, fail: Callable[[str], None]
) -> None:
    for key, (ok, what) in spec.items():
        if key in obj and not ok(obj[key]):
            fail(f"field {where}{key} must be {what}, got {_show(obj[key])}")


def _show(x: object) -> str:
    s = json.dumps(x) if not isinstance(x, str) else repr(x)
    return s if len(s) <= 60 else s[:57] + "..."


def _check_papers(table: object, fail: Callable[[str], None]) -> None:
    """The ``papers`` table: absent (an older file), or at most ``MAX_PAPERS`` entries, each a key
    naming an object whose fields (:data:`PAPER_FIELDS`) are strings."""
    if table is None:
        return
    if not isinstance(table, dict):
        fail(f"field papers must be an object, got {_show(table)}")
        return
    if len(table) > MAX_PAPERS:
        fail(f"field papers has {len(table)} entries, more than the {MAX_PAPERS} a result file may have")
    for key, entry in table.items():
        if not isinstance(entry, dict):
            fail(f"field papers.{_show(key)} must be an object, got {_show(entry)}")
            return
        for k in PAPER_FIELDS:
            if k in entry and not isinstance(entry[k], str):
                fail(f"field papers.{_show(key)}.{k} must be a string, got {_show(entry[k])}")


def check_result(
    data: object,
    path: str | Path,
    *,
    error: type[OrthoverifyError] = ReplayError,
    required: tuple[str, ...] = REPLAY_KEYS,
) -> None:
    """Check the parsed contents of a result file (see :func:`load_json`); raise ``error`` naming the
    file and the first bad field."""

    def fail(msg: str) -> None:
        raise error(f"{path}: {msg}")

    if not isinstance(data, dict) or "claims" not in data or "orthoverify" not in data:
        raise error(f"{path} is not an orthoverify result (no 'claims' or 'orthoverify' key)")
    if not isinstance(data["claims"], list):
        fail(f"field claims must be a list, got {_show(data['claims'])}")
    _fields(data, _TOP, "", fail)
    _check_papers(data.get("papers"), fail)
    if len(data["claims"]) > MAX_CLAIMS:
        fail(f"field claims has {len(data['claims'])} entries, more than the {MAX_CLAIMS} a result file may have")
    seen: set[str] = set()
    papers: set[object] = set()
    evidence = 0
    for i, c in enumerate(data["claims"]):
        if not isinstance(c, dict):
            fail(f"claims[{i}] must be an object, got {_show(c)}")
        missing = [k for k in required if k not in c]
        if missing:
            fail(f"claims[{i}]: a claim entry lacks {', '.join(required)} (no {', '.join(missing)})")
        for k in ("id", "statement", "paper"):
            if k in c and (not isinstance(c[k], str) or (k != "statement" and not c[k])):
                fail(f"field claims[{i}].{k} must be a non-empty string, got {_show(c[k])}")
        if c["verdict"] not in VERDICTS:
            fail(f"claims[{i}] ({c['id']}): unknown verdict {_show(c['verdict'])} (field claims[{i}].verdict)")
        if c["id"] in seen:
            fail(f"field claims[{i}].id: claim {c['id']} appears twice")
        seen.add(c["id"])
        papers.add(c.get("paper"))
        if len(papers) > MAX_PAPERS:
            fail(f"field claims[{i}].paper: more than {MAX_PAPERS} different papers")
        _fields(c, _CLAIM, f"claims[{i}].", fail)
        evidence += len(c.get("evidence") or [])
        if evidence > MAX_EVIDENCE:
            fail(f"field claims[{i}].evidence: more than {MAX_EVIDENCE} evidence entries in the file")
        for j, ev in enumerate(c.get("evidence") or []):
            where = f"claims[{i}].evidence[{j}]."
            if not isinstance(ev, dict):
                fail(f"field {where[:-1]} must be an object, got {_show(ev)}")
            if not isinstance(ev.get("check"), str):
                fail(f"field {where}check must be a string, got {_show(ev.get('check'))}")
            _fields(ev, _EVIDENCE, where, fail)
        cx = c.get("counterexample")
        if cx is not None:
            missing = [k for k in _CX_REQUIRED if k not in cx]
            if missing:
                fail(f"field claims[{i}].counterexample lacks {', '.join(missing)}")
            _fields(cx, _COUNTEREXAMPLE, f"claims[{i}].counterexample.", fail)
