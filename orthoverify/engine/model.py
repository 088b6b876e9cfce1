"""The data of a verification: claims, evidence, counterexamples and verdicts."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from orthoverify.backends.base import Method
from orthoverify.errors import RegistryError

if TYPE_CHECKING:
    from orthoverify.engine.checks import Check

Kind = Literal["identity", "coverage", "gradient", "bound", "count", "existence", "complexity"]
Verdict = Literal["verified", "refuted", "fragile", "unsupported", "inconclusive", "error"]
Origin = Literal["catalogue", "added", "corrected"]

KINDS: tuple[str, ...] = ("identity", "coverage", "gradient", "bound", "count", "existence", "complexity")
VERDICTS: tuple[str, ...] = ("verified", "refuted", "fragile", "unsupported", "inconclusive", "error")
COUNTED: tuple[str, ...] = ("verified", "refuted", "inconclusive", "error")
"""The verdicts every summary counts (zeros included); ``fragile`` and ``unsupported`` (findings
about code under ``validate``) are counted only where they occur."""
ORIGINS: tuple[str, ...] = ("catalogue", "added", "corrected")
"""Where a claim comes from: the claim catalogue (stable public ids), added by orthoverify from
the paper (a proof's lines, an implicit numerical claim, a boundary), or the ``.corrected`` twin
of a printed claim."""
METHODS: tuple[str, ...] = ("symbolic", "high-precision", "rigorous", "float", "exhaustive", "search", "measured")

_ID = re.compile(r"^[a-z][a-z0-9]*(\.[a-z0-9_-]+)+$")


@dataclass(frozen=True)
class Paper:
    """A source paper as the product cites it: authors, title, venue, and the short name of its
    parametrisation. A claim family carries one (``PAPER_INFO`` beside its ``CLAIMS``)."""

    key: str
    authors: str
    title: str
    venue: str
    short: str
    scope: str = ""
    """What of the paper the family covers, where that is not the whole paper."""

    def citation(self) -> str:
        text = f"{self.authors}. {self.title}. {self.venue} ({self.short})"
        return f"{text}, {self.scope}" if self.scope else text


_PLACE_LABELS: tuple[tuple[str, str, str], ...] = (
    ("theorem", "Thm", "Thms"),
    ("lemma", "Lemma", "Lemmas"),
    ("corollary", "Cor.", "Cors."),
    ("proposition", "Prop.", "Props."),
    ("claim", "Claim", "Claims"),
    ("algorithm", "Alg.", "Algs."),
    ("section", "Sec.", "Secs."),
    ("appendix", "App.", "Apps."),
    ("equation", "eq.", "eqs."),
    ("table", "Table", "Tables"),
    ("figure", "Fig.", "Figs."),
)


@dataclass(frozen=True, kw_only=True)
class Place:
    """Where a claim is printed, in the paper's own numbering: each numbered item is a field
    (a number, a range ``"14-15"`` or a list ``"2 and 5"``), and :meth:`render` builds the one
    spelling every output shows (``Thm 5, Sec. 6.2 (and its proof)``). ``source`` names another
    paper a family cites (``"Arjovsky et al."``); ``also`` lists further places, rendered after
    a semicolon."""

    theorem: str = ""
    lemma: str = ""
    corollary: str = ""
    proposition: str = ""
    claim: str = ""
    algorithm: str = ""
    section: str = ""
    appendix: str = ""
    equation: str = ""
    table: str = ""
    figure: str = ""
    note: str = ""
    """What of the place is meant, in words (``"and its proof"``), rendered in parentheses."""
    source: str = ""
    also: tuple[Place, ...] = ()

    def __post_init__(self) -> None:
        if not self.render():
            raise RegistryError("a Place names at least one item, a note or a source")

    def render(self) -> str:
        """The place as text: source, the numbered items in a fixed order, the note."""
        parts = []
        for name, one, many in _PLACE_LABELS:
            value = str(getattr(self, name))
            if value:
                plural = any(sep in value for sep in ("-", ",", " and "))
                parts.append(f"{many if plural else one} {value}")
        text = " ".join(t for t in (self.source, ", ".join(parts)) if t)
        if self.note:
            text = f"{text} ({self.note})" if text else self.note
        more = [(replace(p, source="") if p.source == self.source else p).render() for p in self.also]
        return "; ".join([text, *more])


@dataclass(frozen=True)
class Counterexample:
    """Inputs that break a claim, with the breaking quantity's value at high precision.

    ``inputs`` maps each input name to nested lists of decimal strings (exact rationals
    ``p/q`` for exact evidence) that reproduce the case exactly; ``check`` names the check
    whose quantity replays it.
    """

    inputs: dict[str, Any]
    quantity: str
    value: str
    precision_digits: int | Literal["exact"]
    check: str
    threshold: float | None = None
    float64_value: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inputs": jsonable(self.inputs),
            "quantity": self.quantity,
            "value": self.value,
            "precision_digits": self.precision_digits,
            "check": self.check,
        }
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.float64_value is not None:
            out["float64_value"] = self.float64_value
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Counterexample:
        return cls(
            inputs=d["inputs"],
            quantity=d["quantity"],
            value=d["value"],
            precision_digits=d["precision_digits"],
            check=d["check"],
            threshold=d.get("threshold"),
            float64_value=d.get("float64_value"),
        )


@dataclass
class Evidence:
    """What one check produced on one backend."""

    claim: str
    check: str
    method: Method
    backend: str
    cases: int = 0
    worst_ratio: float | None = None
    threshold: float | None = None
    seconds: float = 0.0
    passed: bool = False
    counterexample: Counterexample | None = None
    notes: str = ""
    error: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {
            "check": self.check,
            "method": self.method,
            "backend": self.backend,
            "cases": self.cases,
            "worst_ratio": json_float(self.worst_ratio),
            "threshold": self.threshold,
            "seconds": round(self.seconds, 4),
            "passed": bool(self.passed),
            "refutes": self.counterexample is not None,
            "notes": self.notes,
            "error": self.error,
            "data": jsonable(self.data),
        }
        if self.counterexample is not None:  # every counterexample is kept; the claim records the strongest
            out["counterexample"] = self.counterexample.to_json()
        return out


def jsonable(x: Any) -> Any:
    """Plain JSON values from NumPy scalars, tuples and non-finite floats (recursively)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float):
        return json_float(x)
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    return str(x)


def json_float(x: float | None) -> float | str | None:
    """JSON has no Infinity or NaN: those are written as strings."""
    if x is None:
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return float(f"{x:.6g}")


PlotKind = Literal["line", "histogram"]
PLOT_KINDS: tuple[str, ...] = ("line", "histogram")
SERIES_STYLES: tuple[str, ...] = ("line", "points", "line+points")


@dataclass(frozen=True)
class PlotSeries:
    """One series of a declared figure: the points (``x``, ``y``) of a line chart, or the values
    (``y``; ``x`` empty) of one histogram. A ``reference`` series (a formula drawn for comparison,
    not a measurement) is drawn after the measured ones."""

    label: str
    x: Sequence[float] = ()
    y: Sequence[float] = ()
    style: Literal["line", "points", "line+points"] = "line+points"
    dashed: bool = False
    reference: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "x": [json_float(float(v)) for v in self.x],
            "y": [json_float(float(v)) for v in self.y],
            "style": self.style,
            "dashed": self.dashed,
            "reference": self.reference,
        }


@dataclass(frozen=True)
class PlotRef:
    """A reference line of a declared figure: a value on the ``y`` (horizontal line) or ``x`` axis."""

    value: float
    label: str
    axis: Literal["x", "y"] = "y"


@dataclass(frozen=True, kw_only=True)
class Plot:
    """A figure a claim declares: what the picture is (kind, title, caption, axes, reference lines,
    histogram bins) and ``series``, which reads the series from the claim's evidence. The result
    file carries it typed (``claims[].figures``, written by :meth:`to_json`), so that a report draws
    it from the JSON alone, knowing no claim. Claims declaring the same ``ident`` share one figure
    (the report merges their series: a line's points by label, a histogram's values by label)."""

    ident: str
    kind: PlotKind
    title: str
    caption: str
    x_label: str
    series: Callable[[Sequence[Evidence]], Sequence[PlotSeries]]
    y_label: str = ""
    log_x: bool = False
    log_y: bool = False
    refs: tuple[PlotRef, ...] = ()
    bins: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in PLOT_KINDS:
            raise RegistryError(f"figure {self.ident}: unknown kind {self.kind!r}")
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", self.ident):
            raise RegistryError(f"figure ident {self.ident!r} is not lower-case words joined by '-'")

    def to_json(self, evidence: Sequence[Evidence]) -> dict[str, Any] | None:
        """The figure with its series read from ``evidence`` (None when no series has a point)."""
        series = [s for s in self.series(evidence) if s.x or s.y]
        if not series:
            return None
        return {
            "ident": self.ident,
            "kind": self.kind,
            "title": self.title,
            "caption": self.caption,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "log_x": self.log_x,
            "log_y": self.log_y,
            "refs": [{"value": json_float(r.value), "label": r.label, "axis": r.axis} for r in self.refs],
            "bins": [json_float(b) for b in self.bins],
            "series": [s.to_json() for s in series],
        }


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A statement from a paper and the checks that produce evidence about it, with its front
    matter: where the paper prints it (``place``, from which ``where`` is rendered), where the
    claim comes from (``origin``), a one-line ``summary`` and the verdict the evidence gives
    today (``expected``). The registered claims declare all four (tests/claims/test_front_matter.py);
    the golden verdict test, the README's tables and the proofs' headings are checked against them."""

    id: str
    paper: str
    statement: str
    kind: Kind
    checks: tuple[Check, ...]
    place: Place | None = None
    where: str = ""
    """The place as text: rendered from ``place`` when it is given (then leave this empty)."""
    expected: Verdict | None = None
    origin: Origin | None = None
    summary: str = ""
    notes: str = ""
    corrects: str | None = None
    figures: tuple[Plot, ...] = ()
    """The figures the claim's evidence is drawn in (the report's generic ratio figures aside)."""

    def __post_init__(self) -> None:
        if self.place is not None:
            if self.where:
                raise RegistryError(f"claim {self.id}: give its place or its where, not both")
            object.__setattr__(self, "where", self.place.render())
        if self.expected is not None and self.expected not in VERDICTS:
            raise RegistryError(f"claim {self.id}: unknown expected verdict {self.expected!r}")
        if self.origin is not None and self.origin not in ORIGINS:
            raise RegistryError(f"claim {self.id}: unknown origin {self.origin!r}")
        if self.origin is not None and (self.origin == "corrected") != (self.corrects is not None):
            raise RegistryError(f"claim {self.id}: origin 'corrected' and 'corrects' go together")
        if "\n" in self.summary:
            raise RegistryError(f"claim {self.id}: the summary is one line")
        if not _ID.match(self.id):
            raise RegistryError(f"claim id {self.id!r} is not of the form paper.name[.corrected]")
        if not self.id.startswith(self.paper + "."):
            raise RegistryError(f"claim id {self.id!r} does not start with its paper key {self.paper!r}")
        if self.kind not in KINDS:
            raise RegistryError(f"claim {self.id}: unknown kind {self.kind!r}")
        if self.id.endswith(".corrected") != (self.corrects is not None):
            raise RegistryError(f"claim {self.id}: '.corrected' ids and 'corrects' go together")
        if self.corrects is not None and self.id != self.corrects + ".corrected":
            raise RegistryError(f"claim {self.id} must be named {self.corrects}.corrected")
        names = [c.name for c in self.checks]
        if len(set(names)) != len(names):
            raise RegistryError(f"claim {self.id}: check names are not unique: {names}")
        if not self.checks:
            raise RegistryError(f"claim {self.id} has no checks")

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise RegistryError(f"claim {self.id} has no check named {name!r}")

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "paper": self.paper,
            "where": self.where,
            "origin": self.origin,
            "summary": self.summary,
            "expected": self.expected,
            "kind": self.kind,
            "statement": self.statement,
            "corrects": self.corrects,
            "checks": [c.name for c in self.checks],
        }


def skipped(e: Evidence) -> bool:
    """True for evidence of a check that could not run here (``data["skipped"]`` says why, e.g.
    a ``rigorous`` check without python-flint): it is recorded, never passed, and decides nothing."""
    return bool(e.data.get("skipped")) and not e.passed and e.error is None and e.counterexample is None


def decide(evidence: list[Evidence]) -> Verdict:
    """The verdict a list of evidence earns (README.md, "How evidence becomes a verdict").

    error: a check crashed; refuted: a counterexample confirmed at high precision or exactly
    (for ``rigorous`` evidence: a violation proved by an enclosure); verified: every check that
    ran passed (skipped evidence, see :func:`skipped`, is left out, but cannot verify a claim on
    its own); inconclusive: otherwise (a failure that did not survive confirmation, a rigorous
    bound neither proved nor refuted, or nothing ran). unsupported: no refutation, but the code under
    test declined a mode with an exception of its own (``data["unsupported"]``: its first line), a
    refusal, not a wrong answer. fragile: refuted, but every counterexample lies outside the
    ordinary domain of the code under ``validate`` (``data["fragile"]``: subnormal or near-overflow
    parameters).
    """
    if any(e.error is not None for e in evidence):
        return "error"
    found = [e for e in evidence if e.counterexample is not None]
    if found:
        return "fragile" if all(e.data.get("fragile") for e in found) else "refuted"
    if any(e.data.get("unsupported") for e in evidence):
        return "unsupported"
    ran = [e for e in evidence if not skipped(e)]
    if ran and all(e.passed for e in ran):
        return "verified"
    return "inconclusive"
