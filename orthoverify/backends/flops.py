"""A counting arithmetic: float64 scalars that record every operation and where it happened.

Why: the flop counts a paper prints (e.g. Table 2 and Table 5 of Mhammedi et al. 2017) are
checked by *running* the generic code of the algorithm on this arithmetic, not by
re-deriving the counts by hand. :class:`FlopBackend` is an object-array backend whose
scalars are :class:`Flop`; the values are ordinary Python floats (so the numbers computed
are the float64 ones), and each operation is recorded into the active :class:`FlopCounter`.

Counting rules
--------------
* A **flop** is one binary ``+``, ``-``, ``*`` or ``/`` between two real numbers (a
  :class:`Flop` and a Flop or a nonzero Python number). The kinds ``add``, ``sub``, ``mul``,
  ``div`` are recorded separately.
* **Unary negation** is recorded as kind ``neg`` and is *not* a flop, so a count can be
  reported with or without negations. ``sqrt`` (not used by Algorithm 1) is recorded as its
  own kind too. ``abs``, comparisons and ``float()`` are free (sign-bit and bookkeeping).
* A **structural zero** is the Python ``int`` 0: what the "structural" mode stores in the
  zero upper triangle of U (eq. 9), what NumPy's object matmul starts an empty sum with, and
  the backend's :attr:`FlopBackend.zero`. An operation with a structural-zero operand is free
  and returns the other operand or 0: ``x+0 -> x``, ``0+x -> x``, ``x-0 -> x``, ``x*0 -> 0``,
  ``0*x -> 0``, ``0/x -> 0``; ``0-x -> -x`` costs one ``neg``. A ``Flop(0.0)`` is a number like
  any other and is counted (the "dense" mode).
* :data:`STRUCTURAL_ZERO` is a *policy* zero: the active counter decides, per label, whether
  operations with it are free (like int 0) or counted (like ``Flop(0.0)``). This reproduces
  accountings that exploit the zeros of U in some printed lines but not in others.

Attribution
-----------
On each counted operation the Python frames are walked upwards (``sys._getframe``) to the
first frame whose source line carries a marker comment ``# Alg1 <label>`` or ``# Count <label>`` (e.g. ``# Alg1
line 8``); the count is keyed by ``(label, k, kind)`` with ``k`` read from that frame's
locals (None when there is no int ``k``); the label ends at the next ``#`` (so a trailing
``# noqa`` is not part of it). Operations with no marked frame are keyed by label
``"other"``. Marker lookups are cached per (filename, line number). One counter is active at
a time (module state; not thread-safe). This backend is for counting, not for verification:
its ``eps`` is float64's unit roundoff, but its results carry no evidence beyond that.
"""

from __future__ import annotations

import linecache
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal

from orthoverify.backends.base import Array, Scalar, exact_decimal, nested_map
from orthoverify.backends.object_backend import ObjectBackend

__all__ = [
    "KINDS",
    "OTHER",
    "STRUCTURAL_ZERO",
    "Flop",
    "FlopBackend",
    "FlopCounter",
    "Key",
    "OpCounts",
    "ZeroMode",
    "active_counter",
    "counting",
]

Kind = Literal["add", "sub", "mul", "div", "neg", "sqrt"]
KINDS: tuple[Kind, ...] = ("add", "sub", "mul", "div", "neg", "sqrt")
"""Every kind of recorded operation; the first four are flops."""

ZeroMode = Literal["dense", "structural"]
"""How a label treats :data:`STRUCTURAL_ZERO`: counted like a number, or free."""

OTHER = "other"
"""Label of operations performed outside any marked source line."""

Key = tuple[str, int | None, str]
"""A count's key: (label, k, kind)."""

_MARKER = re.compile(r"#\s*(?:Alg1|Count)\s+(?P<label>[^#]*[^#\s])")
_MARKS: dict[tuple[str, int], str | None] = {}


def _marker(filename: str, lineno: int) -> str | None:
    """The ``# Alg1 <label>`` label on a source line, or None (cached)."""
    key = (filename, lineno)
    if key in _MARKS:
        return _MARKS[key]
    found = _MARKER.search(linecache.getline(filename, lineno))
    label = found.group("label") if found else None
    _MARKS[key] = label
    return label


def _attribute(frame: FrameType | None) -> tuple[str, int | None]:
    """(label, k) of the first marked frame at or above ``frame``; (``"other"``, None) if none."""
    f = frame
    while f is not None:
        label = _marker(f.f_code.co_filename, f.f_lineno)
        if label is not None:
            k = f.f_locals.get("k")
            return label, (k if type(k) is int else None)
        f = f.f_back
    return OTHER, None


# --------------------------------------------------------------------------- counts
@dataclass(frozen=True)
class OpCounts:
    """Numbers of recorded operations by kind; ``flops`` excludes negations (and sqrt)."""

    add: int = 0
    sub: int = 0
    mul: int = 0
    div: int = 0
    neg: int = 0
    sqrt: int = 0

    @property
    def flops(self) -> int:
        """Binary operations between two real numbers (the paper's "flop")."""
        return self.add + self.sub + self.mul + self.div

    @property
    def with_neg(self) -> int:
        """Flops plus unary negations (the other accounting)."""
        return self.flops + self.neg

    def __add__(self, other: OpCounts) -> OpCounts:
        return OpCounts(*(getattr(self, k) + getattr(other, k) for k in KINDS))

    @staticmethod
    def of(kinds: Mapping[str, int]) -> OpCounts:
        """From a kind -> count mapping."""
        return OpCounts(**{k: int(kinds.get(k, 0)) for k in KINDS})


class FlopCounter:
    """Counts of operations keyed by (label, k, kind), with the zero policy of each label.

    ``zero_policy`` maps labels to how they treat :data:`STRUCTURAL_ZERO` (``default`` for
    unlisted labels); the int 0 is always free, ``Flop(0.0)`` always counted.
    """

    def __init__(self, zero_policy: Mapping[str, ZeroMode] | None = None, default: ZeroMode = "structural") -> None:
        self.counts: Counter[Key] = Counter()
        self.zero_policy: dict[str, ZeroMode] = dict(zero_policy or {})
        self.default: ZeroMode = default

    def structural(self, label: str) -> bool:
        """True when ``label`` treats :data:`STRUCTURAL_ZERO` as free."""
        return self.zero_policy.get(label, self.default) == "structural"

    def record(self, label: str, k: int | None, kind: Kind) -> None:
        """Add one operation."""
        self.counts[(label, k, kind)] += 1

    def reset(self) -> None:
        """Forget every count."""
        self.counts.clear()

    def labels(self) -> list[str]:
        """Labels with at least one count, sorted."""
        return sorted({lab for lab, _, _ in self.counts})

    def select(self, labels: str | tuple[str, ...] | None = None, k: int | None = None) -> OpCounts:
        """Counts summed over the given labels (all when None) and, when given, one k."""
        want = (labels,) if isinstance(labels, str) else labels
        kinds: Counter[str] = Counter()
        for (lab, kk, kind), c in self.counts.items():
            if (want is None or lab in want) and (k is None or kk == k):
                kinds[kind] += c
        return OpCounts.of(kinds)

    @contextmanager
    def active(self) -> Iterator[FlopCounter]:
        """Make this the counter that :class:`Flop` operations record into."""
        global _ACTIVE
        previous, _ACTIVE = _ACTIVE, self
        try:
            yield self
        finally:
            _ACTIVE = previous


_ACTIVE: FlopCounter | None = None


def active_counter() -> FlopCounter | None:
    """The counter operations currently record into (None: they are not recorded)."""
    return _ACTIVE


@contextmanager
def counting(
    zero_policy: Mapping[str, ZeroMode] | None = None, default: ZeroMode = "structural"
) -> Iterator[FlopCounter]:
    """Count the operations of a block into a fresh :class:`FlopCounter`."""
    with FlopCounter(zero_policy, default).active() as c:
        yield c


def _rec(kind: Kind) -> None:
    """Record one operation of the caller's caller (the Flop method's caller)."""
    c = _ACTIVE
    if c is not None:
        label, k = _attribute(sys._getframe(2))
        c.counts[(label, k, kind)] += 1


# --------------------------------------------------------------------------- scalars
def _num(x: Any) -> float | None:
    """The value of a Python/NumPy real number (not a Flop), or None when not a number."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if hasattr(x, "dtype") and getattr(x, "shape", None) == () and x.dtype.kind in "iuf":
        return float(x)
    return None


def _is_int_zero(x: Any) -> bool:
    return type(x) is int and x == 0


class Flop:
    """A float64 value whose arithmetic is recorded into the active counter (module docstring)."""

    __slots__ = ("v",)

    def __init__(self, v: float) -> None:
        self.v = float(v)

    # binary operations: Flop (fast path), int 0 (free), other real numbers (counted)
    def __add__(self, o: Any) -> Any:
        if o.__class__ is Flop:
            _rec("add")
            return Flop(self.v + o.v)
        if _is_int_zero(o):
            return self
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("add")
        return Flop(self.v + x)

    def __radd__(self, o: Any) -> Any:
        if _is_int_zero(o):
            return self
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("add")
        return Flop(x + self.v)

    def __sub__(self, o: Any) -> Any:
        if o.__class__ is Flop:
            _rec("sub")
            return Flop(self.v - o.v)
        if _is_int_zero(o):
            return self
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("sub")
        return Flop(self.v - x)

    def __rsub__(self, o: Any) -> Any:
        if _is_int_zero(o):
            _rec("neg")
            return Flop(-self.v)
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("sub")
        return Flop(x - self.v)

    def __mul__(self, o: Any) -> Any:
        if o.__class__ is Flop:
            _rec("mul")
            return Flop(self.v * o.v)
        if _is_int_zero(o):
            return 0
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("mul")
        return Flop(self.v * x)

    def __rmul__(self, o: Any) -> Any:
        if _is_int_zero(o):
            return 0
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("mul")
        return Flop(x * self.v)

    def __truediv__(self, o: Any) -> Any:
        if o.__class__ is Flop:
            _rec("div")
            return Flop(self.v / o.v)
        if _is_int_zero(o):
            raise ZeroDivisionError("Flop division by a structural zero")
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("div")
        return Flop(self.v / x)

    def __rtruediv__(self, o: Any) -> Any:
        if _is_int_zero(o):
            return 0
        x = _num(o)
        if x is None:
            return NotImplemented
        _rec("div")
        return Flop(x / self.v)

    def __neg__(self) -> Any:
        _rec("neg")
        return Flop(-self.v)

    # free operations
    def __pos__(self) -> Flop:
        return self

    def __abs__(self) -> Flop:
        return Flop(abs(self.v))

    def __float__(self) -> float:
        return self.v

    def _cmp_value(self, o: Any) -> float | None:
        return o.v if isinstance(o, Flop) else _num(o)

    def __eq__(self, o: object) -> bool:
        x = self._cmp_value(o)
        return x is not None and self.v == x

    def __ne__(self, o: object) -> bool:
        return not self.__eq__(o)

    def __hash__(self) -> int:
        return hash(self.v)

    def __lt__(self, o: Any) -> bool:
        x = self._cmp_value(o)
        if x is None:
            return NotImplemented
        return self.v < x

    def __le__(self, o: Any) -> bool:
        x = self._cmp_value(o)
        if x is None:
            return NotImplemented
        return self.v <= x

    def __gt__(self, o: Any) -> bool:
        x = self._cmp_value(o)
        if x is None:
            return NotImplemented
        return self.v > x

    def __ge__(self, o: Any) -> bool:
        x = self._cmp_value(o)
        if x is None:
            return NotImplemented
        return self.v >= x

    def __repr__(self) -> str:
        return f"Flop({self.v!r})"


class _PolicyZero(Flop):
    """The zero whose cost the active counter's per-label policy decides (see STRUCTURAL_ZERO).

    As a subclass of Flop its reflected methods take precedence over Flop's, so every
    operation that involves it lands here. Free results are this zero itself, so it stays a
    policy zero for the line that consumes it.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0.0)

    @staticmethod
    def _where(depth: int) -> tuple[FlopCounter | None, str, int | None, bool]:
        """(counter, label, k, free) of the operation ``depth`` frames above this call."""
        c = _ACTIVE
        if c is None:
            return None, OTHER, None, True
        label, k = _attribute(sys._getframe(depth))
        return c, label, k, c.structural(label)

    def _binary(self, o: Any, kind: Kind, zero_left: bool) -> Any:
        """``0 op o`` (zero_left) or ``o op 0``, free or counted as the policy says."""
        other = o.v if isinstance(o, Flop) else (0.0 if _is_int_zero(o) else _num(o))
        if other is None:
            return NotImplemented
        c, label, k, free = self._where(3)
        o_zero = isinstance(o, _PolicyZero) or _is_int_zero(o)
        if free or _is_int_zero(o):
            if kind == "div" and (o_zero or not zero_left):
                raise ZeroDivisionError("Flop division by a structural zero")
            if o_zero or kind in ("mul", "div"):  # 0 op 0, 0 * x, x * 0, 0 / x
                return self
            if kind == "add" or not zero_left:  # 0 + x, x + 0, x - 0
                return o if isinstance(o, Flop) else Flop(other)
            if c is not None:  # 0 - x
                c.record(label, k, "neg")
            return Flop(-other)
        if c is not None:
            c.record(label, k, kind)
        a, b = (0.0, other) if zero_left else (other, 0.0)
        result = {"add": a + b, "sub": a - b, "mul": a * b}.get(kind)
        return Flop(a / b if result is None else result)

    def __add__(self, o: Any) -> Any:
        return self._binary(o, "add", True)

    def __radd__(self, o: Any) -> Any:
        return self._binary(o, "add", False)

    def __sub__(self, o: Any) -> Any:
        return self._binary(o, "sub", True)

    def __rsub__(self, o: Any) -> Any:
        return self._binary(o, "sub", False)

    def __mul__(self, o: Any) -> Any:
        return self._binary(o, "mul", True)

    def __rmul__(self, o: Any) -> Any:
        return self._binary(o, "mul", False)

    def __truediv__(self, o: Any) -> Any:
        return self._binary(o, "div", True)

    def __rtruediv__(self, o: Any) -> Any:
        return self._binary(o, "div", False)

    def __neg__(self) -> Any:
        c, label, k, free = self._where(2)
        if free:
            return self
        if c is not None:
            c.record(label, k, "neg")
        return Flop(-0.0)

    def __hash__(self) -> int:
        return hash(0.0)

    def __repr__(self) -> str:
        return "STRUCTURAL_ZERO"


STRUCTURAL_ZERO: Flop = _PolicyZero()
"""A zero whose operations are free or counted according to the active counter's policy."""


# --------------------------------------------------------------------------- backend
class FlopBackend(ObjectBackend):
    """Object arrays of :class:`Flop`; for counting operations, not for verification.

    ``zero`` is the structural int 0 (so ``sum`` of n numbers costs n - 1 adds and the
    zero blocks the backend builds are free); ``one`` is ``Flop(1.0)``.
    """

    name = "flops"
    family = "flops"
    method = "exhaustive"
    eps = 2.0**-53
    digits = 15

    @property
    def zero(self) -> Scalar:
        return 0

    @property
    def one(self) -> Scalar:
        return Flop(1.0)

    def _from_number(self, v: Any) -> Scalar:
        if isinstance(v, Flop):
            return v
        return Flop(float(v))

    def _is_native(self, v: Any) -> bool:
        return isinstance(v, Flop) or _is_int_zero(v)

    def _pivot_key(self, v: Scalar) -> float:
        return abs(float(v))

    def to_strings(self, x: Array) -> Any:
        return nested_map(lambda v: exact_decimal(float(v)), x)

    def sqrt(self, x: Any) -> Any:
        return self._map(_sqrt, x)

    def abs(self, x: Any) -> Any:
        return self._map(abs, x)

    def sign(self, x: Any) -> Any:
        return self._map(lambda v: Flop(float((float(v) > 0) - (float(v) < 0))), x)

    def cos(self, x: Any) -> Any:
        """Free, like ``abs``: trigonometric values only build phases and FFT twiddle factors,
        which do not depend on the vector a counted product is applied to."""
        return self._map(lambda v: Flop(math.cos(float(v))), x)

    def sin(self, x: Any) -> Any:
        """Free (see :meth:`cos`)."""
        return self._map(lambda v: Flop(math.sin(float(v))), x)

    def pi(self) -> Scalar:
        return Flop(math.pi)

    def is_zero(self, x: Any) -> bool:
        if hasattr(x, "reshape"):
            return all(float(v) == 0 for v in x.reshape(-1))
        return float(x) == 0

    def all_finite(self, x: Array) -> bool:
        return all(math.isfinite(float(v)) for v in x.reshape(-1))

    def positive(self, x: Scalar) -> bool:
        return float(x) > 0


def _sqrt(x: Any) -> Any:
    """Square root, recorded as kind ``sqrt`` (free on a structural zero)."""
    if _is_int_zero(x):
        return 0
    _rec("sqrt")
    return Flop(math.sqrt(float(x)))
