"""Replaying a recorded counterexample from a result file.

The counterexample's inputs (decimal strings) are parsed exactly and the breaking quantity is
recomputed by the check that found it, in float64 and at high precision (or exactly). A result
file is untrusted data: every field a replay reads is checked and bounded first, and no text in
it is ever evaluated (see :func:`checked_counterexample`).
"""

from __future__ import annotations

import json
import math
import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from orthoverify import _limits
from orthoverify.backends import MAX_DIGITS, get_backend
from orthoverify.backends.numbers import MAX_EXPONENT, parse_exact, parse_float_text
from orthoverify.engine.model import Counterexample, json_float, jsonable
from orthoverify.engine.ratios import THRESHOLD, Measure
from orthoverify.engine.registry import get_registry
from orthoverify.engine.result import load_json
from orthoverify.errors import ParseError, ReplayError


@dataclass(frozen=True)
class Replay:
    """The quantity of a counterexample, recomputed."""

    claim: str
    counterexample: Counterexample
    float64: Measure | None
    high_precision: Measure
    digits: int | str
    reproduced: bool
    rounded: list[tuple[str, str]] = field(default_factory=list)
    """For an exact counterexample: the quantity in float64 and at 50 digits where the check
    can evaluate it in floating point (label, display), or why not."""
    float64_case: Replay | None = None
    """For a counterexample whose float64 value passes (it breaks only at high precision): the
    failing float64 case the run recorded on other inputs, replayed (see :func:`with_float64_case`)."""

    def arithmetics(self) -> list[tuple[str, Measure | None, str]]:
        """The arithmetics that apply, each once: (label, measure or None, display). An exact
        counterexample's floating-point evaluations are listed only where they differ from the
        exact value (a count computed the same in every arithmetic is shown once)."""
        if self.digits != "exact":
            out: list[tuple[str, Measure | None, str]] = []
            if self.float64 is not None:
                out.append(("float64", self.float64, self.float64.display))
            out.append((f"{self.digits} digits", self.high_precision, self.high_precision.display))
            return out
        exact = self.high_precision.display
        same = [label for label, text in self.rounded if text == exact]
        label = "exact" + (f" ({' and '.join(same)} give the same)" if same else "")
        out = [(label, self.high_precision, exact)]
        groups: dict[str, list[str]] = {}
        for lb, text in self.rounded:
            if text != exact:
                groups.setdefault(text, []).append(lb)
        out += [(" and ".join(labels), None, text) for text, labels in groups.items()]
        return out

    def comparison(self) -> str:
        """The confirming value against the threshold, in words."""
        thr = self.counterexample.threshold
        r = self.high_precision.ratio
        where = "exactly" if self.digits == "exact" else f"at {self.digits} digits"
        if thr is None:
            if self.digits == "exact":
                broken = "nonzero: the claimed identity fails" if not (r <= THRESHOLD) else "within rounding"
                return f"exact discrepancy {broken} (no rounding, so no threshold)"
            thr = THRESHOLD
        side = ">" if not (r <= thr) else "<="
        verdict = "breaks the claim" if side == ">" else "does not break the claim"
        return f"test ratio {_fmt(r)} {side} threshold {thr:g} {where}: {verdict}"

    def lines(self) -> list[str]:
        """What ``orthoverify replay`` prints: the inputs (long ones abbreviated), the quantity,
        its value in each arithmetic that applies, the comparison with the threshold."""
        cx = self.counterexample
        out = [f"claim: {self.claim}", f"check: {cx.check}", "inputs:"]
        out += [f"  {name} = {abbreviate(value)}" for name, value in cx.inputs.items()]
        out.append(f"quantity: {cx.quantity}")
        not_applicable: list[str] = []  # the reason, for scripts, is in --json
        for label, m, text in self.arithmetics():
            if text.startswith(NOT_EVALUATED):
                not_applicable.append(label)
                continue
            shown = m is not None and m.value is not None and self.digits != "exact"
            out.append(f"{label}: {text}" + (f" (test ratio {_fmt(m.ratio)})" if shown and m is not None else ""))
        if not_applicable:
            several = len(not_applicable) > 1 or " and " in not_applicable[0]  # a label may join arithmetics
            verb = "do not apply" if several else "does not apply"
            out.append(f"{' and '.join(not_applicable)}: {verb} (the check takes these inputs exactly only)")
        out.append(f"compared: {self.comparison()}")
        same = cx.value == self.high_precision.display
        out.append("recorded: the same" if same else f"recorded: {cx.value}")
        if self.float64_case is not None:
            other = self.float64_case
            check = other.counterexample.check
            out.append(f"float64 fails on other inputs (recorded by the run's float64 evidence, {check}):")
            out += ["  " + line for line in other.lines()[2:-2]]  # its inputs, quantity, values, comparison
        out.append("reproduced: yes" if self.reproduced else "reproduced: NO")
        return out

    def to_json(self) -> dict[str, Any]:
        """The replay for scripts (``orthoverify replay --json``): every input in full, each
        arithmetic's display and test ratio, the threshold, whether it reproduced."""
        cx = self.counterexample
        return {
            "claim": self.claim,
            "check": cx.check,
            "inputs": jsonable(cx.inputs),
            "quantity": cx.quantity,
            "arithmetics": [
                {"label": label, "value": text, "ratio": json_float(m.ratio) if m is not None else None}
                for label, m, text in self.arithmetics()
            ],
            "precision_digits": self.digits,
            "threshold": cx.threshold,
            "compared": self.comparison(),
            "recorded": cx.value,
            "reproduced": self.reproduced,
            **({"float64_case": self.float64_case.to_json()} if self.float64_case is not None else {}),
        }


MAX_VALUES = 16384
"""Most numbers one counterexample may hold (a 128 x 128 matrix)."""
MAX_EXACT_VALUES = 1024
"""Most numbers of an exact counterexample (exact arithmetic grows fast with size)."""
MAX_DIM = 256
"""Longest list at any level of a counterexample's inputs."""
MAX_DEPTH = 4
"""Deepest nesting of lists (a batch of matrices)."""
_LABEL = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9 ._()+,:=/-]{0,79}")
"""A non-numeric input (a case family, a table row such as ``50words``, a convention): a short
name with a letter in it, nothing more. Nothing evaluates it: a check looks it up or fails."""


def checked_counterexample(raw: Any, where: str) -> Counterexample:
    """A counterexample read from a file, checked field by field before anything runs on it: the
    precision, the threshold and every input (numbers strictly parsed and bounded, labels short
    names). Raises ReplayError naming the field."""
    if not isinstance(raw, dict):
        raise ReplayError(f"{where}: the counterexample is not an object")
    for key in ("inputs", "check", "precision_digits"):
        if key not in raw:
            raise ReplayError(f"{where}: the counterexample has no {key!r} field")
    digits = raw["precision_digits"]
    if digits != "exact" and not (
        isinstance(digits, int) and not isinstance(digits, bool) and 1 <= digits <= MAX_DIGITS
    ):
        raise ReplayError(
            f"{where}.precision_digits: expected 'exact' or an integer from 1 to {MAX_DIGITS}, got {str(digits)[:40]!r}"
        )
    if not isinstance(raw["check"], str) or not raw["check"]:
        raise ReplayError(f"{where}.check: expected a check name")
    thr = raw.get("threshold")
    if thr is not None and not (
        isinstance(thr, (int, float)) and not isinstance(thr, bool) and math.isfinite(thr) and thr > 0
    ):
        raise ReplayError(f"{where}.threshold: expected a finite positive number, got {str(thr)[:40]!r}")
    inputs = raw["inputs"]
    if not isinstance(inputs, dict):
        raise ReplayError(f"{where}.inputs: expected an object of named inputs")
    exact = digits == "exact"
    budget = [MAX_EXACT_VALUES if exact else MAX_VALUES]
    for name, value in inputs.items():
        if not isinstance(name, str) or not _LABEL.fullmatch(name):
            raise ReplayError(f"{where}.inputs: {str(name)[:40]!r} is not an input name")
        _check_value(value, f"{where}.inputs.{name}", exact, budget, 0)
    for key in ("quantity", "value"):
        if not isinstance(raw.get(key, ""), str):
            raise ReplayError(f"{where}.{key}: expected a string")
    return Counterexample.from_json(raw)


def _check_value(v: Any, field: str, exact: bool, budget: list[int], depth: int) -> None:
    if isinstance(v, list):
        if depth >= MAX_DEPTH or len(v) > MAX_DIM:
            raise ReplayError(f"{field}: nested deeper than {MAX_DEPTH} or longer than {MAX_DIM} entries")
        for i, x in enumerate(v):
            _check_value(x, f"{field}[{i}]", exact, budget, depth + 1)
        return
    budget[0] -= 1
    if budget[0] < 0:
        limit = MAX_EXACT_VALUES if exact else MAX_VALUES
        raise ReplayError(f"{field}: the counterexample holds more than {limit} values{' (exact)' if exact else ''}")
    if isinstance(v, bool) or v is None:
        raise ReplayError(f"{field}: expected a number or a name, got {v!r}")
    if isinstance(v, int):
        if abs(v) > 10**MAX_EXPONENT:
            raise ReplayError(f"{field}: integer out of range")
        return
    if isinstance(v, float):
        if exact and not math.isfinite(v):
            raise ReplayError(f"{field}: {v!r} in an exact counterexample")
        return
    if not isinstance(v, str):
        raise ReplayError(f"{field}: expected a number or a name, got {type(v).__name__}")
    try:
        (parse_exact if exact else parse_float_text)(v, field)
    except ParseError as exc:
        if not _LABEL.fullmatch(v):
            raise ReplayError(f"{exc}, nor a short name") from None


@contextmanager
def deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Stop ``what`` with a ReplayError after ``seconds`` of wall time (main thread on POSIX only;
    elsewhere the bounds on the inputs are the guard)."""
    usable = (
        seconds is not None and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise ReplayError(f"{what} did not finish within {seconds:g} s (raise --timeout to wait longer)")

    limit = _limits.seconds(seconds, "timeout")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def replay_counterexample(
    claim_id: str, cx: Counterexample, *, modules: tuple[str, ...] = (), claims: Any = None
) -> Any:
    """Recompute a counterexample's quantity with the check that recorded it: a registered
    claim's (``modules``), or one of ``claims`` (a family's, by id). A check that measures in
    arithmetics of its own (a target's dtypes) replays it there (:meth:`Check.replay_recorded`);
    else it is recomputed in float64 and at the recorded precision (or exactly)."""
    if claims is None:
        registry = get_registry(modules)
        if claim_id not in registry:
            raise ReplayError(f"claim {claim_id!r} is not registered in this version of orthoverify")
        claim = registry[claim_id]
        recorded = registry.current_name(claim_id, cx.check)
    else:
        if claim_id not in claims:
            raise ReplayError(f"claim {claim_id!r} is not a claim of the family this result comes from")
        claim = claims[claim_id]
        recorded = cx.check  # a family's checks (a target's) were never renamed
    check = next((c for c in claim.checks if c.records(recorded)), None)
    if check is None:
        raise ReplayError(f"claim {claim_id} has no check {cx.check[:40]!r} to replay its counterexample with")
    try:
        return _replay_with(check, claim_id, cx)
    except UNFIT_INPUT as exc:  # inputs of the wrong shape or kind for this check: a file's fault
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise ReplayError(
            f"claim {claim_id}: check {check.name} cannot replay the recorded inputs "
            f"({type(exc).__name__}{': ' + first if first else ''}); are they the ones it recorded?"
        ) from None


UNFIT_INPUT: tuple[type[Exception], ...] = (
    ArithmeticError,
    LookupError,
    TypeError,
    ValueError,
    NotImplementedError,
    AttributeError,
)
"""What a check raises on inputs that are not the kind it records (a scalar for a vector, an
unknown label, a shape it does not take): from a file, that is a bad file, named as such."""


def _replay_with(check: Any, claim_id: str, cx: Counterexample) -> Any:
    own = check.replay_recorded(claim_id, cx)
    if own is not None:
        return own
    thr = cx.threshold if cx.threshold is not None else THRESHOLD
    if cx.precision_digits == "exact":
        hp = check.replay(cx.inputs, get_backend("sympy"))
        rounded = [(label, _rounded(check, cx.inputs, name)) for label, name in _ROUNDED]
        return Replay(claim_id, cx, None, hp, "exact", not (hp.ratio <= thr), rounded)
    digits = int(cx.precision_digits)
    hp = check.replay(cx.inputs, get_backend(f"mpmath-{digits}"))
    f64 = check.replay(cx.inputs, get_backend("numpy-float64"))
    reproduced = not (hp.ratio <= thr)
    return Replay(claim_id, cx, f64, hp, digits, reproduced)


FamilyResolver = Callable[[Any, str, str | None], Any]
"""Names the family a result file's claims come from: called with the data under the file's
family key, the claim and the target the user names, it returns a
:class:`~orthoverify.engine.runner.ClaimFamily` (a validate result's claims are its kind's family
over a target; the CLI passes ``{"validate": orthoverify.conformance.replay.family_of_result}``)."""


def family_of(
    data: dict[str, Any], claim_id: str, target: str | None, families: Mapping[str, FamilyResolver]
) -> Any:
    """The family (a :class:`~orthoverify.engine.runner.ClaimFamily`) the claims of the result
    ``data`` come from (the resolver of the first of ``families``' keys the file has), or None
    for registered claims."""
    for key, resolve in families.items():
        if key in data:
            return resolve(data[key], claim_id, target)
    return None


_ROUNDED = (("float64", "numpy-float64"), ("50 digits", "mpmath-50"))
NOT_EVALUATED = "not evaluated "
"""How an exact counterexample's floating-point evaluation that failed begins (then the exception):
``--json`` keeps it whole, the printed replay says the arithmetic does not apply."""


def _decimal(x: Any, digits: int) -> Any:
    """Exact rational strings ``p/q`` (recursively) as decimal strings with ``digits`` digits."""
    if isinstance(x, list):
        return [_decimal(v, digits) for v in x]
    if isinstance(x, str) and "/" in x:
        try:
            q = Fraction(x)
        except (ValueError, ZeroDivisionError):
            return x
        import mpmath

        with mpmath.workdps(digits + 5):
            return mpmath.nstr(mpmath.mpf(q.numerator) / q.denominator, digits)
    return x


def _rounded(check: Any, inputs: dict[str, Any], backend: str) -> str:
    """An exact counterexample's quantity evaluated in floating point, or why it cannot be."""
    b = get_backend(backend)
    digits = 17 if b.digits is None or b.digits < 17 else b.digits + 10
    try:
        m = check.replay({k: _decimal(v, digits) for k, v in inputs.items()}, b)
    except Exception as exc:  # the check is exact-only: say so, never fail the replay on it
        return f"{NOT_EVALUATED}({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
    return m.display


def replay_from_file(
    path: str | Path,
    claim_id: str,
    *,
    modules: tuple[str, ...],
    families: Mapping[str, FamilyResolver] | None = None,
    target: str | None = None,
    timeout: float | None = None,
) -> Any:
    """Replay the counterexample of ``claim_id`` recorded in the result file at ``path``.

    The file is untrusted: its counterexample is checked field by field before anything runs on
    it, nothing in it is evaluated, and a counterexample of a validate run is replayed on
    ``target`` only (the code the file names is never imported on the file's word alone): the
    file says which family its claims come from (a key of ``families``, whose resolver the caller
    supplies), the family is rebuilt over ``target``, and the claim's check replays the
    counterexample like any other. Claims of a file with none of those keys are looked up in the
    claims ``modules``. ``timeout`` bounds the replay's wall time, reading the file included."""
    with deadline(timeout, f"replay of {claim_id}"):
        return _replay_file(path, claim_id, modules, families or {}, target)


def _replay_file(
    path: str | Path,
    claim_id: str,
    modules: tuple[str, ...],
    families: Mapping[str, FamilyResolver],
    target: str | None,
) -> Any:
    data: dict[str, Any] = load_json(path)
    claims = data["claims"]
    if not isinstance(claims, list):
        raise ReplayError(f"{path}: 'claims' is not a list")
    for i, c in enumerate(claims):
        if not isinstance(c, dict) or c.get("id") != claim_id:
            continue
        if c.get("counterexample") is None:
            raise ReplayError(
                f"claim {claim_id} has no counterexample in {path} (verdict {str(c.get('verdict'))[:20]})"
            )
        where = f"{path}: claims[{i}].counterexample"
        cx = checked_counterexample(c["counterexample"], where)
        source = family_of(data, claim_id, target, families)
        if source is None:
            rep = replay_counterexample(claim_id, cx, modules=modules)
            return with_float64_case(rep, c, f"{path}: claims[{i}]", modules)
        with source.opened() as claims:  # the target the user named, loaded in a process of its own
            return replay_counterexample(claim_id, cx, claims=claims)
    raise ReplayError(f"claim {claim_id} is not in {path}")


FLOAT64_TRIES = 4
"""Most float64 evidence counterexamples one replay tries (a result file is untrusted)."""


def with_float64_case(rep: Any, entry: dict[str, Any], where: str, modules: tuple[str, ...]) -> Any:
    """``rep`` with, where its counterexample breaks only at high precision (its float64 value
    passes), the first failing float64 case the run's float64 evidence recorded for the same claim
    (each evidence keeps its own counterexample) replayed too: a reader sees that float64 fails,
    and on which inputs (householder.algorithm2_float: 5.8e7 in float64 on other inputs)."""
    if not isinstance(rep, Replay) or rep.digits == "exact" or rep.float64 is None:
        return rep
    thr = rep.counterexample.threshold if rep.counterexample.threshold is not None else THRESHOLD
    if not (rep.float64.ratio <= thr):
        return rep
    evidence = entry.get("evidence")
    tries = 0
    for k, ev in enumerate(evidence if isinstance(evidence, list) else []):
        if tries >= FLOAT64_TRIES:
            break
        if not isinstance(ev, dict) or not isinstance(ev.get("counterexample"), dict) or ev.get("passed") is not False:
            continue
        if not (isinstance(ev.get("backend"), str) and "float64" in ev["backend"]):
            continue
        tries += 1
        alt = checked_counterexample(ev["counterexample"], f"{where}.evidence[{k}].counterexample")
        if alt.precision_digits == "exact":
            continue
        other = replay_counterexample(rep.claim, alt, modules=modules)
        if isinstance(other, Replay) and other.float64 is not None and not (other.float64.ratio <= thr):
            return replace(rep, float64_case=other)
    return rep


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def abbreviate(value: Any, limit: int = 160) -> str:
    """An input as one line: in full when short, else its shape, its first entries and an ellipsis
    (``--json`` prints every digit)."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
    if len(text) <= limit:
        return text
    shape: list[int] = []
    v = value
    while isinstance(v, list) and v:
        shape.append(len(v))
        v = v[0]
    head = text[: limit - 40].rsplit(",", 1)[0]
    dims = "x".join(str(s) for s in shape)
    return f"{head}, … ({dims + ', ' if dims else ''}{len(text)} characters; --json has them all)"
