"""What ``orthoverify validate --list`` prints, without importing torch (so it answers at once).

The listing's data (kinds with their signature, conventions, allowance and checks; the checks;
the built-in adapters; the declaration keywords and named domains) is computed by
:func:`orthoverify.conformance.listing_data`, which needs torch and the whole conformance layer
(seconds to import). ``validate_listing.json`` beside this module is that data, written by
``python tools/validate_listing.py``; ``tests/unit/conformance/test_reach_declare.py`` checks
that it is exactly what the code computes. Whether an adapter's package is installed is decided
here, when the listing is printed. This module imports nothing of orthoverify's.
"""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("validate_listing.json")

DEVICES_NOTE = "devices (cpu against cuda) is planned too where a GPU is present"


def with_installed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each adapter's ``installed`` (its package importable here) filled in."""
    adapters = {}
    for name, a in data["adapters"].items():
        req = a.get("requires")
        adapters[name] = {**a, "installed": req is None or importlib.util.find_spec(req) is not None}
    return {**data, "adapters": adapters}


def load() -> dict[str, Any]:
    """The recorded listing data, with each adapter's ``installed`` decided now."""
    data: dict[str, Any] = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return with_installed(data)


def render(data: dict[str, Any]) -> str:
    """The text of ``validate --list``: every kind (signature, conventions, allowance, checks) and
    every built-in adapter (kind, what it wraps, whether its package is installed)."""
    lines = ["Kinds (orthoverify validate TARGET --kind KIND):", ""]
    for name, k in data["kinds"].items():
        lines.append(name)
        lines.append(f"  signature:  {k['signature']}")
        lines += textwrap.wrap(k["conventions"], 100, initial_indent="  conventions: ", subsequent_indent="    ")
        lines.append(f"  allowance:  {k['allowance']}")
        lines.append(f"  checks:     {', '.join(k['checks'])}")
        lines.append("")
    lines.append(f"Checks ({DEVICES_NOTE}):")
    lines.append("")
    for name, statement in data["checks"].items():
        lines += textwrap.wrap(statement, 100, initial_indent=f"{name}: ", subsequent_indent="    ")
    lines.append("")
    lines.append("Built-in adapters (orthoverify validate ADAPTER):")
    lines.append("")
    for name, a in data["adapters"].items():
        state = f" [needs {a['requires']}: not installed]" if not a.get("installed", True) else ""
        lines.append(f"{name}  ({a['kind']}){state}")
        lines += textwrap.wrap(a["description"], 100, initial_indent="    ", subsequent_indent="    ")
    lines.append("")
    lines.append("Declaration keywords (@declare(...) from orthoverify.conformance.declare):")
    lines.append("")
    for name, meaning in data["declarations"].items():
        lines += textwrap.wrap(meaning, 100, initial_indent=f"{name}: ", subsequent_indent="    ")
    lines.append("")
    lines.append("Named domains (declare(domain=[...])): " + ", ".join(data["domains"]))
    return "\n".join(lines)
