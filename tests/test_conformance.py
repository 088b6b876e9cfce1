"""`orthoverify validate`: correct implementations pass, each deliberately broken one is caught by
the check meant for it, targets that raise, hang, return the wrong shape or NaN are recorded
(never crash orthoverify), the built-in adapters run, and every finding replays."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orthoverify.cli import main
from orthoverify.conformance import ADAPTERS, validate
from orthoverify.engine import write_json
from orthoverify.engine.replay import replay_from_file

T = "tests.conformance_targets:"


def verdicts(spec: str, kind: str | None = None, **kw: object) -> dict[str, str]:
    r = validate(spec, kind=kind, profile="quick", **kw)  # type: ignore[arg-type]
    return {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in r.claims}


@pytest.mark.parametrize(
    ("spec", "kind"),
    [(T + "householder", "householder-product"), (T + "cayley", "scaled-cayley"), (T + "embed", "complex-to-real")],
)
def test_correct_implementations_pass_every_check(spec: str, kind: str) -> None:
    v = verdicts(spec, kind)
    assert set(v.values()) == {"verified"}, v


@pytest.mark.parametrize(
    ("spec", "kind", "caught_by", "still_fine"),
    [
        (T + "householder_wrong_sign", "householder-product", "forward", "orthogonal"),
        (T + "householder_transposed", "householder-product", "forward", "orthogonal"),
        (T + "cayley_missing_gradient_term", "scaled-cayley", "gradient", "forward"),
        (T + "cayley_float32_drift", "scaled-cayley", "float32", "orthogonal"),
        (T + "circulant_unnormalised_fft", "orthogonal-map", "orthogonal", "determinism"),
        (T + "embed_wrong_block", "complex-to-real", "forward", "output"),
    ],
)
def test_each_broken_implementation_is_caught_by_its_check(
    spec: str, kind: str, caught_by: str, still_fine: str
) -> None:
    v = verdicts(spec, kind)
    assert v[caught_by] == "refuted", v
    assert v[still_fine] == "verified", v  # the defect is localised, not a blanket failure


def test_the_unnormalised_fft_is_fine_when_normalised() -> None:
    v = verdicts(T + "circulant", "orthogonal-map")
    assert v["orthogonal"] == v["gradient"] == v["batch"] == "verified"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (T + "raises", "raised: RuntimeError: this target always fails"),
        (T + "wrong_shape", "shape: returned shape (3, 3), expected (2, 2)"),
        (T + "returns_nan", "non-finite"),
        (T + "hangs", "timeout"),
    ],
)
def test_misbehaving_targets_are_recorded_not_raised(spec: str, message: str) -> None:
    r = validate(spec, kind="orthogonal-map", profile="quick", dtypes=["float64"], timeout=0.5)
    output = next(c for c in r.claims if c.claim.id.endswith(".output"))
    assert output.verdict == "refuted"
    assert output.counterexample is not None and message in output.counterexample.value
    assert all(c.verdict != "error" for c in r.claims), [(c.claim.id, c.evidence[0].error) for c in r.claims]


def test_built_in_adapters(tmp_path: Path) -> None:
    v = verdicts("torch-householder-product")
    assert set(v.values()) == {"verified"}, v
    r = validate("torch-orthogonal-householder", profile="quick")
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    # torch's householder map multiplies by int(diag(X)): a diagonal that leaves {+1, -1} in training
    # (weight decay, say) gives a matrix that is not orthogonal; found and replayed
    assert by["orthogonal"].verdict == "refuted"
    path = write_json(r, tmp_path / "v.json")
    rep = replay_from_file(path, "conformance.orthogonal-map.orthogonal")
    assert rep.reproduced
    for name in ("torch-orthogonal-cayley", "torch-orthogonal-matrix_exp"):
        res = validate(name, profile="quick", dtypes=["float64"])
        assert all(c.verdict != "error" for c in res.claims)
        cov = next(c for c in res.claims if c.claim.id.endswith("coverage"))
        assert "Never reached" in cov.evidence[0].notes  # the other component of O(n)
    assert {"geotorch-so-cayley", "geotorch-so-expm"} <= set(ADAPTERS)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_exit_statuses_json_report_and_replay(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    code, out, _ = run("validate", T + "embed", "--kind", "complex-to-real", "--profile", "quick", "--json", str(good))
    assert code == 0 and "verified" in out
    data = json.loads(good.read_text())
    assert data["validate"]["target"] == T + "embed" and data["validate"]["kind"] == "complex-to-real"
    assert all(c["id"].startswith("conformance.complex-to-real.") for c in data["claims"])
    bad = tmp_path / "bad.json"
    code, out, _ = run(
        "validate",
        T + "embed_wrong_block",
        "--kind",
        "complex-to-real",
        "--profile",
        "quick",
        "--json",
        str(bad),
        "--report",
        str(tmp_path),
    )
    assert code == 1 and "refuted" in out
    assert (tmp_path / "validate-tests.conformance_targets-embed_wrong_block.html").exists()
    for c in json.loads(bad.read_text())["claims"]:
        if c["counterexample"]:
            code, out, _ = run("replay", str(bad), c["id"])
            assert code == 0 and "reproduced: yes" in out, out
    assert run("validate", "nosuch.module:f", "--kind", "orthogonal-map")[0] == 3
    assert run("validate", "not-an-adapter")[0] == 3
    assert run("validate", T + "embed", "--kind", "no-such-kind")[0] == 2
    assert run("validate", T + "embed", "--kind", "complex-to-real", "--dtype", "float16")[0] == 2


def test_pytest_plugin_runs_the_checks_as_tests(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)]
    good = subprocess.run(
        [*args, "--orthoverify-target", T + "embed", "--orthoverify-kind", "complex-to-real"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert good.returncode == 0 and "8 passed" in good.stdout, good.stdout + good.stderr
    bad = subprocess.run(
        [*args, "--orthoverify-target", T + "embed_wrong_block", "--orthoverify-kind", "complex-to-real"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "complex-to-real.forward: refuted" in bad.stdout and "counterexample:" in bad.stdout
    plain = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env, check=False)
    assert plain.returncode == 0 and "1 passed" in plain.stdout  # no target: the plugin adds nothing


def test_geotorch_adapters_run_when_geotorch_is_installed() -> None:
    pytest.importorskip("geotorch")
    for name in ("geotorch-so-cayley", "geotorch-so-expm"):
        r = validate(name, profile="quick")
        by = {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in r.claims}
        assert "error" not in by.values(), by
        assert by["output"] == by["gradient"] == by["determinism"] == "verified", by


def test_own_parametrisations_pass() -> None:
    for name in ("orthoverify-householder", "orthoverify-scaled-cayley"):
        v = verdicts(name)
        assert set(v.values()) == {"verified"}, (name, v)
