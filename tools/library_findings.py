"""Record what ``orthoverify validate`` says about the installed libraries, and the README's table of it.

    python tools/library_findings.py [--profile quick|default] [--targets NAME,...] [--note TEXT]

Runs ``orthoverify validate TARGET --profile P --seed 0 --json ...`` (from the repository root, one
at a time) for every built-in adapter whose library is installed (``orthoverify validate --list``)
and for the wrappers of ``tests/planted/library_targets.py`` (nflows' ``HouseholderSequence``,
torch-householder's ``torch_householder_orgqr``), plus the runs that the README states: ``--strict``
for the Householder products of nflows, pyro and torch-householder, and for
``torch-orthogonal-cayley`` a run with ``--write-baseline`` followed by one with ``--baseline`` of
that file. It keeps, per target: each run's exit status, claim counts by verdict and wall time, and
each finding: the check, its severity (refuted, fragile, unsupported, inconclusive, error), the
telling counterexample (where and its inputs abbreviated), the ratio, and its cause (the root of
``validate.findings`` with the checks it explains, the measured blame ``data.blame`` when there is
one, the exception's first line for an unsupported check, the reason for an inconclusive one).

The record goes to reports/validate-libraries-<profile>.json (written atomically; ``--targets``
replaces those targets and keeps the others), and the README's tables between
``<!-- libraries -->`` markers are rewritten from the default profile's;
tests/system/test_library_findings.py checks that the README is that rendering and that its prose
about these libraries agrees with the records.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from orthoverify import _atomic
from orthoverify.isolation import adapters, adapters_libs  # noqa: F401  (adapters_libs registers the adapters)

ROOT = Path(__file__).resolve().parents[1]
README_PROFILE = "default"
"""The profile whose record the README's tables show (the quick record is kept beside it)."""


def record(profile: str) -> Path:
    """Where a profile's record lives."""
    return ROOT / "reports" / f"validate-libraries-{profile}.json"


WRAPPERS = "tests.planted.library_targets:"

EXTRA: dict[str, tuple[str, str, str]] = {
    # name: (spec, kind, the distribution that must be installed)
    "nflows-householder-sequence": (WRAPPERS + "nflows_householder", "householder-product", "nflows"),
    "torch-householder-orgqr": (WRAPPERS + "torch_householder_product", "householder-product", "torch-householder"),
}
STRICT = ("nflows-householder-sequence", "pyro-householder-flow", "torch-householder-orgqr")
"""Targets also run with ``--strict`` (their fragile findings then set the exit status)."""
BASELINE = ("torch-orthogonal-cayley",)
"""Targets also run with ``--baseline`` of the findings their own plain run wrote (``--write-baseline``)."""
DISTRIBUTION = {"torch": "torch", "geotorch": "geotorch", "pyro": "pyro-ppl", "orthoverify": "orthoverify"}
SEVERITIES = ("refuted", "fragile", "unsupported", "inconclusive", "error")


def targets() -> dict[str, dict[str, str]]:
    """Every target to run, by name: its spec, kind (for a wrapper) and library (distribution)."""
    out: dict[str, dict[str, str]] = {}
    for name, a in adapters.ADAPTERS.items():
        top = name.split("-", 1)[0]
        dist = DISTRIBUTION.get(top, top)
        out[name] = {"spec": name, "kind": a.kind, "library": dist}
    for name, (spec, kind, dist) in EXTRA.items():
        out[name] = {"spec": spec, "kind": kind, "library": dist}
    return out


def installed(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(argv: list[str], tmp: Path) -> tuple[int, float, dict[str, Any] | None, str]:
    """``orthoverify validate ARGV --json tmp/r.json`` from the root: exit status, wall seconds, result, stderr.
    (Wall time depends on the machine's load; the record keeps the load average before each run.)"""
    out = tmp / "r.json"
    out.unlink(missing_ok=True)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "orthoverify", "validate", *argv, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    result = json.loads(out.read_text()) if out.exists() else None
    return p.returncode, round(wall, 1), result, p.stdout[-3000:] + p.stderr[-3000:]


def _abbrev_inputs(inputs: dict[str, Any]) -> str:
    """Each input as ``name[rows x cols] max|.| = m`` (the values themselves are in the run's JSON)."""
    parts = []
    for name, v in inputs.items():
        if name == "dtype" or not isinstance(v, list):
            continue
        flat: list[float] = []
        shape: list[int] = []
        x: Any = v
        while isinstance(x, list):
            shape.append(len(x))
            x = x[0] if x else None
        stack: list[Any] = [v]
        while stack:
            y = stack.pop()
            if isinstance(y, list):
                stack.extend(y)
            else:
                try:
                    flat.append(abs(float(y)))
                except (TypeError, ValueError):
                    pass
        top = max(flat) if flat else float("nan")
        parts.append(f"{name}[{' x '.join(map(str, shape))}] max|.| = {top:.2g}")
    return ", ".join(parts)


WHICH = re.compile(
    r"The same parameters in a batch of two give an orthogonal output \([^)]*\): the single \(unbatched\) call "
    r"is the inaccurate one\.|Batched, the same parameters fail too \([^)]*\): the map itself, not one code path\."
)
"""The note's sentence saying which computation is off (the batched or the single call), where it says."""


def _where(value: str) -> str:
    """The counterexample's place from its recorded value: the special point, if any, and n and
    max|x_ij|; for a lifecycle check n and the step that broke (its optimiser by name)."""
    head, _, rest = value.partition(": ")
    head = head.strip().rstrip(".")
    point = re.search(r"special point '([^']+)'", head)
    n, top = re.search(r"\bn = (\d+)", head), re.search(r"max\|x_ij\| = ([^,)]+)", head)
    if n and top:
        return (f"'{point[1].split(',')[0]}', " if point else "") + f"n = {n[1]}, max|x_ij| = {top[1]}"
    step = re.match(r"(after step \d+ of [^:]+|\d+ steps of [^,]+)", rest)
    if n and step:
        return f"n = {n[1]}, {step[1]}"
    return head if len(head) <= 140 else head[:137] + "..."


def _reason(claim: dict[str, Any]) -> str:
    """An inconclusive or error claim's reason: the first sentence of its first unpassed row's note."""
    for e in claim["evidence"]:
        if not e.get("passed"):
            text = (e.get("error") or e.get("notes") or "").strip()
            first = re.split(r"\.\s+(?=[A-Z])", text, maxsplit=1)[0].rstrip(".")
            return first if len(first) <= 200 else first[:197] + "..."
    return (claim.get("notes") or "").split(". ", 1)[0]


def findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's findings: one per cause for refuted and fragile checks (``validate.findings``), then
    each unsupported, inconclusive and error claim."""
    kind = result["validate"]["kind"]
    claims = {c["id"].removeprefix(f"conformance.{kind}."): c for c in result["claims"]}
    out: list[dict[str, Any]] = []
    for f in result["validate"].get("findings", []):
        claim = claims[f["check"]]
        rows = [e for e in claim["evidence"] if e["backend"] == f["backend"]] or claim["evidence"]
        ev = rows[0]
        cx = claim.get("counterexample") or {}
        blame = ev.get("data", {}).get("blame")
        item: dict[str, Any] = {
            "check": f["check"],
            "severity": f["verdict"],
            "row": f["backend"],
            "ratio": ev.get("worst_ratio"),
            "counterexample": _where(str(cx.get("value", ""))) if cx else None,
            "value": str(cx.get("value", ""))[:400] if cx else None,
            "inputs": (_abbrev_inputs(cx.get("inputs", {})) + f" ({cx['inputs'].get('dtype', '?')})") if cx else None,
            "explains": f.get("explains", []),
            "cause": f.get("cause") or ev.get("data", {}).get("fragile"),
        }
        which = WHICH.search(ev.get("notes") or "")
        if which:
            item["which_is_off"] = which[0]
        if isinstance(blame, dict) and blame.get("operation"):
            item["blame"] = {k: blame.get(k) for k in ("operation", "workaround", "ratio_before", "ratio_after")}
        out.append(item)
    for check, claim in claims.items():
        v = claim["verdict"]
        if v == "unsupported":
            first = next(
                (e["data"]["unsupported"] for e in claim["evidence"] if e.get("data", {}).get("unsupported")), ""
            )
            out.append(
                {
                    "check": check,
                    "severity": v,
                    "cause": re.split(r"\.\s+(?=[A-Z])", str(first).splitlines()[0])[0] if first else None,
                }
            )
        elif v in ("inconclusive", "error"):
            out.append({"check": check, "severity": v, "cause": _reason(claim)})
    return out


def blames(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every measured attribution of the run (``data.blame`` naming an operation), roots and the checks
    they explain alike: check, row, operation, workaround, ratios before and after."""
    kind = result["validate"]["kind"]
    out = []
    for c in result["claims"]:
        for e in c["evidence"]:
            b = (e.get("data") or {}).get("blame")
            if isinstance(b, dict) and b.get("operation"):
                out.append(
                    {"check": c["id"].removeprefix(f"conformance.{kind}."), "row": e["backend"]}
                    | {k: b.get(k) for k in ("operation", "workaround", "ratio_before", "ratio_after")}
                )
    return out


def measure(name: str, t: dict[str, str], profile: str, tmp: Path) -> dict[str, Any]:
    base = [t["spec"], "--profile", profile, "--seed", "0"] + (["--kind", t["kind"]] if t["spec"] != name else [])
    runs: dict[str, Any] = {}
    extra: list[str] = []
    if name in BASELINE:
        extra = ["--write-baseline", str(tmp / "baseline.json")]
    load = round(os.getloadavg()[0], 2)
    code, wall, result, log = run(base + extra, tmp)
    if result is None:
        raise SystemExit(f"orthoverify validate {' '.join(base)} wrote no result (exit {code}):\n{log}")
    runs["plain"] = {"args": base[1:], "exit": code, "seconds": wall, "load_before": load, "claims": result["summary"]}
    print(f"{name}: exit {code}, {wall} s, {result['summary']}", flush=True)
    if name in STRICT:
        code, wall, r, log = run([*base, "--strict"], tmp)
        runs["strict"] = {
            "args": [*base[1:], "--strict"],
            "exit": code,
            "seconds": wall,
            "claims": (r or {}).get("summary"),
        }
        print(f"{name} --strict: exit {code}, {wall} s", flush=True)
    if name in BASELINE:
        acknowledged = json.loads((tmp / "baseline.json").read_text())
        code, wall, r, log = run([*base, "--baseline", str(tmp / "baseline.json")], tmp)
        known = dict(((r or {}).get("validate") or {}).get("baseline") or {}, file="FILE")
        runs["baseline"] = {
            "args": [*base[1:], "--baseline", "FILE"],
            "exit": code,
            "seconds": wall,
            "claims": (r or {}).get("summary"),
            "baseline_file": acknowledged,
            "baseline": known,
        }
        print(f"{name} --baseline: exit {code}, {wall} s", flush=True)
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {
        "spec": t["spec"],
        "commit": git.stdout.strip(),
        "kind": result["validate"]["kind"],
        "library": f"{t['library']} {installed(t['library'])}",
        "runs": runs,
        "findings": findings(result),
        "blame": blames(result),
    }


# ---------------------------------------------------------------------------------------- rendering
def _fmt_ratio(r: Any) -> str:
    if r is None:
        return ""
    try:
        x = float(r)
    except (TypeError, ValueError):
        return str(r)
    return f"{x:.3g}" if x == x else "NaN"


def _counts(summary: dict[str, int] | None) -> str:
    if not summary:
        return "?"
    total = sum(summary.values())
    parts = [f"{summary[v]} {v}" for v in ("verified", *SEVERITIES) if summary.get(v)]
    return f"{total}: " + ", ".join(parts)


def _cause(f: dict[str, Any]) -> str:
    b = f.get("blame")
    if b:
        text = (
            f"`{b['operation']}` (measured); workaround `{b['workaround']}`, ratio "
            f"{_fmt_ratio(b['ratio_before'])} -> {_fmt_ratio(b['ratio_after'])}"
        )
    else:
        text = f.get("cause") or ""
    if f.get("which_is_off"):
        text = (text + "; " if text else "") + f["which_is_off"].rstrip(".")
    if f.get("explains"):
        text = (text + "; " if text else "") + "may explain " + ", ".join(f"`{c}`" for c in f["explains"])
    return text.replace("|", "\\|")


def readme_tables(doc: dict[str, Any]) -> str:
    """The README's tables (between its ``<!-- libraries -->`` markers) from the record."""
    env = doc["environment"]
    commits = sorted({t.get("commit", doc["commit"]) for t in doc["targets"].values()})
    lines = [
        f"Measured by `python tools/library_findings.py` (profile {doc['profile']}, seed 0, torch {env['torch']}, "
        f"{'commits' if len(commits) > 1 else 'commit'} {', '.join(commits)}, {doc['measured'][:10]}; "
        f"recorded in `reports/validate-libraries-{doc['profile']}.json`).",
        "",
        "| target | library | claims | exit | other runs: exit |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, t in doc["targets"].items():
        r = t["runs"]
        other = []
        if "strict" in r:
            other.append(f"`--strict`: {r['strict']['exit']}")
        if "baseline" in r:
            other.append(f"`--baseline` (its findings acknowledged): {r['baseline']['exit']}")
        lines.append(
            f"| `{name}` | {t['library']} | {_counts(r['plain']['claims'])} | {r['plain']['exit']} | "
            f"{'; '.join(other)} |"
        )
    lines += [
        "",
        "Findings, one per cause (severity; the telling counterexample and its ratio; the cause: the checks "
        "the same root may explain, the operation blamed by measurement, the exception of an unsupported mode):",
        "",
        "| target | check | severity | counterexample | ratio | cause |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, t in doc["targets"].items():
        rows: dict[tuple[str, str, str, str], list[str]] = {}  # (severity, counterexample, ratio, cause): checks
        for f in t["findings"]:
            check = f"`{f['check']}`" + (f" [{f['row']}]" if f.get("row") else "")
            where = f.get("counterexample") or ""
            if where and f.get("inputs"):
                where += f" ({f['inputs'].rsplit('(', 1)[1]}"  # its dtype
            key = (f["severity"], where.replace("|", "\\|"), _fmt_ratio(f.get("ratio")), _cause(f))
            rows.setdefault(key, []).append(check)
        for (severity, where, ratio, cause), checks in rows.items():
            lines.append(f"| `{name}` | {', '.join(checks)} | {severity} | {where} | {ratio} | {cause} |")
    return "\n".join(lines)


def rewrite_readme(doc: dict[str, Any]) -> None:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if "<!-- libraries -->\n" not in text or "<!-- /libraries -->" not in text:
        raise SystemExit("README.md has no <!-- libraries --> ... <!-- /libraries --> markers")
    head, rest = text.split("<!-- libraries -->\n", 1)
    tail = rest.split("<!-- /libraries -->", 1)[1]
    _atomic.write_text(readme, f"{head}<!-- libraries -->\n{readme_tables(doc)}\n<!-- /libraries -->{tail}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="quick", choices=["quick", "default", "thorough"])
    p.add_argument("--targets", default="", help="comma-separated target names (default: all installed)")
    p.add_argument("--note", default="", help="how the machine was (other work on it, ...)")
    p.add_argument("--render-only", action="store_true", help="rewrite the README's tables from the record")
    args = p.parse_args()
    if args.render_only:
        rewrite_readme(json.loads(record(README_PROFILE).read_text()))
        return 0
    every = targets()
    names = [n for n in args.targets.split(",") if n] or list(every)
    unknown = sorted(set(names) - set(every))
    if unknown:
        raise SystemExit(f"unknown targets {unknown}; targets: {', '.join(every)}")
    file = record(args.profile)
    doc: dict[str, Any] = json.loads(file.read_text()) if file.exists() and args.targets else {"targets": {}}
    skipped = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            t = every[name]
            if installed(t["library"]) is None:
                skipped[name] = f"{t['library']} is not installed"
                print(f"{name}: skipped ({skipped[name]})", flush=True)
                continue
            doc["targets"][name] = measure(name, t, args.profile, Path(tmp))
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    doc.update(
        {
            "about": (
                "What `orthoverify validate` says about the installed libraries, written by "
                "tools/library_findings.py; the README's tables of it are rendered from this file."
            ),
            "profile": args.profile,
            "seed": 0,
            "commit": git.stdout.strip(),
            "measured": datetime.now(timezone.utc).isoformat(timespec="minutes"),
            "note": args.note,
            "environment": {
                "torch": torch.__version__,
                "python": platform.python_version(),
                "cpu_count": os.cpu_count(),
            },
            "skipped": skipped,
        }
    )
    order = list(every)
    doc["targets"] = {k: doc["targets"][k] for k in sorted(doc["targets"], key=order.index)}
    keys = ("about", "profile", "seed", "commit", "measured", "note", "environment", "skipped", "targets")
    out = {k: doc[k] for k in keys}
    _atomic.write_text(file, json.dumps(out, indent=1) + "\n")
    print(f"wrote {file}", flush=True)
    if args.profile == README_PROFILE:
        rewrite_readme(out)
        print("rewrote the README's tables between <!-- libraries --> markers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
