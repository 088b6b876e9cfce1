"""What the README says `validate` finds in the installed libraries is the record: its tables are
the rendering of reports/validate-libraries-default.json (written by tools/library_findings.py),
and every statement its prose makes about those libraries holds in the records (one home per
figure). Nothing here runs `validate`: the records are data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orthoverify.tolerance import THRESHOLD
from tests.scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]


TOOL = load_tool("library_findings")
Doc = dict[str, Any]


def load(profile: str) -> Doc:
    doc: Doc = json.loads(TOOL.record(profile).read_text())
    return doc


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def folded() -> str:
    return " ".join(readme().split())


def _severities(doc: Doc, target: str) -> dict[str, str]:
    return {f["check"]: f["severity"] for f in doc["targets"][target]["findings"]}


def _blamed(doc: Doc, target: str, check: str) -> dict[str, Any]:
    (b,) = [b for b in doc["targets"][target]["blame"] if b["check"] == check and b["row"] == "torch-float64-cpu"]
    return b


def _states(text: str, value: float) -> bool:
    """Whether a figure the README writes (``1.8e6``, ``8.9e-4``, ``3.45e6``) is ``value`` rounded to
    the digits it shows."""
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return float(f"{float(value):.{max(len(mantissa), 1) - 1}e}") == float(text)


CAYLEY = ("torch-orthogonal-cayley", "geotorch-so-cayley", "geotorch-orthogonal-cayley")
FRAGILE_ONLY = ("nflows-householder-sequence", "pyro-householder-flow", "torch-householder-orgqr")


def _fragile_only(d: Doc) -> bool:
    for t in FRAGILE_ONLY:
        runs, sev = d["targets"][t]["runs"], set(_severities(d, t).values())
        if not (runs["plain"]["exit"] == 0 and runs["strict"]["exit"] == 1 and "fragile" in sev):
            return False
        if not sev <= {"fragile", "unsupported"}:
            return False
    return True


def _cayley_blamed(d: Doc) -> bool:
    for t in CAYLEY:
        refuted = [f for f in d["targets"][t]["findings"] if f["severity"] == "refuted"]
        if [f["check"] for f in refuted] != ["second_ff"]:
            return False
        b = refuted[0].get("blame") or {}
        if not (b.get("operation") == "torch.linalg.solve" and "lu_solve" in b.get("workaround", "")):
            return False
        if not float(b["ratio_after"]) <= THRESHOLD < float(b["ratio_before"]):
            return False
    return True


def _baseline_passes(d: Doc) -> bool:
    run = d["targets"]["torch-orthogonal-cayley"]["runs"]["baseline"]
    acknowledged = run["baseline"]["acknowledged"]
    return bool(
        run["exit"] == 0
        and run["baseline"]["new"] == []
        and acknowledged  # the one finding: second_ff, and the float32 check its cause explains
        == [
            "conformance.orthogonal-map.second_ff [torch-float64-cpu]",
            "conformance.orthogonal-map.second_ff_float32 [torch-float32-cpu]",
        ]
    )


def _own_pass(d: Doc) -> bool:
    own = [t for t in d["targets"] if t.startswith("orthoverify-")]
    return len(own) == 6 and all(d["targets"][t]["runs"]["plain"]["exit"] == 0 for t in own)


def _torch_geotorch_fail(d: Doc) -> bool:
    others = [t for t in d["targets"] if t.startswith(("torch-orthogonal", "torch-householder-product", "geotorch"))]
    return len(others) == 8 and all(d["targets"][t]["runs"]["plain"]["exit"] == 1 for t in others)


def _quick_cayley_figures(m: re.Match[str]) -> bool:
    q = load("quick")
    t = q["targets"]["torch-orthogonal-cayley"]
    claims = t["runs"]["plain"]["claims"]
    b = _blamed(q, "torch-orthogonal-cayley", "second_ff")
    return bool(
        int(m["total"]) == sum(claims.values())
        and int(m["verified"]) == claims["verified"]
        and claims.get("refuted") == 2  # second_ff and second_ff_float32: one finding, rooted at second_ff
        and _severities(q, "torch-orthogonal-cayley") == {"second_ff": "refuted"}
        and b["operation"] == "torch.linalg.solve"
        and _states(m["before"], b["ratio_before"])
        and _states(m["after"], b["ratio_after"])
    )


STATEMENTS: list[tuple[str, Callable[[Doc], bool]]] = [
    (
        "the Householder products of nflows, pyro and torch-householder exit 0 with fragile findings "
        "only (and unsupported modes), and exit 1 with `--strict`",
        _fragile_only,
    ),
    (
        "torch-householder's reverse-over-reverse (`second_rr`) is unsupported",
        lambda d: _severities(d, "torch-householder-orgqr").get("second_rr") == "unsupported",
    ),
    (
        "torch's and geotorch's Cayley maps (`torch-orthogonal-cayley`, `geotorch-so-cayley`, "
        "`geotorch-orthogonal-cayley`) are refuted on `second_ff` and on nothing else, each finding "
        "naming `torch.linalg.solve` as the cause and `lu_factor` + `lu_solve` as the workaround "
        "measured to pass",
        _cayley_blamed,
    ),
    (
        "With a baseline that acknowledges that finding (`--write-baseline FILE`, then `--baseline FILE`), "
        "`torch-orthogonal-cayley` exits 0",
        _baseline_passes,
    ),
    (
        "(`orthogonal` and `weight_decay`; its `coverage` is inconclusive",
        lambda d: (
            _severities(d, "torch-orthogonal-householder")
            == {"orthogonal": "refuted", "weight_decay": "refuted", "coverage": "inconclusive"}
        ),
    ),
    ("orthoverify's own adapters exit 0", _own_pass),
    ("every torch and geotorch adapter exits 1", _torch_geotorch_fail),
]
"""Each sentence the README states about these libraries (whitespace folded), with what it says
of the default profile's record."""

BLAME_FIGURES = (
    r"\(`torch-orthogonal-householder`: `torch\.linalg\.householder_product`, (?P<before>[\d.e-]+) before, "
    r"(?P<after>[\d.e-]+) with an explicit product of reflections\)"
)
"""The measured attribution the README's "Derivative modes" states (default profile's record)."""

QUICK_FIGURES = (
    r"`orthoverify validate torch-orthogonal-cayley --profile quick` \((?P<total>\d+) claims: "
    r"(?P<verified>\d+) verified, `second_ff` refuted and blamed on `torch\.linalg\.solve`, ratio "
    r"(?P<before>[\d.e-]+) before and (?P<after>[\d.e-]+) with `lu_factor` \+ `lu_solve`[;)]"
)


def test_the_readme_tables_are_the_recorded_file() -> None:
    text = readme()
    table = text.split("<!-- libraries -->\n", 1)[1].split("\n<!-- /libraries -->", 1)[0]
    assert table == TOOL.readme_tables(load(TOOL.README_PROFILE)), (
        "run python tools/library_findings.py --render-only (or measure again)"
    )


def test_every_statement_about_the_libraries_holds_in_the_record() -> None:
    text, doc = folded(), load(TOOL.README_PROFILE)
    for sentence, holds in STATEMENTS:
        assert text.count(sentence) == 1, sentence
        assert holds(doc), sentence
    (m,) = list(re.finditer(QUICK_FIGURES, text))
    assert _quick_cayley_figures(m), m.group(0)
    (m,) = list(re.finditer(BLAME_FIGURES, text))
    b = _blamed(doc, "torch-orthogonal-householder", "second_ff")
    assert b["operation"] == "torch.linalg.householder_product", b
    assert _states(m["before"], b["ratio_before"]) and _states(m["after"], b["ratio_after"]), m.group(0)


def test_each_record_covers_every_target_and_is_consistent() -> None:
    """Every built-in adapter and wrapper is recorded or named as skipped (its library missing), and
    each exit status is what the findings give: 1 exactly when one is refuted (fragile ones too with
    --strict), 0 with every finding acknowledged by a baseline."""
    every = set(TOOL.targets())
    for profile in ("quick", "default"):
        doc = load(profile)
        assert doc["profile"] == profile and doc["seed"] == 0
        assert set(doc["targets"]) | set(doc["skipped"]) == every and not set(doc["targets"]) & set(doc["skipped"])
        for name, t in doc["targets"].items():
            sev = [f["severity"] for f in t["findings"]]
            assert set(sev) <= set(TOOL.SEVERITIES), name
            runs = t["runs"]
            assert runs["plain"]["exit"] == (1 if "refuted" in sev else 4 if "error" in sev else 0), name
            if "strict" in runs:
                assert runs["strict"]["exit"] == (1 if {"refuted", "fragile"} & set(sev) else 0), name
            counts = runs["plain"]["claims"]
            for s in ("unsupported", "inconclusive", "error"):
                assert sev.count(s) == counts.get(s, 0), (name, s)
            roots = [f for f in t["findings"] if f["severity"] in ("refuted", "fragile")]
            explained = sum(len(f["explains"]) for f in roots)
            assert len(roots) <= counts.get("refuted", 0) + counts.get("fragile", 0) <= len(roots) + explained, name


def test_a_stated_figure_is_the_value_rounded_to_its_digits() -> None:
    assert _states("1.8e6", 1803790.0) and _states("8.9e-4", 0.00089367) and _states("3.45e6", 3452890.0)
    assert _states("5.2e-4", 0.000516408) and _states("0.35", 0.352)
    assert not _states("1.9e6", 1803790.0) and not _states("3.4e6", 3452890.0) and not _states("8.8e-4", 0.00089367)
