"""The README opens with the two commands, and .ci/run runs command (2) exactly."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import main

ROOT = Path(__file__).resolve().parents[2]


def commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_readme_opens_with_two_commands() -> None:
    main, tests = commands()
    assert "orthoverify check" in main and "-c constraints.txt" in main
    assert "pytest" in tests and "-c constraints.txt" in tests and ".[test,dev]" in tests


def test_ci_runs_command_two_exactly() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands()[1] in [line.strip() for line in ci]


def test_constraints_pin_torch_but_library_range_stays_open() -> None:
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text()
    assert '"torch>=2.1"' in (ROOT / "pyproject.toml").read_text()


def test_main_command_writes_the_reports_outside_the_repository() -> None:
    assert commands()[0].endswith("orthoverify check --report out")
    assert "out/" in (ROOT / ".gitignore").read_text().splitlines()


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.slow
def test_command_one_leaves_a_fresh_clone_clean(tmp_path: Path) -> None:
    """README command (1)'s check, as written (on one cheap claim, so that the test is quick), in a
    fresh clone: it writes its JSON and reports under out/ and `git status` stays clean."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True)
    check = commands()[0].split("&&")[-1].split()
    assert check[:2] == [".venv/bin/orthoverify", "check"]
    argv = [sys.executable, "-m", "orthoverify", *check[1:], "householder.reflection", "--profile", "quick"]
    run = subprocess.run(argv, cwd=clone, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (clone / "out" / "check-quick.json").is_file() and (clone / "out" / "check-quick.html").is_file()
    # the README's replay of a refuted claim of the committed reference, as written
    replay = re.search(r"`orthoverify replay (reports/check-default\.json) <id>`", (clone / "README.md").read_text())
    assert replay is not None
    run = subprocess.run(
        [sys.executable, "-m", "orthoverify", "replay", replay.group(1), "householder.algorithm2_float"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and "reproduced: yes" in run.stdout, run.stdout + run.stderr
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""


def test_ci_installs_chromium_and_requires_the_browser_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" in ci and "chromium" in ci
    lines = [line.strip() for line in ci.splitlines()]
    assert lines.index(
        "export ORTHOVERIFY_REQUIRE_BROWSER=1  # the browser tests fail, not skip, if Chromium is missing"
    ) < (lines.index(commands()[1]))


def python_blocks() -> list[str]:
    """Every ```python block of the README, as written."""
    text = (ROOT / "README.md").read_text()
    return [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]


@pytest.mark.slow
def test_python_examples_run_as_script_files(tmp_path: Path) -> None:
    """Each Python block saved as a file and run with `python file.py` (not `-c`): a process pool
    started without a `__main__` guard would kill every check here."""
    blocks = python_blocks()
    assert blocks and any("run_checks" in b for b in blocks)
    for k, block in enumerate(blocks):
        script = tmp_path / f"api_example_{k}.py"
        script.write_text(block)
        run = subprocess.run(
            [sys.executable, "-W", "error::RuntimeWarning", script.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert "worker process died" not in run.stdout + run.stderr
        if "run_checks" in block:
            assert "householder.theorem2 verified" in run.stdout
            assert json.loads((tmp_path / "out" / "theorem2.json").read_text())["summary"]["error"] == 0


def test_a_run_in_which_every_check_erred_is_loud(monkeypatch: pytest.MonkeyPatch) -> None:
    from orthoverify.engine import run_checks

    with pytest.warns(RuntimeWarning, match="every check of this run erred .*planted crash"):
        result = run_checks(["planted.crashes"], profile="quick", modules=("tests.planted.planted_claims",))
    assert result.errored and result.workers == 1 and result.executor == "serial"
    monkeypatch.setenv("ORTHOVERIFY_EXTRA_CLAIMS", "tests.planted.planted_claims")
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", "planted.crashes", "--profile", "quick", "--workers", "1", "--json", os.devnull]
    assert main(argv, out, err) == 1
    assert "every check of this run erred (1): nothing was decided" in err.getvalue()


@pytest.mark.slow
def test_an_unguarded_pool_in_a_script_says_what_to_do(tmp_path: Path) -> None:
    script = tmp_path / "pool.py"
    script.write_text(
        "from orthoverify.claims import MODULES\n"
        "from orthoverify.engine import run_checks\n"
        "r = run_checks(['householder.reflection'], profile='quick', workers=2, modules=MODULES)\n"
        "print(r.claims[0].verdict, r.claims[0].evidence[0].error)\n"
    )
    run = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0
    assert "RuntimeWarning: every check of this run erred" in run.stderr
    assert 'if __name__ == "__main__":' in run.stdout and run.stdout.startswith("error ")


def test_validate_is_exported_lazily() -> None:
    code = "import sys, orthoverify; assert 'torch' not in sys.modules; print(orthoverify.validate.__module__)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "orthoverify.conformance", run.stderr


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Ev:
    def __init__(self, claim: str, error: str | None = None) -> None:
        self.claim, self.check, self.backend, self.seconds = claim, "c", "numpy-float64", 0.5
        self.error, self.passed, self.counterexample = error, error is None, None


def test_progress_says_elapsed_and_what_is_left() -> None:
    """Plain lines off a terminal, a bar redrawn in place on one; both with elapsed time and an
    estimate of the rest (from a fake clock: the test times nothing)."""
    from orthoverify.cli import _progress

    clock = _Clock()
    out = io.StringIO()
    report = _progress(out, bar=False, clock=clock)
    clock.t = 10.0
    report(1, 4, _Ev("a.b"))
    clock.t = 80.0
    report(4, 4, _Ev("a.c"))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[  1/4] a.b :: c [numpy-float64] pass (0.5s)  (10s elapsed, about 30s left)"
    assert lines[1].endswith("(1m20s elapsed)") and "\r" not in out.getvalue()
    clock = _Clock()
    tty = io.StringIO()
    report = _progress(tty, bar=True, clock=clock)
    clock.t = 5.0
    report(1, 2, _Ev("a.b", error="boom"))
    report(2, 2, _Ev("a.c"))
    text = tty.getvalue()
    assert "\r\x1b[Ka.b :: c [numpy-float64] ERROR (0.5s)\n" in text
    assert "[############............] 1/2  5s elapsed, about 5s left" in text
    assert text.endswith("[########################] 2/2  5s elapsed\n")


def test_progress_estimate_starts_from_the_recorded_durations() -> None:
    """With recorded durations (4 tasks of 10, 10, 20 and 40 s on 2 workers: 40 s of wall time) the
    first estimate is the recorded work left shared by the workers, not the pace of the first,
    short, task; once a quarter of the work is done, the run's own pace scales it (fake clock)."""
    from orthoverify.cli import _progress

    clock = _Clock()
    out = io.StringIO()
    expected = [("a.b", "c", 10.0), ("a.d", "c", 10.0), ("a.e", "c", 20.0), ("a.f", "c", 40.0)]
    report = _progress(out, bar=False, clock=clock, expected=expected, workers=2)
    clock.t = 1.0
    report(1, 4, _Ev("a.b"))  # 10 of 80 recorded seconds done: (80 - 10) / 2 = 35 s left
    clock.t = 20.0
    report(2, 4, _Ev("a.e"))  # 30 of 80 done, in 20 s where the record says 15: pace 4/3, 50 / 2 * 4/3
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("(1s elapsed, about 35s left)"), lines
    assert lines[1].endswith("(20s elapsed, about 33s left)"), lines


def test_recorded_durations_cover_the_tasks_of_both_profiles() -> None:
    """The record the estimate starts from (orthoverify/timings.json) has a duration for (nearly)
    every claim::check of the quick and default profiles (a check added since the last measurement
    gets the median until tools/measure_times.py runs again), and the command finds it for its run."""
    import argparse

    from orthoverify import timings
    from orthoverify.cli import _recorded_durations
    from orthoverify.engine.registry import get_registry

    keys = {f"{c.id}::{k.name}" for c in get_registry(CLAIM_MODULES) for k in c.checks}
    for profile in ("quick", "default"):
        recorded = set(timings.task_seconds(profile))
        assert len(keys & recorded) >= 0.9 * len(keys), (profile, sorted(keys - recorded))
        args = argparse.Namespace(claims=["householder.*"], profile=profile, seed=0, device="cpu", backend=None)
        rows = _recorded_durations(args)
        assert rows and all(c.startswith("householder.") and s >= 0 for c, _k, s in rows)


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist", *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


SPY = """
import json

import orthoverify.conformance as conformance

_validate = conformance.validate


def spy(*args, **kw):
    result = _validate(*args, **kw)
    with open("ran.json", "w") as fh:
        json.dump([c.claim.id for c in result.claims], fh)
    return result


conformance.validate = spy
"""
"""A conftest.py that records the claims of the plugin's validate run (the plugin looks validate up when it runs)."""


@pytest.mark.slow
def test_pytest_plugin_collects_names_and_reruns_its_checks(tmp_path: Path) -> None:
    """The plugin on a small correct and a small broken map: one test per check beside the user's own,
    counted by `collected`; a refutation fails its test with the counterexample; a printed node id runs
    that one check (and no other) when passed back; torch's deprecations stay out; without a target it adds nothing."""
    from orthoverify.conformance.planning import plan_checks as _plan

    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n")
    good = _pytest(tmp_path, "-v", "--orthoverify-target", "tests.planted.conformance_targets:embed",
                   "--orthoverify-kind", "complex-to-real")  # fmt: skip
    checks = [name for name, *_ in _plan("complex-to-real", ("float32", "float64"))]
    assert good.returncode == 0, good.stdout + good.stderr
    assert f"collected {len(checks) + 1} items" in good.stdout and f"{len(checks) + 1} passed" in good.stdout
    assert "DeprecationWarning" not in good.stdout and "warnings summary" not in good.stdout
    node = "orthoverify[tests.planted.conformance_targets:embed_wrong_block]::complex-to-real::forward"
    bad = _pytest(tmp_path, "-v", "--orthoverify-target", "tests.planted.conformance_targets:embed_wrong_block",
                  "--orthoverify-kind", "complex-to-real")  # fmt: skip
    assert bad.returncode == 1 and f"FAILED {node}" in bad.stdout, bad.stdout + bad.stderr
    assert "complex-to-real.forward: refuted" in bad.stdout and "counterexample:" in bad.stdout
    (tmp_path / "conftest.py").write_text(SPY)  # records which checks the run made
    again = _pytest(tmp_path, node, "--orthoverify-target", "tests.planted.conformance_targets:embed_wrong_block",
                    "--orthoverify-kind", "complex-to-real")  # fmt: skip
    assert again.returncode == 1 and f"collected {len(checks)} items / {len(checks) - 1} deselected" in again.stdout
    assert "1 failed" in again.stdout and "test_own" not in again.stdout, again.stdout
    assert json.loads((tmp_path / "ran.json").read_text()) == ["conformance.complex-to-real.forward"]
    (tmp_path / "conftest.py").unlink()
    plain = _pytest(tmp_path)
    assert plain.returncode == 0 and "1 passed" in plain.stdout, plain.stdout  # no target: the plugin adds nothing


# ------------------------------------------------------------------------------ smaller promises
def test_backend_flint_says_when_a_claim_has_no_flint_evidence(tmp_path: Path) -> None:
    pytest.importorskip("flint")
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", "householder.flops", "--backend", "flint", "--profile", "quick", "--workers", "1"]
    assert main([*argv, "--json", str(tmp_path / "a.json")], out, err) == 2
    assert "no check of the 1 selected claim(s) runs on flint; their checks use flops" in err.getvalue()
    assert not (tmp_path / "a.json").exists()
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", "householder.flops", "cayley.bijection", "--backend", "flint", "--profile", "quick"]
    assert main([*argv, "--workers", "1", "--json", str(tmp_path / "b.json"), "--quiet"], out, err) == 0
    assert "householder.flops: no check runs on flint (its checks use flops)" in err.getvalue()
    data = json.loads((tmp_path / "b.json").read_text())
    (bijection,) = [c for c in data["claims"] if c["id"] == "cayley.bijection"]
    assert [e["backend"] for e in bijection["evidence"]] == ["flint-100"]  # "flint" selects flint-100 too
    assert "2 claims: " in out.getvalue()


def test_check_help_lists_flint_and_one_claim_is_singular(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "flint or flint-D" in " ".join(capsys.readouterr().out.split())
    monkeypatch.setenv("ORTHOVERIFY_EXTRA_CLAIMS", "tests.planted.planted_claims")
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", "planted.true_reflection_orthogonal", "--profile", "quick", "--workers", "1", "--quiet"]
    assert main([*argv, "--json", str(tmp_path / "one.json")], out, err) == 0
    assert "\n1 claim: 1 verified" in out.getvalue()


# ------------------------------------------------------------------------------ the worked example
def _myflow() -> tuple[str, str, str]:
    """The README's myflow.py, the validate command printed under it, and the sentence after."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rest = text.split("A worked example, `myflow.py`:", 1)[1]
    block = rest.split("```python\n", 1)[1].split("```", 1)[0]
    m = re.search(r"`(orthoverify validate myflow:flow [^`]*)` gives (.*?)Keywords", rest, re.S)
    assert m is not None
    return block, m.group(1), " ".join(m.group(2).split())


def _validate_myflow(tmp_path: Path, source: str, command: str) -> tuple[int, dict[str, str], dict[str, Any]]:
    (tmp_path / "myflow.py").write_text(source, encoding="utf-8")
    argv = [sys.executable, "-m", *command.split()]
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    data = json.loads((tmp_path / "out" / "validate-myflow-flow.json").read_text())
    verdicts = {c["id"].rsplit(".", 1)[1]: c["verdict"] for c in data["claims"]}
    return run.returncode, verdicts, data


@pytest.mark.slow
def test_the_worked_example_gives_what_the_readme_says(tmp_path: Path) -> None:
    """myflow.py saved verbatim and validated by the README's own command, in the file's folder: the
    full verdict and the exit status as the README states them; and without its scaling lines, the
    fragile finding the README describes (NaN where u'u underflows at the subnormal special point:
    exit 0, and exit 1 with --strict)."""
    source, command, says = _myflow()
    (tmp_path / "scaled").mkdir()
    code, verdicts, data = _validate_myflow(tmp_path / "scaled", source, command)
    total = len(verdicts)
    verified = sum(v == "verified" for v in verdicts.values())
    assert says.startswith(f"{total} claims: {verified} verified, `batch` inconclusive"), (says, verdicts)
    assert "exits 0" in says and code == 0
    assert {k for k, v in verdicts.items() if v != "verified"} == {"batch"} and verdicts["batch"] == "inconclusive"
    assert data["validate"]["declaration"]["second_entry_point"] == "forward(I)"
    scaling = "        u = u / u.abs().max()"
    unscaled = "".join(line for line in source.splitlines(keepends=True) if not line.startswith(scaling))
    assert source.count(scaling) == 2 and unscaled.count("u.abs().max()") == 0
    (tmp_path / "plain").mkdir()
    code, verdicts, data = _validate_myflow(tmp_path / "plain", unscaled, command)
    fragile = {k for k, v in verdicts.items() if v == "fragile"}
    assert code == 0 and fragile == {"orthogonal", "forward"} and "it still exits 0, with a fragile finding" in says
    rest = {k: v for k, v in verdicts.items() if k not in fragile}
    n_ok = sum(v == "verified" for v in rest.values())
    assert f"{n_ok} verified, `batch` inconclusive" in says and set(rest) - {"batch"} == {
        k for k, v in rest.items() if v == "verified"
    }
    (tmp_path / "strict").mkdir()
    assert "with `--strict` it exits 1" in says
    assert _validate_myflow(tmp_path / "strict", unscaled, command + " --strict")[0] == 1
    for c in data["claims"]:
        if c["verdict"] == "fragile":
            rows = [e for e in c["evidence"] if not e["passed"]]
            assert {e["backend"].split("-")[1] for e in rows} == {"float32", "float64"}
            assert all("'subnormal columns" in e["notes"] and "NaN" in e["notes"] for e in rows), rows


def test_every_inline_command_is_one_the_command_line_accepts() -> None:
    """Each `orthoverify SUBCOMMAND ARGS` written inline in the README and the guide (placeholders
    such as RESULT.json included) is accepted by the parser as written: no unrecognized argument,
    no missing one. A bare `orthoverify report` is a mention of the command, not an example; the
    guide's shell block runs in tests/claims/test_adding_a_claim.py."""
    import shlex

    from orthoverify.cli import build_parser

    text = (ROOT / "README.md").read_text(encoding="utf-8") + (ROOT / "docs" / "adding-a-claim.md").read_text()
    commands = re.findall(r"`((?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?orthoverify [^`]+)`", text)
    parser = build_parser()
    checked = 0
    for command in commands:
        words = [w for w in shlex.split(command) if "=" not in w or w.startswith("-")]
        if len(words) < 3:
            continue
        try:
            parser.parse_args(words[1:])
        except SystemExit:
            pytest.fail(f"the README's command is not accepted: {command!r}")
        checked += 1
    assert checked >= 20, commands
