"""The JSON result: the canonical record of a run (reports and replay read only this)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orthoverify.engine.model import json_float
from orthoverify.engine.runner import ClaimResult, RunResult

SCHEMA_VERSION = 1


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
    }


def to_json(result: RunResult) -> dict[str, Any]:
    """The whole result as a JSON-ready dict (keys documented in the README)."""
    from orthoverify import __version__

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
        "claims": [claim_json(c) for c in result.claims],
        **result.meta,
    }


def write_json(result: RunResult, path: str | Path) -> Path:
    """Write the result to ``path`` (parents created), strict JSON (no NaN/Infinity)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(to_json(result), indent=1, allow_nan=False) + "\n")
    return p


def load_json(path: str | Path) -> dict[str, Any]:
    """Read a result file written by :func:`write_json`."""
    data: dict[str, Any] = json.loads(Path(path).read_text())
    if "claims" not in data or "orthoverify" not in data:
        raise ValueError(f"{path} is not an orthoverify result (no 'claims' or 'orthoverify' key)")
    return data
