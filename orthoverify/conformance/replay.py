"""Replaying a conformance counterexample: a validate result names the family of its claims (the
kind), which is rebuilt over the target the user names (never the one the file names on its own
word); the claim's :class:`~orthoverify.conformance.family.TargetCheck` replays it through its
measuring routine (see :func:`orthoverify.engine.replay.replay_from_file`)."""

from __future__ import annotations

from typing import Any

from orthoverify.conformance.context import DTYPES
from orthoverify.conformance.family import ConformanceReplay as ConformanceReplay  # re-exported: its old home
from orthoverify.conformance.family import FamilyRef
from orthoverify.conformance.kinds import KINDS
from orthoverify.errors import ReplayError


def family_of_result(meta: Any, claim_id: str, target: str | None) -> FamilyRef:
    """The family a validate result's claims come from (its ``validate`` key names the kind),
    over the target the user names, never the one the file names on its own word: a result file
    is untrusted, and loading a target imports and runs its code. Without ``target`` this raises a
    ReplayError that says which target the file was recorded on and how to name it. The target
    runs in a process of its own, as under ``validate``."""
    if not isinstance(meta, dict):
        raise ReplayError(f"{claim_id}: the result's 'validate' key is not an object")
    recorded, kind = str(meta.get("target", "?"))[:200], meta.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ReplayError(f"{claim_id}: validate.kind {str(kind)[:40]!r} is not a known kind ({', '.join(KINDS)})")
    if target is None:
        raise ReplayError(
            f"this counterexample was recorded on the target {recorded!r} (kind {kind}); replaying it imports and "
            f"runs that target's code, so name the target yourself: --target {recorded!r}"
        )
    dtypes = meta.get("dtypes")
    if dtypes is not None and not (isinstance(dtypes, list) and dtypes and all(d in DTYPES for d in dtypes)):
        raise ReplayError(f"{claim_id}: validate.dtypes must be a list of {', '.join(DTYPES)}")
    return FamilyRef(target, kind, tuple(dtypes or DTYPES))
