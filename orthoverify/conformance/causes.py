"""One finding per cause: a ``validate`` run's refuted (and fragile) checks grouped under a root.

A map that computes the wrong matrix fails ``forward`` and, through it, every check that
differentiates or inverts the same formula (orthogonal, gradient, jvp, the three second-order
modes, coverage): the maintainer has one bug, not seven. The root of a group is the first failing
check in dependency order (:data:`ORDER`: forward before orthogonal before det before gradient
before jvp before second order), its row float64 before float32; it lists the later failing checks of the
chain as the ones it may explain. Every other failing check is a finding of its own. The grouping
is a reading aid for the summary: the JSON keeps every check's evidence and verdict.

Where blame (:mod:`~orthoverify.conformance.blame`) measured a cause in a lower precision, the
measurement decides: a later check of the chain blamed on an operation in float32 or a half
dtype (a failure that dtype's alone: float64's check passes at its case) that no earlier finding
names starts a finding of its own (torch's ``linalg.solve`` under nested forward mode in float64 is
not the same defect as its float32 backward), and a check whose blame says it follows from another
failing check (its float64 sibling, or a first-order check failing at the same case) is listed
under that check's finding. Float64 checks are grouped as before: under the chain's first root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orthoverify.engine.runner import RunResult

ORDER: tuple[str, ...] = (
    "output",
    "forward",
    "orthogonal",
    "det",
    "gradient",
    "jvp",
    "second_ff",
    "second_fr",
    "second_rr",
    "gradient_float32",
    "jvp_float32",
    "second_ff_float32",
    "second_fr_float32",
    "second_rr_float32",
    "gradient_float16",
    "jvp_float16",
    "gradient_bfloat16",
    "jvp_bfloat16",
    "gradient_batch",
)
"""The dependency order of the checks one formula feeds: a failure early explains later ones (float64
before float32 before the half-precision dtypes, one matrix before a batch)."""

FOLLOWS_FORWARD: tuple[str, ...] = ("coverage",)
"""Checks a wrong output also fails (preimages of the wrong matrix, or of the declared group when
the determinant is wrong), explained by a forward, orthogonal or det root."""


@dataclass
class Finding:
    """A root failing check, its verdict and evidence row, and the later checks it may explain."""

    check: str
    verdict: str
    backend: str
    explains: list[str] = field(default_factory=list)
    cause: str = ""
    """The torch operation measured to cause it, where blame found one (:mod:`~orthoverify.conformance.blame`)."""

    def to_json(self) -> dict[str, Any]:
        out = {"check": self.check, "verdict": self.verdict, "backend": self.backend, "explains": self.explains}
        return {**out, "cause": self.cause} if self.cause else out


def _name(claim_id: str) -> str:
    return claim_id.rsplit(".", 1)[1]


def _row(evidence: list[Any]) -> str:
    rows = [e.backend for e in evidence if e.counterexample is not None] or [e.backend for e in evidence]
    rows.sort(key=lambda b: ("float64" not in b, b))  # float64 before float32
    return rows[0] if rows else ""


def _blames(evidence: list[Any]) -> list[dict[str, Any]]:
    return [b for b in (getattr(e, "data", {}).get("blame") for e in evidence) if isinstance(b, dict)]


def _cause(evidence: list[Any]) -> str:
    return next((str(b["cause"]) for b in _blames(evidence) if "cause" in b), "")


def _measured(evidence: list[Any]) -> tuple[str, str] | None:
    """(operation, dtype) of the cause blame measured for a check, or None."""
    b = next((b for b in _blames(evidence) if "operation" in b), None)
    return None if b is None else (str(b["operation"]), str(b.get("dtype", "float64")))


def _follows(evidence: list[Any]) -> str:
    """The failing check blame found this one to follow from ("" if none)."""
    return next((str(b["follows"]) for b in _blames(evidence) if "follows" in b), "")


def _group(chain: list[str], mine: dict[str, Any]) -> dict[str, list[str]]:
    """The roots of ``chain`` (in order), each with the later checks it explains: the first check,
    and each later one blamed on an operation in a lower precision that no earlier root is blamed
    on; a check blame found to follow from another goes with that one's root, the rest with the
    first root."""
    roots: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    keys: dict[tuple[str, str], str] = {}
    for k in chain:
        ev = mine[k].evidence
        key, follows = _measured(ev), _follows(ev)
        if roots and key is not None and key[1] == "float64":
            key = None  # a float64 cause: under the first root, as every float64 check
        if not roots or (key is not None and key not in keys):
            root = k
            roots[k] = []
            if key is not None:
                keys[key] = k
        else:
            root = keys[key] if key is not None else owner.get(follows, chain[0])
            roots[root].append(k)
        owner[k] = root
    return roots


def findings(result: RunResult, verdicts: tuple[str, ...] = ("refuted", "fragile")) -> list[Finding]:
    """The run's failing checks (``verdicts``), one finding per cause, in plan order of the roots."""
    failing = {_name(c.claim.id): c for c in result.claims if c.verdict in verdicts}
    out: list[Finding] = []
    for verdict in verdicts:  # a refuted root never explains a fragile check, nor the other way round
        mine = {k: c for k, c in failing.items() if c.verdict == verdict}
        chain = [k for k in ORDER if k in mine]
        explained: set[str] = set()
        for root, explains in _group(chain, mine).items():
            if root == chain[0] and root in ("output", "forward", "orthogonal", "det"):
                explains += [k for k in FOLLOWS_FORWARD if k in mine]
            out.append(Finding(root, verdict, _row(mine[root].evidence), explains, _cause(mine[root].evidence)))
            explained |= {root, *explains}
        for k, c in mine.items():
            if k not in explained:
                out.append(Finding(k, verdict, _row(c.evidence), cause=_cause(c.evidence)))
    order = [_name(c.claim.id) for c in result.claims]
    out.sort(key=lambda f: (f.verdict != "refuted", order.index(f.check) if f.check in order else len(order)))
    return out


def summary(result: RunResult) -> list[str]:
    """The lines the command prints: one per cause."""
    lines = []
    for f in findings(result):
        line = f"  {f.check} [{f.backend}]: {f.verdict}"
        if f.explains:
            line += f"; the same cause may explain {', '.join(f.explains)} (later checks of the same formula)"
        if f.cause:
            line += f"; cause: {f.cause}"
        lines.append(line)
    return lines


__all__ = ["ORDER", "Finding", "findings", "summary"]
