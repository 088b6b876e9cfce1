"""A hostile target's attacks on containment (issue 26): processes it leaves behind are killed and
listed, memory exhaustion is a finding, and a result path it takes over does not lose the run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import orthoverify
from orthoverify._limits import LOAD_FLOOR_SECONDS
from orthoverify.cli import FALLBACK_SUFFIX
from orthoverify.errors import InputError
from orthoverify.isolation.calls import CallFailure, TargetLoadError
from orthoverify.isolation.isolate import ProcessRunner
from orthoverify.isolation.runner import Reply
from orthoverify.isolation.wire import op_forward
from tests.planted import containment_targets

ROOT = Path(__file__).resolve().parents[2]
T = "tests.planted.containment_targets:"
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes through /proc")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _gone(pids: list[int], wait: float = 10.0, running: Callable[[int], bool] = _alive) -> bool:
    """Whether every pid has stopped ``running`` within ``wait`` seconds (a bound, not a timing)."""
    end = time.monotonic() + wait
    while any(running(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    return not any(running(p) for p in pids)


def _pids(path: Path, count: int, wait: float = 30.0) -> list[int]:
    end = time.monotonic() + wait
    while time.monotonic() < end:
        pids = [int(x) for x in path.read_text().split()] if path.exists() else []
        if len(pids) >= count:
            return pids
        time.sleep(0.1)
    raise AssertionError(f"the forgers did not start: {path.read_text() if path.exists() else 'no pid file'}")


def _started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> ProcessRunner:
    """The target's process for ``target`` of containment_targets, started in ``tmp_path`` (where it
    writes the pids of what it leaves behind)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    runner = ProcessRunner(T + target, "householder-product")
    runner.start()
    return runner


def _forward(runner: ProcessRunner) -> Reply | CallFailure:
    """One forward call of the target, which is when the containment targets do their harm."""
    return runner.request(op_forward, [torch.randn(3, 2, dtype=torch.float64)], {}, 60.0, "cpu")


@pytest.mark.slow  # 1.3 to 2.3 s: the full suite runs it
def test_processes_the_target_leaves_behind_are_killed_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grandchild in a session of its own (double fork, setsid, orphaned at once) and a
    new-session subprocess with an empty environment both outlive the call; closing the target
    kills them and names them."""
    runner = _started(tmp_path, monkeypatch, "leaves_forgers")
    try:
        res = _forward(runner)
        assert isinstance(res, Reply), res
        pids = _pids(tmp_path / containment_targets.PIDS, 2)
        assert all(_alive(p) for p in pids)
    finally:
        runner.close()
    assert _gone(pids), [p for p in pids if _alive(p)]
    listed = " ".join(runner.left_behind)
    assert len(runner.left_behind) == 2 and all(f"pid {p}:" in listed for p in pids), runner.left_behind


def test_a_child_killed_once_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain forked child the target never reaps: killed by the first sweep, it is a zombie for
    the next ones (dead, nothing to kill), so it is listed once, not once per sweep. (Before: three
    times, and stderr said the target left 3 processes behind.)"""
    runner = _started(tmp_path, monkeypatch, "keeps_a_child")
    try:
        res = _forward(runner)
        assert isinstance(res, Reply), res
        (pid,) = _pids(tmp_path / containment_targets.PIDS, 1)
    finally:
        runner.close()
    assert _gone([pid])
    assert len(runner.left_behind) == 1 and f"pid {pid}:" in runner.left_behind[0], runner.left_behind


def _runs(pid: int) -> bool:
    """Whether any thread of ``pid`` runs (its main thread may have exited, /proc then says zombie)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    return any(_alive(int(t.name)) for t in tasks if Path(f"/proc/{pid}/task/{t.name}/stat").exists())


def test_a_process_that_looks_like_a_zombie_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process the target leaves whose main thread exited while another runs on: /proc says
    zombie, yet it runs; the sweep kills it all the same, and lists it."""
    runner = _started(tmp_path, monkeypatch, "leaves_a_headless_process")
    try:
        res = _forward(runner)
        assert isinstance(res, Reply), res
        (pid,) = _pids(tmp_path / containment_targets.PIDS, 1)
        end = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < end:
            time.sleep(0.1)  # until its main thread has exited: /proc/PID/stat says zombie
        assert not _alive(pid) and _runs(pid)
    finally:
        runner.close()
    assert _gone([pid], running=_runs), f"{pid} runs on"
    assert any(f"pid {pid}:" in x for x in runner.left_behind), runner.left_behind


def test_memory_exhaustion_is_a_finding_under_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A target that takes 2 GiB under a cap of 768 MiB: the call fails with the cap named (the
    machine's memory is not filled), and the process still answers afterwards."""
    monkeypatch.syspath_prepend(str(ROOT))
    runner = ProcessRunner(T + "hoards", "householder-product", memory_limit=768 * 2**20)
    runner.start()
    try:
        res = _forward(runner)
        assert isinstance(res, CallFailure) and res.kind in ("raised", "died"), res
        assert "memory limit" in res.message or res.kind == "died", res
    finally:
        runner.close()


@pytest.mark.slow  # the command line end to end, 6 to 15 s: the full suite (CI) runs it
def test_memory_exhaustion_through_the_command_line(tmp_path: Path) -> None:
    """The same target by the README's command, under --memory-limit 768M: exit 1, the failed
    allocation refuted with the cap named, a complete JSON that records the cap."""
    path = tmp_path / "v.json"
    argv = [sys.executable, "-m", "orthoverify", "validate", T + "hoards", "--kind", "householder-product"]
    argv += ["--profile", "quick", "--dtype", "float64", "--memory-limit", "768M", "--json", str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["claims"]) == sum(data["summary"].values()) and data["validate"]["memory_limit"] == 768 * 2**20
    (output,) = [c for c in data["claims"] if c["id"].endswith(".output")]
    assert output["verdict"] == "refuted" and "memory limit" in json.dumps(output), output["verdict"]


def _validate(tmp_path: Path, target: str, *options: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``orthoverify validate`` on ``target`` of containment_targets by the README's command (quick,
    float64, --json in ``tmp_path``): the finished process and the JSON's path."""
    path = tmp_path / "v.json"
    argv = [sys.executable, "-m", "orthoverify", "validate", target, "--kind", "householder-product"]
    argv += ["--profile", "quick", "--dtype", "float64", "--json", str(path), *options]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400, check=False)
    return proc, path


@pytest.mark.slow  # the command line end to end, 6 to 15 s: the full suite (CI) runs it
def test_memory_taken_across_child_processes_is_a_finding(tmp_path: Path) -> None:
    """A target whose call starts 3 processes, each taking 0.6 x the cap (under the per-process
    cap, RLIMIT_DATA, each; over the cap together): the warden kills them all, and the run refutes
    the target with the cap named as exceeded across its processes; exit 1, a complete JSON, and
    no process of the target left (the takers are killed, not listed as left behind)."""
    cap = containment_targets.SHARED_CAP
    proc, path = _validate(tmp_path, T + "hoards_across_children", "--memory-limit", str(cap))
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["claims"]) == sum(data["summary"].values()) and data["validate"]["memory_limit"] == cap
    (output,) = [c for c in data["claims"] if c["id"].endswith(".output")]
    text = json.dumps(output)
    assert output["verdict"] == "refuted" and f"memory cap of {cap / 2**30:.3g} GiB exceeded across" in text, text
    assert re.search(r"exceeded across [2-9] processes", text), text  # the target's process and its takers
    assert any("memory cap" in d for d in data["validate"]["target_deaths"]), data["validate"]["target_deaths"]
    assert data["validate"]["left_behind"] == [], data["validate"]["left_behind"]
    pids = _pids(tmp_path / containment_targets.PIDS, 4, wait=1.0)  # the target's process and its takers
    assert not any(_alive(p) for p in pids), "a process of the target outlived validate"


@pytest.mark.slow  # 1.3 to 2.3 s: the full suite runs it
def test_shared_anonymous_memory_counts_against_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A target that writes an anonymous shared mapping of 2 x the cap (MAP_SHARED is outside its
    data segment: RLIMIT_DATA alone lets it fill the machine): the warden counts it, kills the
    target's process, and the call is a death naming the cap."""
    monkeypatch.syspath_prepend(str(ROOT))
    cap = containment_targets.SHARED_CAP
    runner = ProcessRunner(T + "hoards_shared_memory", "householder-product", memory_limit=cap)
    runner.start()
    try:
        target = runner.target
        res = _forward(runner)
    finally:
        runner.close()
    assert isinstance(res, CallFailure) and res.kind == "died", res
    assert f"memory cap of {cap / 2**30:.3g} GiB exceeded across 1 process " in res.message, res.message
    assert target is not None and _gone([target]), f"the target's process {target} outlived close()"


@pytest.mark.slow  # 1.3 to 2.3 s: the full suite runs it
def test_the_memory_cap_across_processes_holds_while_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module that takes 2 x the cap of shared memory at import: the warden kills its process
    while it loads, and the load error names the cap."""
    monkeypatch.syspath_prepend(str(ROOT))
    cap = containment_targets.SHARED_CAP
    runner = ProcessRunner("tests.planted.hoards_at_import:target", "householder-product", memory_limit=cap)
    with pytest.raises(TargetLoadError, match=f"memory cap of {cap / 2**30:.3g} GiB exceeded across 1 process "):
        runner.start()


@pytest.mark.slow  # 1.3 to 2.3 s: the full suite runs it
def test_pages_forked_children_share_count_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """No false alarm: a right map whose call forks idle children (no exec) holds, by each
    process's own resident memory, far more than the cap (each child counts the target's pages
    again), and by each page's share far less; the warden measures shares before it acts, so
    the call answers."""
    monkeypatch.syspath_prepend(str(ROOT))
    cap = 2**30
    runner = ProcessRunner(T + "forks_idle_children", "householder-product", memory_limit=cap)
    runner.start()
    try:
        status = Path(f"/proc/{runner.target}/status").read_text()
        (anon,) = [int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("RssAnon:")]
        assert (containment_targets.FORKS + 1) * anon > cap > 2 * anon, anon  # the cheap measure is over the cap
        res = _forward(runner)
    finally:
        runner.close()
    assert isinstance(res, Reply), res
    assert runner.observed.deaths == [] and runner.left_behind == [], (runner.observed.deaths, runner.left_behind)


@pytest.mark.slow  # the command line end to end, 6 to 15 s: the full suite (CI) runs it
def test_a_target_that_hangs_at_import_is_bounded_by_the_timeout(tmp_path: Path) -> None:
    """A target module that sleeps for good at import: loading it is bounded by --timeout (at least
    LOAD_FLOOR_SECONDS) as a load failure is, exit status 3 with the load timeout named, and
    nothing of the target left running. (Before: a fixed 300 s of start-up.)"""
    proc, path = _validate(tmp_path, "tests.planted.hangs_at_import:target", "--timeout", "1")
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"did not load it within its load timeout, {LOAD_FLOOR_SECONDS:g} s" in proc.stderr, proc.stderr
    assert not path.exists()  # as for any target that cannot be loaded: nothing was run, nothing to judge
    (pid,) = _pids(tmp_path / containment_targets.PIDS, 1, wait=1.0)  # written at import, before it hangs
    assert not _alive(pid), "the target's process outlived validate"


@pytest.mark.parametrize("bad", ["12", "lots", "-1G", "1e400G", 1.5])
def test_a_bad_memory_limit_is_refused_by_name(bad: object) -> None:
    with pytest.raises(InputError, match="memory_limit"):
        orthoverify.validate("orthoverify-householder", memory_limit=bad)  # type: ignore[arg-type]


def test_a_target_that_takes_the_json_path_and_leaves_forgers(tmp_path: Path) -> None:
    """The whole attack through the command line: the target turns the --json path into a folder
    and leaves two forgers that rewrite every JSON beside it. The run still ends with the wrong
    map refuted (exit 1), its complete result at the named fallback, the forgers killed and
    listed before anything was written, and the result unchanged after the command returned."""
    json_path, pids_file = tmp_path / containment_targets.JSON_PATH, tmp_path / containment_targets.PIDS
    out = json_path.parent
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "orthoverify", "validate", T + "attacks_the_result", "--kind", "householder-product"]
    argv += ["--profile", "quick", "--dtype", "float64", "--json", str(json_path), "--memory-limit", "4G"]
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400, check=False)
    assert proc.returncode == 1, proc.stderr[-2000:]
    pids = _pids(pids_file, 2, wait=1.0)
    assert not any(_alive(p) for p in pids), "a forger outlived validate"
    fallbacks = sorted(out.glob("*" + FALLBACK_SUFFIX))
    assert len(fallbacks) == 1 and str(fallbacks[0]) in proc.stderr and "cannot write" in proc.stderr, proc.stderr
    text = fallbacks[0].read_text()
    time.sleep(1.0)  # a forger still alive would have rewritten it by now
    assert fallbacks[0].read_text() == text
    data = json.loads(text)
    assert data["summary"]["refuted"] >= 1 and len(data["claims"]) == sum(data["summary"].values())
    assert data["validate"]["memory_limit"] == 4 * 2**30
    left = data["validate"]["left_behind"]
    assert len(left) == 2 and all(any(f"pid {p}:" in x for x in left) for p in pids), left
    assert "left 2 process(es) behind" in proc.stderr


def _forging(pid: int) -> bool:
    """Whether ``pid`` is a live forger (alive, and its command line is the forger's: not a reused pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return _alive(pid) and b"forged" in cmdline


@pytest.mark.slow  # the command line end to end, 6 to 15 s: the full suite (CI) runs it
def test_a_forger_orphaned_by_a_dying_target_is_killed_and_listed(tmp_path: Path) -> None:
    """A target whose first call leaves a forger in a session of its own, without the run's token,
    orphaned twice (its parent, then the target's process, exit): nothing the verifier started is
    its parent, and it is not in the target's session or group. The warden above the target's
    process holds it all the same: when ``validate`` returns it is dead and listed, and the result
    JSON is the verifier's and stays so. (Before the warden: alive, unlisted, and it rewrote the
    JSON after the command had returned.)"""
    json_path, pids_file = tmp_path / containment_targets.JSON_PATH, tmp_path / containment_targets.PIDS
    json_path.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "orthoverify", "validate", T + "escapes_by_dying", "--kind", "householder-product"]
    argv += ["--profile", "quick", "--dtype", "float64", "--json", str(json_path)]
    printed = tmp_path / "stderr"
    with printed.open("w") as stderr:  # a file, not a pipe: a forger that survived would hold a pipe open
        proc = subprocess.run(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr, timeout=400)
    assert proc.returncode == 1, printed.read_text()[-2000:]
    (pid,) = [int(x) for x in pids_file.read_text().split()]  # written before the target's process exited
    text = json_path.read_text(encoding="utf-8")
    assert not _forging(pid), f"the forger {pid} outlived validate"
    assert json_path.read_text(encoding="utf-8") == text  # read again once the forger is known dead
    data = json.loads(text)
    assert "forged" not in data and data["summary"]["refuted"] >= 1, data.get("summary")
    assert len(data["claims"]) == sum(data["summary"].values())
    left = data["validate"]["left_behind"]
    assert len(left) == 1 and f"pid {pid}:" in left[0], left
    assert "exit status 3" in text, "the target's own exit status is the finding"


VERIFIER_KILLED = """
import os, signal, sys, threading, time
import torch
from orthoverify.isolation.isolate import ProcessRunner
from orthoverify.isolation.wire import op_forward
runner = ProcessRunner("tests.planted.conformance_targets:hangs", "orthogonal-map")
runner.start()
print(runner.proc.pid, runner.target, flush=True)
threading.Thread(target=runner.request, args=(op_forward, [torch.eye(3)], {}, 600.0, "cpu"), daemon=True).start()
time.sleep(1.0)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_target_hung_in_a_call_dies_with_a_verifier_killed_by_sigkill(tmp_path: Path) -> None:
    """No clean-up runs in a verifier killed with SIGKILL, and the forkserver the target came from
    lives on while the target does: the warden's watch thread kills what is below it, and itself."""
    printed = tmp_path / "stdout"
    with printed.open("w") as stdout:  # a file, not a pipe: the forkserver inherits it and outlives the verifier
        proc = subprocess.run(
            [sys.executable, "-c", VERIFIER_KILLED],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=tmp_path,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            timeout=300,
            check=False,
        )
    assert proc.returncode == -9, proc
    warden, target = (int(x) for x in printed.read_text().split())
    assert _gone([target, warden], wait=20.0), f"the target {target} or its warden {warden} outlived its verifier"
