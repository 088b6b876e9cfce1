"""Numbers written as text, parsed strictly: the only way a string becomes a number in orthoverify.

Result files are untrusted data (people mail them around and attach them to issues), so a number
read from one is never evaluated: it must be a decimal (``-1.25``, ``3e-7``), an integer, or a
rational ``p/q`` written with digits only, within the bounds below; anything else is a
:class:`~orthoverify.errors.ParseError` naming the field. Bounds keep an exact conversion cheap
(``1e1000000000`` would otherwise build a billion-digit integer).
"""

from __future__ import annotations

import re
from fractions import Fraction

from orthoverify.errors import ParseError

MAX_CHARS = 2000
"""Longest number text accepted (the exact decimal of the smallest float64 subnormal has 751
significant digits and fits with room to spare)."""
MAX_EXPONENT = 2000
"""Largest decimal exponent accepted, after normalising ``0.000ddd`` and ``ddd000`` forms."""

_DECIMAL = re.compile(r"[+-]?(?P<int>\d*)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d{1,6}))?")
_RATIONAL = re.compile(r"[+-]?\d+/\d+")
_SPECIAL = {"nan": float("nan"), "inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf")}


def _where(field: str) -> str:
    return f" in {field}" if field else ""


def parse_exact(text: str, field: str = "") -> Fraction:
    """The exact value of a decimal, integer or ``p/q`` string; ParseError for anything else
    (expressions, names, ``inf``/``nan``, over-long or over-large numbers)."""
    if not isinstance(text, str):
        raise ParseError(f"expected a number written as a string{_where(field)}, got {type(text).__name__}")
    s = text.strip()
    if not s or len(s) > MAX_CHARS:
        what = "an empty string" if not s else f"{len(s)} characters (at most {MAX_CHARS})"
        raise ParseError(f"not a number{_where(field)}: {what}")
    if _RATIONAL.fullmatch(s):
        num, den = s.split("/")
        if int(den) == 0:
            raise ParseError(f"zero denominator{_where(field)}: {s[:40]!r}")
        return Fraction(int(num), int(den))
    m = _DECIMAL.fullmatch(s)
    if m is None or not (m.group("int") or m.group("frac")):
        raise ParseError(f"not a decimal, integer or p/q number{_where(field)}: {s[:60]!r}")
    digits = (m.group("int") or "") + (m.group("frac") or "")
    lead = len(digits) - len(digits.lstrip("0"))
    # decimal exponent of the leading significant digit: bounds the size of the exact value
    magnitude = int(m.group("exp") or 0) + len(m.group("int") or "") - lead
    if digits.strip("0") and abs(magnitude) > MAX_EXPONENT:
        raise ParseError(f"number out of range{_where(field)} (|decimal exponent| > {MAX_EXPONENT}): {s[:60]!r}")
    return Fraction(s)


def parse_float_text(text: str, field: str = "") -> float | Fraction:
    """A number string that may also be ``nan``, ``inf`` or ``-inf`` (as float repr writes them);
    finite values are returned exactly, as a Fraction."""
    if isinstance(text, str) and text.strip().lower() in _SPECIAL:
        return _SPECIAL[text.strip().lower()]
    return parse_exact(text, field)


def is_number_text(text: str) -> bool:
    """True when ``text`` parses as a number under :func:`parse_float_text`."""
    try:
        parse_float_text(text)
    except ParseError:
        return False
    return True
