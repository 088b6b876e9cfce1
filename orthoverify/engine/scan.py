"""Scans of measured code over a stream of cases: tallies, the telling counterexample, series.

A scan measures each case of a stream with its check's measuring routine and keeps, per dtype,
a tally of what it saw: the measured cases and their worst ratio, and everything it did not
judge (cases outside the code's declared domain, cases where the allowance promises no digit,
a special point the code declined with an exception, a mode it does not support, a check that
does not apply, cases never run). Of a dtype's failures the telling one is chosen by a stated
order (:func:`telling`), shrunk where the check allows it, and recorded as the counterexample;
failures of another magnitude are kept beside it. The measured cases give the (size, ratio)
series of the report's figure (:func:`size_series`).

A check whose measuring routine records every case it measures in a :class:`CaseBook` gets its
series by size from the book and, for a failure, the smallest failing case as its
counterexample (:func:`with_series`).

What belongs to the client (a target's kind: how a case is measured, drawn, shrunk, placed and
written down) comes in as the callbacks of :class:`Scan`; the groups of a scan are dtype names.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from orthoverify.engine.magnitudes import distance_from_one
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import THRESHOLD, Measure, fails

C = TypeVar("C", bound=Mapping[str, Any])
"""A case: a mapping of names to arrays."""


def _never(dtype: str) -> str | None:
    return None


def _nowhere(case: Any) -> bool:
    return False


@dataclass(frozen=True)
class Scan(Generic[C]):
    """How one check scans its cases: the client's callbacks and sentences."""

    check: str
    measure: Callable[[C, str], Measure]
    """The check's quantity at a case in a dtype (a test ratio, or a status saying why none)."""
    backend: Callable[[str], str]
    """The evidence row's backend label of a dtype."""
    magnitude: Callable[[C], float]
    """A case's magnitude (max|x_ij| over its scaled arrays)."""
    size: Callable[[C], int]
    """A case's size n (0 for a case of another shape)."""
    extreme: Callable[[C], bool]
    """Whether a case lies outside the ordinary domain (:attr:`domain`)."""
    where: Callable[[C], str]
    """Where a case is, as a maintainer reads it ("at max|x_ij| = 1, n = 4")."""
    inputs: Callable[[C, str], dict[str, Any]]
    """A case in a dtype as the counterexample's exact inputs."""
    domain: str = ""
    """The ordinary domain in words (for a failure outside it: fragile)."""
    blocked: Callable[[str], str | None] = _never
    """Why the cases of a dtype are not run (a prerequisite failed there), or None."""
    outside: Callable[[C], bool] = _nowhere
    """Whether a case lies outside the code's declared domain (skipped, not judged)."""
    allowance: str | None = None
    """The allowance the check's ratios are divided by, in words (None: not scaled)."""
    shrink: Callable[[C, str, Measure], tuple[C, Measure, list[str]]] | None = None
    """A smaller failing case near a failing one, its measure and the steps taken (None: the
    counterexample is the case as found)."""
    recheck: Callable[[C, str], str] | None = None
    """Further confirmation of the counterexample, as a clause appended to its note."""
    cause: Callable[[C, str], str] | None = None
    """Which computation is off, as sentences appended to the counterexample's value."""


Failure = tuple[C, Measure, str]
"""A failing case: the case, its measure and its label ("" for a random draw, else a special point's name)."""


def telling(s: Scan[C], fail: Failure[C]) -> tuple[int, float, int, float]:
    """The order failures are told in: inside the ordinary domain first, then ordinary magnitude
    (closest to 1 in log scale), a random draw before a special point of the same magnitude (a
    special point's name would suggest a cause it may not have), then the smallest size."""
    case, _m, label = fail
    m = s.magnitude(case)
    return (int(s.extreme(case)), round(distance_from_one(m)), int(bool(label)), s.size(case) + m * 1e-300)


@dataclass
class Tally(Generic[C]):
    """What a scan saw in one dtype: the measured cases and everything it did not judge."""

    cases: int = 0
    worst: float = 0.0
    seconds: float = 0.0
    fails: list[Failure[C]] = field(default_factory=list)
    points: list[tuple[float, int, float]] = field(default_factory=list)
    skipped: int = 0
    beyond: int = 0
    declined: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    nan: str | None = None

    def add(self, s: Scan[C], case: C, dtype: str, label: str) -> None:
        """Measure one case (or say why it is not judged)."""
        blocked = s.blocked(dtype)
        if blocked is not None:
            self.not_run.append(blocked)
            return
        if s.outside(case):
            self.skipped += 1
            return
        t0 = time.perf_counter()
        c = s.measure(case, dtype)
        self.seconds += time.perf_counter() - t0
        if c.not_run:
            self.not_run.append(c.display)
        elif c.beyond:
            self.beyond += 1
        elif label and c.raised:  # an exception at an edge case is an honest refusal, not a wrong answer
            self.declined.append(label)
        elif c.unsupported:  # the code declined the mode with an exception: a refusal, not a wrong number
            self.unsupported.append(c.unsupported)
        elif math.isnan(c.ratio):  # the check does not apply to this code (say, no batched calls)
            self.nan = c.display
        else:
            self.cases += 1
            self.points.append((s.magnitude(case), s.size(case), c.ratio))
            if fails(c.ratio, self.worst):
                self.worst = c.ratio
            if fails(c.ratio):
                self.fails.append((case, c, label))

    def evidence(self, s: Scan[C], dtype: str, method: str, note: str) -> Evidence:
        """The evidence row of this dtype (its counterexample not yet recorded): never a pass
        without a measured case, nor with a case not run or a mode unsupported."""
        measured = self.cases > 0
        notes = [note]
        if self.unsupported:
            notes.append(
                f"Unsupported: the target raised at {len(self.unsupported)} of {len(self.unsupported) + self.cases} "
                f"cases ({self.unsupported[0]}): a refusal, not a wrong number."
            )
        if s.allowance is not None:
            notes.append(f"Errors divided by the allowance {s.allowance}.")
        if self.skipped:
            notes.append(f"{self.skipped} cases outside the target's declared domain were skipped.")
        if self.beyond:
            notes.append(
                f"{self.beyond} cases where the allowance promises no digit (30 n eps kappa >= 1) were not judged."
            )
        if self.declined:
            notes.append(
                f"The target raised (declined) at {len(self.declined)} special points, e.g. '{self.declined[0]}': "
                "no defect."
            )
        inapplicable = not measured and self.nan is not None and not self.not_run and not self.unsupported
        if inapplicable:
            notes.append(f"Not applicable (nothing was measured, so no verdict): {self.nan}")
        if self.not_run:
            notes.append(f"Not run: {len(self.not_run)} cases ({self.not_run[0]}); no verdict from them.")
        ev = Evidence(
            claim="",
            check=s.check,
            method=method,  # type: ignore[arg-type]
            backend=s.backend(dtype),
            cases=self.cases,
            worst_ratio=self.worst if measured or not (self.unsupported or inapplicable or self.not_run) else None,
            threshold=THRESHOLD,
            seconds=self.seconds,
            passed=not self.fails and not self.not_run and not self.unsupported and measured,
            notes=" ".join(n.strip() for n in notes if n.strip()),
        )
        if self.unsupported:
            ev.data["unsupported"] = self.unsupported[0]
        if self.points:
            ev.data["series"] = size_series(self.points)
        if s.allowance is not None:
            ev.data["allowance"] = s.allowance
        if self.not_run:
            ev.data["not_run"] = len(self.not_run)
        return ev


def scan(s: Scan[C], cases: Iterable[tuple[Any, ...]], method: str = "float", note: str = "") -> list[Evidence]:
    """Evidence per dtype (in the order the dtypes first appear) of ``s.check`` over ``cases``:
    (case, dtype) or (case, dtype, label) each. The telling failure of a dtype becomes its
    counterexample (:func:`counterexample`)."""
    by_dtype: dict[str, Tally[C]] = {}
    for case in cases:
        dtype = case[1]
        label = str(case[2]) if len(case) > 2 else ""
        by_dtype.setdefault(dtype, Tally()).add(s, case[0], dtype, label)
    out = []
    for dtype, tally in by_dtype.items():
        ev = tally.evidence(s, dtype, method, note)
        if tally.fails:
            counterexample(s, dtype, tally.fails, ev)
        out.append(ev)
    return out


def size_series(points: Sequence[tuple[float, int, float]]) -> dict[str, Any]:
    """The (parameter size, test ratio) series of a scan's cases for the report's figure of the
    error against parameter size: against max|x_ij| where the cases span magnitudes (a search
    outwards), else against n; a ratio that is not finite (a failed call) is -1."""
    mags = [m for m, _n, _r in points if m > 0]
    by_mag = bool(mags) and max(mags) / min(mags) >= 10
    return {
        "x": "max|x_ij|" if by_mag else "n",
        "y": "ratio",
        "points": [[m if by_mag else float(n), r if math.isfinite(r) else -1.0] for m, n, r in points],
    }


def counterexample(s: Scan[C], dtype: str, failures: list[Failure[C]], ev: Evidence) -> None:
    """Record on ``ev`` the telling one of ``failures`` (see :func:`telling`), shrunk by
    ``s.shrink``, as its counterexample, and up to three failures of another kind (two decades
    or more of magnitude away, or at a special point) in ``data['other_counterexamples']``. A
    failure that could not be measured (NaN) is noted, never a counterexample. The engine
    confirms the counterexample by measuring it again (:func:`~orthoverify.engine.checks.confirm_again`)."""
    failures = sorted(failures, key=lambda f: telling(s, f))
    case, c, label = failures[0]
    steps: list[str] = []
    if s.shrink is not None and c.ratio != math.inf:
        case2, c2, steps = s.shrink(case, dtype, c)
        if steps:
            found_at = f"found at the special point '{label}', " if label else ""
            case, c, label = case2, c2, ""
            steps = [found_at + ", ".join(steps)] if found_at else steps
    confirmed = not math.isnan(c.ratio)
    confirm = s.recheck(case, dtype) if confirmed and s.recheck is not None else ""
    where = s.where(case)
    if label:
        where = f"at the special point '{label}' ({where.removeprefix('at ')})"
    if steps:
        where += f" (shrunk: {', '.join(steps)})"
    cause = s.cause(case, dtype) if confirmed and s.cause is not None else ""
    if confirmed:
        ev.counterexample = Counterexample(
            s.inputs(case, dtype),
            s.check,
            f"{where}: {c.display}.{cause}",
            16 if dtype == "float64" else 7,
            s.check,
            THRESHOLD,
            None,
        )
    ev.notes = (
        ev.notes + f" Failure {where}: {c.display}{confirm}" + ("" if confirmed else " (not measured)") + cause
    ).strip()
    if confirmed and s.extreme(case):  # every failure is outside the ordinary domain (they sort first)
        ev.data["fragile"] = f"fails only outside the ordinary domain ({s.domain})"
        ev.notes = f"Fragile: {ev.data['fragile']}; every ordinary case passed. {ev.notes}"
    m0 = s.magnitude(case)
    others: list[dict[str, Any]] = []
    for p, oc, lab in failures[1:]:
        m = s.magnitude(p)
        far = m0 > 0 and m > 0 and abs(math.log10(m / m0)) >= 2
        if (
            (far or lab)
            and len(others) < 3
            and all(abs(math.log10(max(float(o["max_abs"]), 1e-300) / max(m, 1e-300))) >= 2 for o in others)
        ):
            others.append({"inputs": s.inputs(p, dtype), "value": oc.display, "max_abs": m, "label": lab})
    if others:
        ev.data["other_counterexamples"] = others
        ev.notes += " Other failures of another kind: " + "; ".join(
            f"{o['label'] or 'max|x_ij| = ' + format(o['max_abs'], '.3g')}: {o['value']}" for o in others
        )


# ------------------------------------------------------------------------------ recorded cases
class Recorded(NamedTuple):
    """One case a check measured: its size, ratio (inf: a failed call), the case and its dtype."""

    n: int
    ratio: float
    case: Any
    dtype: str


class CaseBook(dict[str, dict[bytes, Recorded]]):
    """check -> every case its measuring routine measured, by the case's bytes (a re-run is kept
    once): the series of its evidence, its smallest counterexample, the other failures blame reads."""

    def record(self, check: str, n: int, ratio: float, case: Mapping[str, Any], dtype: str) -> None:
        """Keep one measured case of ``check`` (the first measurement of a case stands)."""
        self.setdefault(check, {}).setdefault(dtype.encode() + case_bytes(case), Recorded(n, ratio, case, dtype))


def case_bytes(case: Mapping[str, Any]) -> bytes:
    """The bytes of a case's arrays as float64, in its order: a key that tells cases apart exactly."""
    return b"".join(np.ascontiguousarray(np.asarray(v, np.float64)).tobytes() for v in case.values())


def with_series(
    book: CaseBook,
    check: str,
    evidence: list[Evidence],
    what: str,
    *,
    dtype_of: Callable[[Evidence], str],
    measure: Callable[[Any, str], Measure],
    inputs: Callable[[Any, str], dict[str, Any]],
    replay: str,
) -> list[Evidence]:
    """The evidence of ``check`` with, in ``data``: ``mode`` (``what`` it exercised), its (n,
    ratio) ``series`` from ``book`` (-1 stands for a failed call), and for a failure the
    ``smallest_failing_n`` and the ``replay`` command; the counterexample becomes the smallest
    failing case of its dtype when that one fails again (``measure``), the worst staying in the notes."""
    cases = list(book.get(check, {}).values())
    failing = [c for c in cases if not c.ratio <= THRESHOLD]
    for ev in evidence:
        dtype = dtype_of(ev)
        points = [[float(c.n), float(c.ratio) if math.isfinite(c.ratio) else -1.0] for c in cases if c.dtype == dtype]
        ev.data = {**ev.data, "mode": what, "series": {"x": "n", "y": "ratio", "points": points}}
        if ev.counterexample is not None:
            _smallest(check, ev, failing, measure, inputs)
            ev.data["smallest_failing_n"] = min((c.n for c in failing if c.dtype == dtype), default=None)
            ev.data["replay"] = replay
    return evidence


def _smallest(
    check: str,
    ev: Evidence,
    failing: list[Recorded],
    measure: Callable[[Any, str], Measure],
    inputs: Callable[[Any, str], dict[str, Any]],
) -> None:
    """Replaces the counterexample of ``ev`` (the telling case) by the smallest failing case of its
    dtype when that one fails again on a re-run; the one it replaces stays in the notes."""
    cx = ev.counterexample
    if cx is None:
        return
    dtype = str(cx.inputs.get("dtype"))
    mine = sorted((c for c in failing if c.dtype == dtype), key=lambda c: c.n)
    if not mine or inputs(mine[0].case, dtype) == cx.inputs:
        return
    n, case = mine[0].n, mine[0].case
    again = measure(case, dtype)
    if not again.ratio > THRESHOLD:
        return
    ev.counterexample = Counterexample(
        inputs(case, dtype), check, again.display, cx.precision_digits, check, cx.threshold
    )
    ev.notes += f" Counterexample: the smallest failing case (n = {n}); the worst was {cx.value[:300]}"


__all__ = [
    "CaseBook",
    "Recorded",
    "Scan",
    "Tally",
    "case_bytes",
    "counterexample",
    "scan",
    "size_series",
    "telling",
    "with_series",
]
