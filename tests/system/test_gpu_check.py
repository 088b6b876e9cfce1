"""tools/gpu-check without a GPU: it refuses clearly (exit 2, nothing measured), its arguments are
checked, and the summary it prints is built right from pytest's output, two result files and a
bench result (the parts that run on a GPU are exercised there, by the script itself)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "gpu-check"


def _load() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(SCRIPT))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


gc = _load()


def test_the_script_is_executable_and_names_itself() -> None:
    assert SCRIPT.stat().st_mode & 0o111
    assert SCRIPT.read_text().startswith("#!/usr/bin/env python3\n")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: the script would measure it")
def test_without_a_gpu_it_exits_2_and_measures_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--python", sys.executable, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no CUDA GPU here (torch.cuda.is_available() is False); nothing measured" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("argv", [["--budget", "0"], ["--budget", "x"], ["--bench-timeout", "-1"], ["--frobnicate"]])
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        gc.parse_args(argv)
    assert exc.value.code == 2


def test_arguments() -> None:
    args = gc.parse_args(["--budget", "5", "--bench", "householder.*", "svd.fwd_bwd", "--python", "/p"])
    assert (args.budget, args.bench, args.python) == (5.0, ["householder.*", "svd.fwd_bwd"], "/p")
    assert gc.parse_args([]).bench == ["householder.fwd_bwd"]


def test_pytest_counts() -> None:
    out = "....\nFAILED tests/x.py::t - boom\n2 failed, 10 passed, 3 skipped, 900 deselected in 12.3s\n"
    assert gc.pytest_counts(out) == {"failed": 2, "passed": 10, "skipped": 3, "deselected": 900}
    assert gc.pytest_counts("1 error in 0.1s") == {"error": 1}
    assert gc.pytest_counts("no tests ran in 0.01s") == {}


def _result(path: Path, verdicts: dict[str, str]) -> Path:
    path.write_text(json.dumps({"claims": [{"id": k, "verdict": v, "evidence": []} for k, v in verdicts.items()]}))
    return path


def test_compare_verdicts(tmp_path: Path) -> None:
    cpu = gc.verdicts(_result(tmp_path / "cpu.json", {"a": "verified", "b": "refuted", "c": "verified"}))
    gpu = gc.verdicts(_result(tmp_path / "gpu.json", {"a": "verified", "b": "error", "d": "verified"}))
    got = gc.compare_verdicts(cpu, gpu)
    assert got["claims"] == 4 and got["agree"] == 1
    assert got["differences"] == ["b: refuted -> error", "c: verified -> absent", "d: absent -> verified"]
    assert got["gpu_errors"] == ["b"]
    assert gc.compare_verdicts(cpu, cpu) == {"claims": 3, "agree": 3, "differences": [], "gpu_errors": []}


def _row(n: int, m: int, b: int, baseline: str, **kw: Any) -> dict[str, Any]:
    return {
        "case": "householder.fwd_bwd",
        "params": {"n": n, "m": m, "B": b, "dtype": "float32", "device": "cuda"},
        "impl": "householder_wy_apply",
        "baseline": baseline,
        "seconds": 0.0008,
        "baseline_seconds": 0.2,
        "ratio": 250.0,
        **kw,
    }


def test_bench_rows_keep_n_equal_m_at_batch_32() -> None:
    data = {
        "results": [
            _row(512, 512, 32, "Algorithm 1"),
            _row(512, 32, 32, "x"),
            _row(512, 512, 1, "x"),
            _row(1024, 1024, 32, "dense W leaf", noisy=True),
            {"case": "odd"},
        ]
    }
    assert gc.bench_rows(data) == [
        "householder.fwd_bwd n=m=512 B=32 float32: householder_wy_apply 0.8 ms vs Algorithm 1 200 ms (ratio 250)",
        "householder.fwd_bwd n=m=1024 B=32 float32: householder_wy_apply 0.8 ms vs dense W leaf 200 ms (ratio 250)"
        " [noisy]",
    ]
    assert gc.bench_rows({}) == []


def _facts(**over: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "gpu": "NVIDIA H100 (torch 2.13.0, CUDA 12.8)",
        "tests": {"rc": 0, "counts": {"passed": 12, "deselected": 900}, "seconds": 30.0},
        "check": {
            "cpu_seconds": 20.0,
            "cuda_seconds": 15.0,
            "compare": {"claims": 82, "agree": 82, "differences": [], "gpu_errors": []},
        },
        "bench": {
            "cases": ["householder.fwd_bwd"],
            "budget": 2.0,
            "seconds": 90.0,
            "status": "finished",
            "rows": ["row one"],
        },
    }
    facts.update(over)
    return facts


def test_summary_of_a_clean_run() -> None:
    text, ok = gc.summary(_facts())
    assert ok
    assert text.splitlines() == [
        "gpu-check summary",
        "  GPU: NVIDIA H100 (torch 2.13.0, CUDA 12.8)",
        "  CUDA tests (pytest -m cuda): 12 passed, 0 failed, 0 errors, 0 skipped; exit 0 (30 s)",
        "  check --profile quick: CPU 20.0 s, --device cuda 15.0 s (cuda/cpu 0.75)",
        "  verdicts: GPU agrees with CPU on 82 of 82 claims",
        "  errors on the GPU: 0",
        "  bench householder.fwd_bwd --device cuda --budget 2: finished (90 s)",
        "    row one",
        "  result: OK",
    ]


def test_summary_names_every_failure() -> None:
    compare = {
        "claims": 82,
        "agree": 80,
        "differences": ["x: verified -> error", "y: refuted -> verified"],
        "gpu_errors": ["x"],
    }
    text, ok = gc.summary(
        _facts(
            tests={"rc": 1, "counts": {"passed": 3, "failed": 1}, "seconds": 5.0},
            check={"cpu_seconds": 20.0, "cuda_seconds": 30.0, "compare": compare},
            bench={
                "cases": ["householder.fwd_bwd"],
                "budget": 2.0,
                "seconds": 300.0,
                "status": "did not finish within 300 s",
            },
        )
    )
    assert not ok
    assert "    differs: x: verified -> error" in text and "  errors on the GPU: 1\n    x" in text
    assert text.splitlines()[-1] == "  result: FAILED (CUDA tests, verdicts differ, errors on the GPU, bench)"
    _, ok = gc.summary(_facts(tests={"rc": 0, "counts": {"deselected": 900}, "seconds": 5.0}))
    assert not ok  # no CUDA test ran: nothing was shown


def test_summary_when_check_wrote_no_result() -> None:
    text, ok = gc.summary(_facts(check={"cpu_seconds": 1.0, "cuda_seconds": 1.0, "problem": "FileNotFoundError"}))
    assert not ok and "check failed to produce results: FileNotFoundError" in text


def test_without_a_venv_an_interpreter_with_torch_runs_the_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where no .venv is (a GPU machine's image, where nothing can be installed), the interpreter
    running the script is used when it has every module of NEEDS (this test's has), and makes no
    .venv; every command then finds this clone first on PYTHONPATH."""
    monkeypatch.setattr(gc, "ROOT", tmp_path)
    assert gc.missing_needs() == []
    assert gc._python(None) == sys.executable
    assert not (tmp_path / ".venv").exists()
    assert "no .venv" in capsys.readouterr().out
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert gc._env()["PYTHONPATH"].split(":") == [str(tmp_path), "/elsewhere"]
    monkeypatch.delenv("PYTHONPATH")
    assert gc._env()["PYTHONPATH"] == str(tmp_path)


def test_where_a_venv_cannot_be_made_it_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter that lacks a needed module, and no .venv that can be made (no network):
    the script stops naming the modules and --python, not with a traceback."""
    monkeypatch.setattr(gc, "ROOT", tmp_path)
    monkeypatch.setattr(gc, "NEEDS", (*gc.NEEDS, "no_such_module_here"))

    def offline(cmd: list[str], **kw: Any) -> None:
        raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(gc.subprocess, "run", offline)
    with pytest.raises(SystemExit) as exc:
        gc._python(None)
    assert "could not make .venv" in str(exc.value) and "--python" in str(exc.value), exc.value
    assert "no_such_module_here" in str(exc.value)


def test_the_summary_file_is_written_after_each_step(tmp_path: Path) -> None:
    """A run stopped from outside keeps the steps it finished: summary.json is rewritten after
    each one with complete false (the end writes complete true and ok)."""
    gc._so_far(tmp_path, {"gpu": "G", "tests": {"rc": 0}})
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data == {"gpu": "G", "tests": {"rc": 0}, "complete": False}
