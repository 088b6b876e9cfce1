"""Replaying a conformance counterexample: a validate result names the family of its claims (the
kind), which is rebuilt over the target the user names (never the one the file names on its own
word); the claim's :class:`~orthoverify.conformance.family.TargetCheck` replays it through its
measuring routine (see :func:`orthoverify.engine.replay.replay_from_file`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orthoverify.engine.model import jsonable
from orthoverify.engine.replay import abbreviate
from orthoverify.errors import ReplayError

if TYPE_CHECKING:
    from orthoverify.conformance.family import FamilyRef


@dataclass(frozen=True)
class ConformanceReplay:
    """A re-run of a target on a recorded failing case."""

    claim: str
    target: str
    values: list[tuple[str, str]]
    recorded: str
    reproduced: bool
    check: str = ""
    quantity: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    """The recorded case (parameters and dtype, as decimal strings), as ``check``'s replay prints them."""

    def lines(self) -> list[str]:
        """What ``orthoverify replay --target`` prints: the case's inputs (long ones abbreviated),
        the quantity, the target's values, what was recorded and whether it reproduces."""
        out = [f"claim: {self.claim}", f"target: {self.target}", f"check: {self.check}", "inputs:"]
        out += [f"  {name} = {abbreviate(value)}" for name, value in self.inputs.items()]
        out.append(f"quantity: {self.quantity}")
        out += [f"{label}: {text}" for label, text in self.values]
        out.append(f"recorded: {self.recorded}")
        out.append("reproduced: yes" if self.reproduced else "reproduced: NO")
        return out

    def to_json(self) -> dict[str, Any]:
        """The replay for scripts (``--json``): every input in full."""
        return {
            "claim": self.claim,
            "target": self.target,
            "check": self.check,
            "inputs": jsonable(self.inputs),
            "quantity": self.quantity,
            "values": [{"label": label, "value": text} for label, text in self.values],
            "recorded": self.recorded,
            "reproduced": self.reproduced,
        }


def family_of_result(meta: Any, claim_id: str, target: str | None) -> FamilyRef:
    """The family a validate result's claims come from (its ``validate`` key names the kind),
    over the target the user names, never the one the file names on its own word: a result file
    is untrusted, and loading a target imports and runs its code. Without ``target`` this raises a
    ReplayError that says which target the file was recorded on and how to name it. The target
    runs in a process of its own, as under ``validate``."""
    from orthoverify.conformance import checks as ck
    from orthoverify.conformance.family import FamilyRef
    from orthoverify.conformance.kinds import KINDS

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
    if dtypes is not None and not (isinstance(dtypes, list) and dtypes and all(d in ck.DTYPES for d in dtypes)):
        raise ReplayError(f"{claim_id}: validate.dtypes must be a list of {', '.join(ck.DTYPES)}")
    return FamilyRef(target, kind, tuple(dtypes or ck.DTYPES))
