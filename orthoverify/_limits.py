"""Bounds on the resources a user may ask for (seconds, memory), checked once, here.

A number of seconds or bytes comes from a command-line option or a keyword argument; each is
checked before any work, with an :class:`~orthoverify.errors.InputError` naming it. The bounds
are what the operating system's timers and limits accept: ``setitimer`` and ``poll`` overflow
on a timeout of ``1e308`` seconds, and a NaN compares false with everything (a call would time
out at once, and the run would refute a correct target).
"""

from __future__ import annotations

import math
from typing import Any

from orthoverify.errors import InputError

MAX_SECONDS = 86_400.0
"""The longest timeout orthoverify takes (one day, for one call or one replay)."""

POLL_MAX_SECONDS = 2_000_000.0
"""The longest single wait handed to ``poll``/``select`` (their limit is 2**31 - 1 milliseconds)."""

DEFAULT_MEMORY_LIMIT = 8 * 2**30
"""Bytes of address space a target's process may use (``validate --memory-limit``); torch and a
target's imports take about 1.5 GiB of it."""

LOAD_FLOOR_SECONDS = 10.0
"""The least time loading a target (importing its module, building it) may take: loading is bounded
by the per-call timeout, or by this where that is shorter (a one-time cost, which a loaded machine
slows, is not judged at a timeout meant for one call)."""

MIN_MEMORY_LIMIT = 256 * 2**20
"""The smallest memory limit accepted: below it Python and torch cannot start."""

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def seconds(value: Any, name: str) -> float:
    """``value`` as a number of seconds: positive, finite and at most :data:`MAX_SECONDS`."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a positive number of seconds, got {str(value)[:40]!r}") from None
    if isinstance(value, bool) or not (math.isfinite(x) and 0 < x <= MAX_SECONDS):
        raise InputError(
            f"{name}: expected a positive number of seconds up to {MAX_SECONDS:g} (one day), got {str(value)[:40]!r}"
        )
    return x


def memory_bytes(value: Any, name: str) -> int | None:
    """A memory limit in bytes: an integer, or text such as ``4G``, ``512M`` (binary units); ``0``
    or ``none`` for no limit (None). At least :data:`MIN_MEMORY_LIMIT`."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower().removesuffix("b").removesuffix("i")
        if text in ("none", "0", ""):
            if text == "":
                raise InputError(f"{name}: expected a size such as 4G, 512M or none, got {value!r}")
            return None
        unit = _UNITS.get(text[-1:], 0) if text[-1:].isalpha() else 1
        digits = text[:-1] if text[-1:].isalpha() else text
        try:
            number = float(digits)
        except ValueError:
            number = math.nan
        if not unit or not (math.isfinite(number) and number >= 0):
            raise InputError(f"{name}: expected a size such as 4G, 512M or none, got {value[:40]!r}")
        size = int(number * unit)
    elif isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        raise InputError(f"{name}: expected a number of bytes, a size such as 4G, or None; got {type(value).__name__}")
    if size == 0:
        return None
    if size < MIN_MEMORY_LIMIT:
        raise InputError(f"{name}: {size} bytes is below the {MIN_MEMORY_LIMIT // 2**20} MiB a target's process needs")
    return size
