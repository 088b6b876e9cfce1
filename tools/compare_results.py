"""Compare two orthoverify result files claim by claim (for restructures: the behaviour kept).

    python tools/compare_results.py BEFORE.json AFTER.json [CLAIM-GLOB ...]

Prints every difference in verdict, counterexample (check, inputs, value, digits) and evidence rows
(check, method, backend, passed, refutes, cases); exits 1 when there is one. Timings, ratios' last
digits and notes are not compared.
"""

from __future__ import annotations

import fnmatch
import json
import sys
from typing import Any

ROW_KEYS = ("check", "method", "backend", "passed", "refutes", "cases")
CX_KEYS = ("check", "inputs", "value", "precision_digits", "quantity")


def _claims(path: str) -> dict[str, dict[str, Any]]:
    with open(path) as fh:
        data = json.load(fh)
    return {c["id"]: c for c in data["claims"]}


def compare(before: str, after: str, patterns: list[str]) -> list[str]:
    a, b = _claims(before), _claims(after)
    ids = [i for i in dict.fromkeys([*a, *b]) if not patterns or any(fnmatch.fnmatchcase(i, p) for p in patterns)]
    diffs: list[str] = []
    for cid in ids:
        if cid not in a or cid not in b:
            diffs.append(f"{cid}: only in {'after' if cid not in a else 'before'}")
            continue
        ca, cb = a[cid], b[cid]
        if ca["verdict"] != cb["verdict"]:
            diffs.append(f"{cid}: verdict {ca['verdict']} -> {cb['verdict']}")
        xa, xb = ca.get("counterexample"), cb.get("counterexample")
        if (xa is None) != (xb is None):
            diffs.append(f"{cid}: counterexample {'added' if xa is None else 'removed'}")
        elif xa is not None and xb is not None:
            for k in CX_KEYS:
                if xa.get(k) != xb.get(k):
                    diffs.append(f"{cid}: counterexample {k}: {str(xa.get(k))[:120]} -> {str(xb.get(k))[:120]}")
        ra = [tuple(e.get(k) for k in ROW_KEYS) for e in ca["evidence"]]
        rb = [tuple(e.get(k) for k in ROW_KEYS) for e in cb["evidence"]]
        if ra != rb:
            for row in ra:
                if row not in rb:
                    diffs.append(f"{cid}: evidence row gone or changed: {row}")
            for row in rb:
                if row not in ra:
                    diffs.append(f"{cid}: evidence row new or changed: {row}")
            if sorted(map(str, ra)) == sorted(map(str, rb)):
                diffs.append(f"{cid}: evidence rows reordered")
    return diffs


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    diffs = compare(argv[0], argv[1], argv[2:])
    print("\n".join(diffs) if diffs else "no differences in verdicts, counterexamples or evidence rows")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
