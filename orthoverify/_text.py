"""Text from untrusted places (result files, a target's messages) made safe to show.

A result file or a target can hold control characters: an ANSI escape sequence rewrites the
terminal (or hides a line), a carriage return overwrites what was printed, a bidirectional
override reorders what a reader sees. :func:`printable` writes each such character as a visible
escape (``\\x1b``, ``\\u202e``), so the text shows what it holds; newlines and tabs are kept
where the text may span lines.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_KEEP = frozenset("\n\t")


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _unsafe(c: str) -> bool:
    # Cc: C0/C1 controls (ESC, CR, BEL, DEL...); Cf: format characters (bidi overrides, zero widths)
    # Zl/Zp: line and paragraph separators; Cs: lone surrogates
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control or format character written as an escape (``\\x1b``); newlines
    and tabs kept when ``newlines`` (else escaped too)."""
    if text.isprintable():
        return text
    keep = _KEEP if newlines else frozenset()
    return "".join(_escape(c) if c not in keep and _unsafe(c) else c for c in text)


def printable_data(obj: Any) -> Any:
    """JSON data (dicts, lists, strings, numbers) with :func:`printable` applied to every string,
    keys included."""
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, dict):
        return {printable(k) if isinstance(k, str) else k: printable_data(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [printable_data(v) for v in obj]
    return obj


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a character :func:`printable` would escape (newlines and tabs included)."""
    return any(_unsafe(c) for c in text)


def duration_text(seconds: float) -> str:
    """A duration as progress lines show it: ``42s``, ``3m05s``."""
    s = round(seconds)
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}s"
