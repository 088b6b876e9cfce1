"""Bad input to the command line (issue 17): every bad option value is refused before any work with a
message naming the option, and every malformed result file given to ``report`` or ``replay`` is a
usage error (exit 2) naming the file and the field, never a traceback."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import orthoverify
from orthoverify.cli import main
from orthoverify.engine import result as result_mod
from orthoverify.errors import InputError
from orthoverify.param import unitary

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(list(argv), out=out, err=err)
    except SystemExit as exc:  # argparse refuses a value: exit 2 with the option's name
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


CLAIM = ("check", "householder.reflection", "--profile", "quick", "--workers", "1")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ((*CLAIM, "--seed", "-1"), "--seed"),
        ((*CLAIM, "--seed", str(2**32)), "--seed"),
        ((*CLAIM, "--seed", "1.5"), "--seed"),
        ((*CLAIM, "--backend", ","), "--backend"),
        ((*CLAIM, "--backend", ""), "--backend"),
        ((*CLAIM, "--json", ""), "--json"),
        ((*CLAIM, "--report", " "), "--report"),
        ((*CLAIM, "--device", "bogus"), "--device"),
        (("validate", "orthoverify-householder", "--timeout", "0"), "--timeout"),
        (("validate", "orthoverify-householder", "--timeout", "-1"), "--timeout"),
        (("validate", "orthoverify-householder", "--timeout", "inf"), "--timeout"),
        (("validate", "orthoverify-householder", "--timeout", "nan"), "--timeout"),
        (("validate", "orthoverify-householder", "--device", "bogus"), "--device"),
        (("validate", "orthoverify-householder", "--seed", "-1"), "--seed"),
        (("validate", "orthoverify-householder", "--json", ""), "--json"),
        (("bench", "--budget", "0"), "--budget"),
        (("bench", "--budget", "nan"), "--budget"),
        (("report", str(REFERENCE), "--out", ""), "--out"),
    ],
)
def test_bad_option_values_are_refused_naming_the_option(
    argv: tuple[str, ...], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(*argv)
    err += capsys.readouterr().err  # argparse writes to sys.stderr
    assert code == 2 and option in err, err
    assert "Traceback" not in err and not out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_validate_cuda_without_gpu_is_refused_before_work(tmp_path: Path) -> None:
    code, out, err = run("validate", "orthoverify-householder", "--device", "cuda", "--json", str(tmp_path / "v.json"))
    assert code == 2 and "--device cuda" in err and "CUDA" in err and not out
    assert not (tmp_path / "v.json").exists()


@pytest.mark.parametrize("where", ["under-a-file", "a-folder", "read-only"])
def test_unwritable_outputs_are_refused_before_the_run(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    if where == "under-a-file":
        argv: tuple[str, ...] = ("--json", str(blocker / "r.json"))
    elif where == "a-folder":
        argv = ("--json", str(tmp_path))
    else:
        if not Path("/proc/self").is_dir():
            pytest.skip("needs a read-only file system (/proc)")
        argv = ("--json", str(tmp_path / "r.json"), "--report", "/proc/orthoverify-report")
    code, out, err = run(*CLAIM, *argv)
    assert code == 2 and ("--json" in err or "--report" in err), err
    assert not out and "householder.reflection ::" not in err  # no check ran
    assert not (tmp_path / "r.json").exists()


def test_report_refuses_an_out_folder_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run("report", str(REFERENCE), "--out", str(blocker))
    assert code == 2 and "--out" in err and "not a folder" in err


def _claim(**over: Any) -> dict[str, Any]:
    c: dict[str, Any] = {
        "id": "householder.reflection",
        "paper": "householder",
        "where": "eq. 6",
        "statement": "s",
        "kind": "identity",
        "verdict": "refuted",
        "evidence": [],
        "counterexample": None,
    }
    c.update(over)
    return c


def _doc(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"orthoverify": "0.1.0", "profile": "quick", "seed": 0, "claims": [_claim()]}
    d.update(over)
    return d


CX = {"inputs": {}, "quantity": "q", "value": "1", "precision_digits": 50, "check": "c"}


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("{not json", "not JSON"),
        ('{"orthoverify": "0", "claims": [NaN]}', "not JSON"),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
        (b"\xff\xfe{}", "not JSON"),
        (json.dumps([1, 2]), "not an orthoverify result"),
        (json.dumps(_doc(claims={"a": 1})), "field claims must be a list"),
        (json.dumps(_doc(seed="zero")), "field seed"),
        (json.dumps(_doc(environment=[1])), "field environment"),
        (json.dumps(_doc(claims=[7])), "claims[0] must be an object"),
        (json.dumps(_doc(claims=[_claim(id=3)])), "field claims[0].id"),
        (json.dumps(_doc(claims=[{"id": "x"}])), "(no verdict"),
        (json.dumps(_doc(claims=[_claim(verdict="maybe")])), "claims[0].verdict"),
        (json.dumps(_doc(claims=[_claim(), _claim()])), "claims[1].id"),
        (json.dumps(_doc(claims=[_claim(evidence={})])), "field claims[0].evidence must be a list"),
        (json.dumps(_doc(claims=[_claim(evidence=[{"check": "c", "seconds": "x"}])])), "claims[0].evidence[0].seconds"),
        (json.dumps(_doc(claims=[_claim(evidence=[{"backend": "b"}])])), "claims[0].evidence[0].check"),
        (json.dumps(_doc(claims=[_claim(counterexample=[1])])), "claims[0].counterexample must be"),
        (json.dumps(_doc(claims=[_claim(counterexample={"inputs": {}})])), "claims[0].counterexample lacks"),
        (
            json.dumps(_doc(claims=[_claim(counterexample={**CX, "precision_digits": "many"})])),
            "claims[0].counterexample.precision_digits",
        ),
        (json.dumps(_doc(claims=[_claim(counterexample={**CX, "inputs": "A=1"})])), "counterexample.inputs"),
    ],
)
@pytest.mark.parametrize("command", ["report", "replay"])
def test_malformed_result_files_are_usage_errors_naming_file_and_field(
    tmp_path: Path, content: str | bytes, field: str, command: str
) -> None:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    argv = ("report", str(path), "--out", str(tmp_path / "out")) if command == "report" else ("replay", str(path), "x")
    code, _, err = run(*argv)
    assert code == 2, (code, err)
    assert str(path) in err and field in err, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_huge_result_file_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result_mod, "MAX_RESULT_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_doc(claims=[_claim(statement="x" * 2000)])))
    code, _, err = run("replay", str(path), "householder.reflection")
    assert code == 2 and str(path) in err and "more than the 1000" in err


def test_the_reference_result_passes_the_checks() -> None:
    """The validator accepts what write_json writes (so its refusals above are not blanket ones)."""
    data = result_mod.load_json(REFERENCE)
    assert len(data["claims"]) > 50


def test_list_into_a_closed_pipe_exits_quietly() -> None:
    """`orthoverify list | head -1`: the reader goes away; no BrokenPipe message, status 141."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write: every write hits EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "orthoverify", "list"],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
            timeout=120,
        )
    finally:
        os.close(w)
    assert proc.stderr == "" and proc.returncode == 141, proc.stderr


@pytest.mark.parametrize(
    ("bound", "doc", "message"),
    [
        ("MAX_CLAIMS", _doc(claims=[_claim(id=f"c{i}") for i in range(4)]), "more than the 3"),
        ("MAX_PAPERS", _doc(claims=[_claim(id=f"c{i}", paper=f"p{i}") for i in range(4)]), "more than 3 different"),
        ("MAX_EVIDENCE", _doc(claims=[_claim(evidence=[{"check": "c"}] * 4)]), "more than 3 evidence"),
    ],
)
def test_counts_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str, doc: Any, message: str
) -> None:
    """A crafted file cannot make rendering run for hours: claims, papers and evidence are bounded."""
    monkeypatch.setattr(result_mod, bound, 3)
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    code, _, err = run("report", str(path), "--out", str(tmp_path / "out"))
    assert code == 2 and str(path) in err and message in err, err


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs and /dev/zero")
@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero"])
@pytest.mark.parametrize("command", ["report", "replay"])
def test_a_result_file_that_is_no_regular_file_exits_2_at_once(tmp_path: Path, kind: str, command: str) -> None:
    """A FIFO blocked the open for good, and /dev/zero (which stat() calls empty) was read until
    memory ran out: each is refused after opening it without blocking, naming the file. Run as a
    program with a timeout, so that a regression fails instead of hanging the suite."""
    path = tmp_path / "result.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    argv = ["report", str(path), "--out", str(tmp_path / "out")] if command == "report" else ["replay", str(path), "x"]
    proc = subprocess.run(
        [sys.executable, "-m", "orthoverify", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and str(path) in lines[0], proc.stderr
    assert ("FIFO" if kind == "fifo" else "character device") in lines[0] and "not a regular file" in lines[0]
    assert not (tmp_path / "out").exists()


def test_replay_timeout_covers_reading_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """--timeout starts before the file is read (a slow file system, or a file that never ends)."""
    import time

    from orthoverify.engine import replay as replay_mod

    def slow(*args: Any, **kw: Any) -> Any:
        time.sleep(30)
        raise AssertionError("the deadline did not cover loading")

    monkeypatch.setattr(replay_mod, "load_json", slow)
    code, _, err = run("replay", str(REFERENCE), "householder.theorem2_proof", "--timeout", "0.5")
    assert code == 2 and "did not finish within 0.5 s" in err, err


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (("replay", str(REFERENCE), "householder.theorem2_proof", "--timeout", "1e308"), "--timeout"),
        (("validate", "orthoverify-householder", "--timeout", "1e308"), "--timeout"),
        (("validate", "orthoverify-householder", "--memory-limit", "lots"), "--memory-limit"),
        (("validate", "orthoverify-householder", "--memory-limit", "1M"), "--memory-limit"),
    ],
)
def test_timeouts_and_limits_beyond_what_the_system_takes_are_refused(
    argv: tuple[str, ...], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--timeout 1e308`` overflowed setitimer (replay) or made every call of the target fail at once
    (validate: every check `error`); now each is refused before any work, naming the option."""
    code, out, err = run(*argv)
    err += capsys.readouterr().err
    assert code == 2 and option in err and "Traceback" not in err and not out, err


@pytest.mark.parametrize(
    ("call", "message"),
    [  # each raised a raw exception before, or ran and refuted orthoverify's own adapter (timeout=nan)
        (lambda: orthoverify.validate(123), "target: expected"),  # AttributeError
        (lambda: orthoverify.validate("orthoverify-householder", timeout=math.nan), "timeout"),
        (lambda: orthoverify.validate("orthoverify-householder", timeout=1e308), "timeout"),
        (lambda: orthoverify.validate("orthoverify-householder", timeout="soon"), "timeout"),
        (lambda: unitary.permutation_matrix([math.inf, 0, 1, 2]), "perm"),  # OverflowError
        (lambda: unitary.permutation_matrix(5), "perm"),  # TypeError
    ],
)
def test_bad_arguments_of_the_python_api_are_named_errors(call: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call()
