"""``orthoverify bench`` from the command line: listing, bad usage, and the JSON rows of quick runs
of the cayley, unitary and suite cases. Nothing here asserts on speed: rows are checked for their
schema and their correctness fields only."""

from __future__ import annotations

import io
import json
import signal
from pathlib import Path
from typing import Any

import pytest
import torch

from orthoverify.bench import cases_suite
from orthoverify.bench.core import NOISY_SPREAD, BenchResult, merge_repeats, noisy_warning
from orthoverify.cli import main
from orthoverify.tolerance import THRESHOLD
from tests.conftest import PLANTED

ROW_KEYS = {"case", "params", "impl", "baseline", "seconds", "baseline_seconds", "ratio"}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def rows_of(path: Path) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text())
    assert doc["kind"] == "orthoverify-bench" and isinstance(doc["results"], list)
    for r in doc["results"]:
        assert set(r) >= ROW_KEYS, r
        assert isinstance(r["params"], dict) and isinstance(r["impl"], str) and isinstance(r["baseline"], str)
        assert r["seconds"] > 0 and r["baseline_seconds"] > 0
        if "spread" in r:  # merged over repeats: medians, each figure within its [min, max]
            assert r["repeats"] >= 2 and set(r["spread"]) == {"seconds", "baseline_seconds", "ratio"}
            for name, (lo, mid, hi) in r["spread"].items():
                assert lo <= mid <= hi and r[name] == mid
        else:
            assert r["repeats"] == 1
            assert r["ratio"] == pytest.approx(r["baseline_seconds"] / r["seconds"])
    return list(doc["results"])


def test_list_names_the_cases() -> None:
    code, out, _ = run("bench", "--list")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    for name in ("cayley.fwd_bwd", "cayley.inverse", "unitary.fft", "suite.family", "suite.profile.quick"):
        assert name in names
    code, out, _ = run("bench", "--list", "suite.profile.*")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [
        "suite.profile.quick",
        "suite.profile.default",
        "suite.profile.thorough",
    ]
    assert "machine unit" in out


def test_default_selection_leaves_out_the_whole_suite_cases() -> None:
    """The suite.* cases rerun the whole suite: only an explicit glob runs them, never the default
    selection, so never a --quick smoke run."""
    from orthoverify.bench import select_cases

    default = {c.name for c in select_cases([])}
    assert "cayley.inverse" in default and not any(name.startswith("suite.") for name in default)
    assert {c.name for c in select_cases(["suite.*"])} == {
        "suite.profile.quick",
        "suite.profile.default",
        "suite.profile.thorough",
        "suite.family",
    }


def _fake_cases(monkeypatch: pytest.MonkeyPatch, clock: list[float], interrupt_at: str | None = None) -> None:
    """Three registered cases test.a, test.b, test.c, each 10 s on the fake clock (nothing timed)."""
    from orthoverify.bench import core
    from orthoverify.cli import Interrupted

    def case(name: str) -> core.BenchCase:
        def fn(_ctx: core.BenchContext) -> list[BenchResult]:
            if name == interrupt_at:
                raise Interrupted(signal.SIGTERM)  # what the command's SIGTERM handler raises
            clock[0] += 10.0
            return [BenchResult(name, {"n": 2}, "impl", "base", 1.0, 2.0)]

        return core.BenchCase(name, f"fake case {name}", fn)

    for name in ("test.a", "test.b", "test.c"):
        monkeypatch.setitem(core._CASES, name, case(name))


def test_progress_counts_cases_and_estimates_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    from orthoverify.bench import run_bench

    clock = [0.0]
    _fake_cases(monkeypatch, clock)
    lines: list[str] = []
    saved: list[dict[str, Any]] = []
    doc = run_bench(["test.*"], repeats=1, progress=lines.append, save=saved.append, clock=lambda: clock[0])
    heads = [ln for ln in lines if ln.startswith("[")]
    assert heads == [
        "[1/3] test.a: fake case test.a  (0s elapsed)",
        "[2/3] test.b: fake case test.b  (10s elapsed, about 20s left)",
        "[3/3] test.c: fake case test.c  (20s elapsed, about 10s left)",
    ]
    assert [d["cases_done"] for d in saved] == [1, 2, 3] and [len(d["results"]) for d in saved] == [1, 2, 3]
    assert doc["complete"] and not saved[1]["complete"] and saved[2] == doc | {"seconds": saved[2]["seconds"]}


def test_an_interrupted_bench_keeps_the_rows_it_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM (or Ctrl-C) during the third case: exit 143, and the JSON holds the first two cases'
    rows, marked incomplete (written atomically after each case)."""
    _fake_cases(monkeypatch, [0.0], interrupt_at="test.c")
    path = tmp_path / "b.json"
    code, out, err = run("bench", "test.*", "--repeats", "1", "--json", str(path))
    assert code == 143 and "terminated by SIGTERM" in err
    doc = json.loads(path.read_text())
    assert [r["case"] for r in doc["results"]] == ["test.a", "test.b"]
    assert doc["complete"] is False and doc["cases_done"] == 2 and doc["cases"] == 3
    assert f"rows go to {path}" in out and "[3/3] test.c" in out


def test_unknown_glob_exits_2(tmp_path: Path) -> None:
    code, _, err = run("bench", "nosuch.*", "--quick", "--json", str(tmp_path / "b.json"))
    assert code == 2 and "no benchmark case matches 'nosuch.*'" in err
    assert not (tmp_path / "b.json").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_cuda_without_gpu_exits_2(tmp_path: Path) -> None:
    code, _, err = run("bench", "cayley.*", "--device", "cuda", "--json", str(tmp_path / "b.json"))
    assert code == 2 and "torch.cuda.is_available() is False" in err


def test_quick_cayley_and_unitary(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    code, out, _ = run(
        "bench", "cayley.*", "unitary.fft", "--quick", "--budget", "0.02", "--repeats", "1", "--json", str(path)
    )
    assert code == 0 and f"JSON result: {path}" in out
    rows = rows_of(path)
    assert {r["case"] for r in rows} == {"cayley.fwd_bwd", "cayley.inverse", "unitary.fft"}
    inverse = [r for r in rows if r["case"] == "cayley.inverse"]
    assert [r["params"]["n"] for r in inverse] == [32, 64]
    for r in inverse:
        assert r["extra"]["holds"] and r["extra"]["max_abs"] <= 1 + 1e-12
        assert isinstance(r["extra"]["exponent_all_n"], float)  # the fitted growth exponent, value not asserted
    assert all(r["params"]["device"] == "cpu" for r in rows if r["case"] == "cayley.fwd_bwd")
    assert all(r["extra"]["check_ratio"] <= THRESHOLD for r in rows if r["case"] == "unitary.fft")


def test_quick_highprec_rows_agree_to_the_digits(tmp_path: Path) -> None:
    """flint against mpmath on the same solve and product; each answer was compared first."""
    pytest.importorskip("flint")
    path = tmp_path / "hp.json"
    code, _, _ = run("bench", "highprec.*", "--quick", "--budget", "0.02", "--repeats", "1", "--json", str(path))
    assert code == 0
    rows = rows_of(path)
    assert sorted((r["case"], r["params"]["digits"]) for r in rows) == [
        ("highprec.matmul", 50),
        ("highprec.matmul", 100),
        ("highprec.solve", 50),
        ("highprec.solve", 100),
    ]
    for r in rows:
        assert r["params"]["n"] == 16 and r["impl"].startswith(f"flint-{r['params']['digits']}")
        assert r["extra"]["max_rel_difference"] <= 10.0 ** (3 - r["params"]["digits"])


def test_suite_family_on_planted_claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cases_suite, "FAMILY_MODULES", PLANTED)
    monkeypatch.setattr(cases_suite, "WORKERS", 1)
    path = tmp_path / "suite.json"
    code, out, _ = run("bench", "suite.family", "--repeats", "1", "--json", str(path))
    assert code == 0, out
    (row,) = rows_of(path)
    assert row["case"] == "suite.family" and row["params"] == {
        "family": "planted_claims",
        "profile": "quick",
        "workers": 1,
    }
    assert row["baseline"].startswith("machine unit")
    assert row["extra"]["verdicts"] == {"verified": 1, "refuted": 2, "inconclusive": 1, "error": 1}
    assert row["extra"]["machine_units"] == pytest.approx(1 / row["ratio"])


def _row(ratio: float, seconds: float = 1.0, n: int = 8) -> BenchResult:
    return BenchResult("x.case", {"n": n}, "impl", "base", seconds, seconds * ratio, ratio, extra={"runs": 3})


def test_repeats_merge_into_median_and_spread_and_flag_noise() -> None:
    """The row keeps the median of each figure and [min, median, max]; a ratio that moved by more
    than NOISY_SPREAD between repeats marks the row noisy (synthetic rows: nothing is timed)."""
    quiet = merge_repeats([[_row(2.0), _row(3.0, n=16)], [_row(2.2), _row(3.1, n=16)], [_row(2.1), _row(2.9, n=16)]])
    assert [r.params["n"] for r in quiet] == [8, 16]
    row = quiet[0]
    assert row.repeats == 3 and row.ratio == 2.1 and row.spread is not None
    assert row.spread["ratio"] == [2.0, 2.1, 2.2] and not row.noisy and row.extra == {"runs": 3}
    (loud,) = merge_repeats([[_row(1.0)], [_row(240.0)], [_row(2.0)]])
    assert loud.noisy and loud.ratio == 2.0 and loud.spread is not None and loud.spread["ratio"] == [1.0, 2.0, 240.0]
    assert "too noisy to trust" in noisy_warning(loud) and "1 to 240" in noisy_warning(loud)
    (slow,) = merge_repeats([[_row(2.0, seconds=1.0)], [_row(2.0, seconds=NOISY_SPREAD * 1.1)]])
    assert slow.noisy  # the same ratio, but a time that moved too much
    (once,) = merge_repeats([[_row(5.0)]])
    assert once.repeats == 1 and once.spread is None and not once.noisy and "spread" not in once.to_json()


def test_cli_repeats_each_case(tmp_path: Path) -> None:
    path = tmp_path / "fft.json"
    code, out, _ = run("bench", "unitary.fft", "--quick", "--budget", "0.02", "--repeats", "2", "--json", str(path))
    assert code == 0
    doc = json.loads(path.read_text())
    assert doc["repeats"] == 2 and isinstance(doc["noisy"], list)
    rows = rows_of(path)
    assert rows and all(r["repeats"] == 2 for r in rows)
    assert "over 2 repeats" in out
    assert len(doc["noisy"]) == sum(1 for r in rows if r["noisy"])
    assert ("too noisy to trust" in out) == bool(doc["noisy"])


def test_clock_cpu_times_samples_by_the_threads_cpu_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--clock cpu``: take_turns reads SAMPLE_CLOCKS["cpu"] (time.thread_time) for every sample of
    a case run under it, and wall time again afterwards; here both clocks are fake counters, so
    nothing is timed: a call advances the "cpu" counter by 1 and the wall one by 100."""
    from orthoverify.bench import core, timing

    ticks = {"wall": 0.0, "cpu": 0.0}

    def work() -> None:
        ticks["wall"] += 100.0
        ticks["cpu"] += 1.0

    monkeypatch.setitem(timing.SAMPLE_CLOCKS, "cpu", lambda: ticks["cpu"])
    monkeypatch.setattr(timing, "_clock", [lambda: ticks["wall"]])

    def fn(ctx: core.BenchContext) -> list[BenchResult]:
        t = timing.take_turns({"impl": work}, reps=3, budget_s=1e9)["impl"]
        return [BenchResult("test.clock", {"n": 1}, "impl", "base", t[0], 1.0)]

    monkeypatch.setitem(core._CASES, "test.clock", core.BenchCase("test.clock", "fake", fn))
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    doc = core.run_bench(["test.clock"], repeats=1, sample_clock="cpu")
    assert doc["clock"] == "cpu" and doc["results"][0]["seconds"] == 1.0  # one call: one cpu tick
    assert timing.take_turns({"impl": work}, reps=3, budget_s=1e9)["impl"][0] == 100.0  # wall again after


def test_clock_cpu_needs_one_thread_and_a_known_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from orthoverify.bench import core
    from orthoverify.errors import InputError

    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    with pytest.raises(InputError, match="OMP_NUM_THREADS=1; torch has 2"):
        core.run_bench(["cayley.inverse"], sample_clock="cpu")
    with pytest.raises(InputError, match="the clock must be one of wall, cpu"):
        core.run_bench(["cayley.inverse"], sample_clock="sundial")
