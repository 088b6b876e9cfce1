"""Severity of `validate` findings (issue 27): a mode the target declines with an exception is
"unsupported" (exit 0), not refuted; the planted targets' verdicts are pinned in
tests/planted/judge_planted.py."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from orthoverify.cli import main
from orthoverify.conformance import causes
from orthoverify.conformance.context import Ctx, extreme, magnitude, session
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.search import check_determinism, shrink
from orthoverify.conformance.target import load_target
from orthoverify.engine.ratios import Measure
from orthoverify.engine.result import load_json
from orthoverify.tolerance import THRESHOLD

T = "tests.planted.conformance_targets:"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_declined_mode_is_unsupported_with_its_exception_and_exits_0(tmp_path: Path) -> None:
    """torch-householder's case: a backward that writes with out= raises under reverse-over-reverse.
    The check is unsupported (the exception's first line recorded), the exit status 0, the JSON
    readable by report and replay's loader, and the report renders it."""
    path = tmp_path / "r.json"
    code, out, _ = run(
        "validate", T + "householder_out_backward", "--kind", "householder-product", "--profile", "quick",
        "--dtype", "float64", "--json", str(path), "--report", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out
    data = load_json(path)
    by = {c["id"].rsplit(".", 1)[1]: c for c in data["claims"]}
    rr = by["second_rr"]
    assert rr["verdict"] == "unsupported" and rr["counterexample"] is None
    assert "out=... arguments don't support automatic differentiation" in rr["evidence"][0]["data"]["unsupported"]
    assert by["gradient"]["verdict"] == "verified"  # first order is right: only the declined modes are unsupported
    assert data["summary"]["unsupported"] == 4 and data["summary"]["refuted"] == 0
    assert "unsupported" in out and "Unsupported: the target raised" in out
    html = next(tmp_path.glob("*.html")).read_text()
    assert "unsupported" in html


def test_a_baseline_acknowledges_known_findings_and_still_fails_on_new_ones(tmp_path: Path) -> None:
    """A Cayley map built on torch.linalg.solve is refuted on second_ff (torch's nested forward mode
    through solve): with a baseline acknowledging that finding it exits 0, and a newly introduced
    defect (batch members mixed) still exits 1, the summary and the JSON listing both."""
    common = ("--kind", "orthogonal-map", "--profile", "quick", "--dtype", "float64")
    base = tmp_path / "baseline.json"
    code, out, _ = run("validate", T + "cayley_textbook", *common, "--json", str(tmp_path / "a.json"),
                       "--write-baseline", str(base))  # fmt: skip
    assert code == 1 and "baseline written" in out
    text = base.read_text()
    assert "conformance.orthogonal-map.second_ff" in text and "import" not in text
    code, out, _ = run("validate", T + "cayley_textbook", *common, "--json", str(tmp_path / "b.json"),
                       "--baseline", str(base))  # fmt: skip
    assert code == 0, out
    assert "1 finding acknowledged, 0 new" in out and "acknowledged: conformance.orthogonal-map.second_ff" in out
    data = load_json(tmp_path / "b.json")
    assert data["validate"]["baseline"]["acknowledged"] and not data["validate"]["baseline"]["new"]
    code, out, _ = run("validate", T + "cayley_batch_mixed", *common, "--json", str(tmp_path / "c.json"),
                       "--baseline", str(base))  # fmt: skip
    assert code == 1, out
    assert "NEW: conformance.orthogonal-map.batch" in out
    assert "acknowledged: conformance.orthogonal-map.second_ff" in out


def test_a_bad_baseline_is_a_named_input_error_before_any_run(tmp_path: Path) -> None:
    common = ("validate", T + "cayley_textbook", "--kind", "orthogonal-map", "--json", str(tmp_path / "r.json"))
    big = tmp_path / "big.json"
    big.write_text(" " * (2 << 20))
    cases = {
        tmp_path / "nosuch.json": "no such file",
        tmp_path: "not a regular file",
        big: "bytes, more than",
    }
    for name, text in {"notjson.json": "{", "wrong.json": '{"findings": []}', "nan.json": '{"format": NaN}'}.items():
        (tmp_path / name).write_text(text)
    cases[tmp_path / "notjson.json"] = "not JSON"
    cases[tmp_path / "wrong.json"] = "not an orthoverify baseline"
    cases[tmp_path / "nan.json"] = "not JSON"
    (tmp_path / "bad.json").write_text('{"format": "orthoverify-baseline", "version": 1, "findings": [{"claim": 1}]}')
    cases[tmp_path / "bad.json"] = "findings[0] must be an object"
    for path, message in cases.items():
        code, _, err = run(*common, "--baseline", str(path))
        assert code == 2 and message in err and "--baseline" in err, (path, err)
    assert not (tmp_path / "r.json").exists()  # nothing ran, nothing was written


def test_determinism_is_judged_against_the_allowance_and_bitwise_only_when_asked() -> None:
    """Two accurate evaluation orders taking turns: within the allowance by default (verified, the
    size of the difference noted); refuted when bitwise equality is asked for."""
    t = load_target(T + "nondeterministic", "orthogonal-map")
    ctx = session(t, ("float64",), profile="quick")
    ev = check_determinism(ctx)[0]
    assert ev.passed and ev.worst_ratio is not None and 0 < ev.worst_ratio <= THRESHOLD
    assert "Deterministic up to rounding" in ev.notes and 0 < ev.data["max_difference"] < 1e-12
    ctx = session(t, ("float64",), profile="quick", bitwise_determinism=True)
    ev = check_determinism(ctx)[0]
    assert not ev.passed and ev.counterexample is not None and "bitwise equality asked for" in ev.notes


def test_bitwise_determinism_is_an_option_of_the_command(tmp_path: Path) -> None:
    common = ("validate", T + "nondeterministic", "--kind", "orthogonal-map", "--profile", "quick")
    code, out, _ = run(*common, "--dtype", "float64", "--json", str(tmp_path / "a.json"), "--bitwise-determinism")
    assert code == 1 and "bitwise equality asked for" in out
    by = {c["id"].rsplit(".", 1)[1]: c for c in load_json(tmp_path / "a.json")["claims"]}
    assert by["determinism"]["verdict"] == "refuted" and "bitwise" in by["determinism"]["statement"]


def test_a_failure_only_at_subnormal_parameters_is_fragile_and_strict_makes_it_count(tmp_path: Path) -> None:
    """A Householder product forming u'u unscaled (nflows', pyro's) gives NaN only at subnormal columns:
    fragile (listed with its counterexample, exit 0); --strict exits 1; a map wrong at ordinary
    inputs stays refuted (tests/planted/judge_planted.py pins both)."""
    common = ("validate", T + "householder_unscaled", "--kind", "householder-product", "--profile", "quick")
    code, out, _ = run(*common, "--dtype", "float64", "--json", str(tmp_path / "a.json"))
    assert code == 0, out
    by = {c["id"].rsplit(".", 1)[1]: c for c in load_json(tmp_path / "a.json")["claims"]}
    assert by["orthogonal"]["verdict"] == by["forward"]["verdict"] == "fragile"
    cx = by["orthogonal"]["counterexample"]
    assert cx is not None and "subnormal" in cx["value"] and "Fragile" in out
    assert by["gradient"]["verdict"] == "verified"
    code, out, _ = run(*common, "--dtype", "float64", "--json", str(tmp_path / "b.json"), "--strict")
    assert code == 1, out


def test_the_shrinker_moves_towards_magnitude_1_never_deeper_into_the_extreme_range() -> None:
    """A quantity that fails below magnitude 1e-150 (u'u underflowing), found at 1e-310: the shrunk case
    is at a magnitude between the two, within a factor 10^0.5 of the boundary, never below 1e-310."""
    t = load_target(T + "householder", "householder-product")
    ctx = session(t, ("float64",), profile="quick")
    kind = t.kind

    def q(_ctx: Ctx, p: Params, _dtype: str) -> Measure:
        m = magnitude(kind, p)
        return Measure(100.0 if 0 < m < 1e-150 else 1.0, f"m = {m:.3g}")

    params = {"U": np.tril(np.random.default_rng(1).standard_normal((4, 4))) * 1e-310}
    found, c, steps = shrink(ctx, q, params, "float64", q(ctx, params, "float64"))
    m = magnitude(kind, found)
    assert 10**-150.5 < m < 1e-150 and c.ratio == 100.0 and "moved towards magnitude 1" in steps, (m, steps)
    assert extreme(kind, found)  # still outside the ordinary domain: the finding stays fragile
    ordinary = {"U": params["U"] * 1e155 * 1e155}
    assert not extreme(kind, ordinary) and not extreme(kind, {"U": np.zeros((2, 2))})


def _fake(verdicts: dict[str, str]) -> Any:
    """A run result with one claim per check (only what causes.findings reads)."""
    claims = []
    for check, verdict in verdicts.items():
        evidence = [
            SimpleNamespace(backend=f"torch-{d}-cpu", counterexample=object() if verdict != "verified" else None)
            for d in ("float32", "float64")
        ]
        claims.append(
            SimpleNamespace(claim=SimpleNamespace(id=f"conformance.k.{check}"), verdict=verdict, evidence=evidence)
        )
    return SimpleNamespace(claims=claims)


def test_one_finding_per_cause_names_the_first_failing_check_in_dependency_order() -> None:
    r = _fake(
        {"output": "verified", "orthogonal": "refuted", "forward": "refuted", "gradient": "refuted", "jvp": "refuted",
         "batch": "refuted", "coverage": "refuted", "second_ff": "refuted", "second_rr": "refuted",
         "determinism": "verified"}
    )  # fmt: skip
    got = causes.findings(r)
    assert [(f.check, f.explains) for f in got] == [
        ("forward", ["orthogonal", "gradient", "jvp", "second_ff", "second_rr", "coverage"]),
        ("batch", []),
    ]
    assert got[0].backend == "torch-float64-cpu"  # float64 before float32
    only_second = causes.findings(_fake({"gradient": "verified", "second_ff": "refuted", "second_fr": "fragile"}))
    assert [(f.check, f.verdict, f.explains) for f in only_second] == [
        ("second_ff", "refuted", []),
        ("second_fr", "fragile", []),
    ]


def test_a_wrong_determinant_explains_the_declared_groups_coverage() -> None:
    """A map declaring SO(n) that returns det -1 fails det and, through it, coverage of SO(n)
    (tests/planted: cayley_so_reflected): one finding rooted at det; a coverage failure alone
    stays a finding of its own."""
    got = causes.findings(_fake({"orthogonal": "verified", "det": "refuted", "coverage": "refuted"}))
    assert [(f.check, f.explains) for f in got] == [("det", ["coverage"])]
    alone = causes.findings(_fake({"det": "verified", "coverage": "refuted", "gradient": "verified"}))
    assert [(f.check, f.explains) for f in alone] == [("coverage", [])]


def test_a_forward_defect_failing_seven_checks_is_one_finding_in_the_summary(tmp_path: Path) -> None:
    """The uRNN with an unnormalised FFT: orthogonal, forward, gradient, jvp and the three
    second-order checks are refuted (tests/planted/judge_planted.py); the summary shows one finding
    rooted at forward, the JSON keeps every claim and the grouping."""
    code, out, _ = run(
        "validate", T + "urnn_unnormalised_fft", "--kind", "unitary-composition", "--profile", "quick",
        "--dtype", "float64", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 1
    data = load_json(tmp_path / "r.json")
    refuted = [c["id"] for c in data["claims"] if c["verdict"] == "refuted"]
    assert len(refuted) == 7, refuted
    found = data["validate"]["findings"]
    assert len(found) == 1 and found[0]["check"] == "forward" and len(found[0]["explains"]) == 6
    section = out.split("Findings, one per cause")[1]
    assert section.count(": refuted") == 1 and "forward [torch-float64-cpu]: refuted; the same cause" in section
