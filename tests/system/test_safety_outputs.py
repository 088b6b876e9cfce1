"""Fault injection on outputs (issue 17): a run killed at any moment leaves the previous outputs or
the new ones, never a 0-byte file or a mix of the two sets; SIGINT/SIGTERM stop the pool's workers
and exit 130/143 with one line.

The moments are chosen deterministically: a driver process runs the CLI with the atomic writer
patched to send itself SIGTERM at the k-th staged file or at the k-th rename. A real-time kill of a
pool run checks that no worker process survives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from orthoverify import _atomic
from orthoverify.report import plan_report, render_report

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and /proc are POSIX")

DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    from orthoverify import _atomic
    when, k = sys.argv[1], int(sys.argv[2])
    count = {"stage": 0, "replace": 0}
    stage, replace = _atomic._stage, os.replace
    def kill_at(what):
        count[what] += 1
        if count[what] == k:
            os.kill(os.getpid(), signal.SIGTERM)
    def staged(*a, **kw):
        if when == "stage":
            kill_at("stage")
        return stage(*a, **kw)
    def replaced(*a, **kw):
        if when == "replace":
            kill_at("replace")
        return replace(*a, **kw)
    _atomic._stage = staged
    _atomic.os.replace = replaced
    from orthoverify.cli import main
    sys.exit(main(sys.argv[3:]))
    """
)


def _subset(tmp_path: Path, name: str, ids: list[str]) -> Path:
    """A small result file: the committed reference restricted to ``ids``."""
    data = json.loads(REFERENCE.read_text())
    data["claims"] = [c for c in data["claims"] if c["id"] in ids]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def _with_figures(n: int, skip: int = 0) -> list[str]:
    """Ids of ``n`` reference claims that have a per-claim figure (so old and new sets differ)."""
    data = json.loads(REFERENCE.read_text())
    out = []
    for c in data["claims"]:
        if any(len((ev.get("data") or {}).get("by_n") or []) >= 2 for ev in c["evidence"]):
            out.append(c["id"])
    return out[skip : skip + n]


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def two_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("results")
    return _subset(tmp, "old", _with_figures(2)), _subset(tmp, "new", _with_figures(2, skip=2))


def _expected(result: Path, out: Path) -> dict[str, str]:
    """The files `orthoverify report RESULT --out OUT --name r` writes, computed without writing."""
    plan = plan_report([str(result)], out_dir=out, name="r", notify=lambda _message: None)
    return {str(p.relative_to(out)): c for p, c in plan.files.items()}


def _kill_report_at(tmp_path: Path, two_results: tuple[Path, Path], when: str, k: int) -> None:
    old, new = two_results
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["report", "--out", str(out), "--name", "r"]
    render_report([old], out_dir=out, name="r")
    before = _snapshot(out)
    assert before == _expected(old, out)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, when, str(k), *args, str(new)], env=env, capture_output=True, text=True
    )
    after = _snapshot(out)
    new_set = _expected(new, out)
    assert after in (before, new_set), f"a mix after SIGTERM at {when} #{k}: {sorted(set(after) ^ set(new_set))}"
    assert all(after.values()), "a 0-byte file"
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")], "staged temporaries left behind"
    if proc.returncode == 0:  # the k-th moment never came: the run finished
        assert after == new_set
    else:
        assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
        lines = proc.stderr.strip().splitlines()  # the announced replacement of the old report, then one line
        assert lines[-1] == "orthoverify: terminated by SIGTERM; the workers are stopped and no output is half-written"
        assert all(ln.startswith("orthoverify: warning: replacing ") for ln in lines[:-1]), proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("when", "k"), [("stage", 3), ("replace", 2)])
def test_sigterm_while_writing_a_report_leaves_old_or_new_set(
    tmp_path: Path, two_results: tuple[Path, Path], when: str, k: int
) -> None:
    _kill_report_at(tmp_path, two_results, when, k)


@pytest.mark.slow
def test_sigterm_at_every_staged_file(tmp_path: Path, two_results: tuple[Path, Path]) -> None:
    n = len(_expected(two_results[1], tmp_path / "out"))
    for k in range(1, n + 2):
        _kill_report_at(tmp_path / f"k{k}", two_results, "stage", k)


def test_write_files_commits_a_set_and_removes_stale_only_after(tmp_path: Path) -> None:
    a, b, stale = tmp_path / "d" / "a.txt", tmp_path / "b.txt", tmp_path / "d" / "stale.svg"
    _atomic.write_files({a: "old a", b: "old b", stale: "old"})
    with pytest.raises(IsADirectoryError):  # staging fails on the second file: nothing changes
        _atomic.write_files({a: "new a", tmp_path / "d": "x"}, remove=[stale])
    assert a.read_text() == "old a" and stale.exists()
    assert not list(tmp_path.rglob("*.tmp"))
    _atomic.write_files({a: "new a", b: b"new b"}, remove=[stale, a])  # a new file is never removed
    assert a.read_text() == "new a" and b.read_text() == "new b" and not stale.exists()


def test_result_json_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"previous": true}\n')

    def fail(*_a: Any, **_k: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(_atomic.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        _atomic.write_text(path, "{}")
    assert path.read_text() == '{"previous": true}\n' and not list(tmp_path.glob(".*.tmp"))


def _alive_with(marker: str) -> list[int]:
    pids = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"ORTHOVERIFY_TEST_MARK={marker}".encode() in env.read_bytes():
                pids.append(int(env.parent.name))
        except OSError:
            continue
    return pids


def _interrupted(argv: list[str], env: dict[str, str], sig: signal.Signals, ready: tuple[str, ...]) -> tuple[int, str]:
    """Run ``argv`` in its own process group, wait for stderr lines starting with ``ready`` (one
    each), then send ``sig``: SIGINT to the whole group, as a terminal's Ctrl-C (the parent and its
    workers), SIGTERM to the parent. Returns the exit status and the rest of stderr."""
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stderr is not None
        for start in ready:
            line = proc.stderr.readline()
            assert line.startswith(start), line
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, rest


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds worker processes through /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_pool_workers(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGTERM to the parent (or Ctrl-C to the whole group) while the pool's workers run checks:
    exit 143/130, one line, no traceback, no worker left, the previous JSON untouched."""
    marker = uuid.uuid4().hex
    path = tmp_path / "r.json"
    path.write_text('{"previous": true}\n')
    env = {**os.environ, "ORTHOVERIFY_TEST_MARK": marker, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "orthoverify", "check", "cayley.*", "--profile", "quick", "--workers", "2"]
    # two results came back: the workers are up and running checks
    code, rest = _interrupted([*cmd, "--json", str(path)], env, sig, ready=("[", "["))
    assert code == 128 + sig, rest
    assert "Traceback" not in rest
    assert rest.strip().splitlines()[-1].startswith("orthoverify: ")
    assert not [ln for ln in rest.splitlines() if not ln.startswith(("[", "orthoverify: "))], rest
    assert path.read_text() == '{"previous": true}\n'
    assert _alive_with(marker) == [], "worker processes outlived the run"


def test_garbage_semaphores_are_released_before_the_resource_tracker_stops() -> None:
    """An interrupted run ends by stopping multiprocessing's resource tracker. A pool's semaphore
    still in uncollected garbage was once finalized by a collection during that stop: its finalizer
    wrote to the tracker's closed pipe and a traceback landed on stderr (CPython gh-109629; seen once
    in the SIGINT test). Garbage is collected first, so the semaphore is released while the tracker
    still listens, and collection stays off until the process ends."""
    script = textwrap.dedent(
        """
        import gc, multiprocessing as mp
        from multiprocessing import resource_tracker as rt
        from orthoverify.cli import _stop_resource_tracker
        tracker, order = rt._resource_tracker, []
        stop, unregister = tracker._stop, rt.unregister
        tracker._stop = lambda: (order.append("stop"), stop())
        rt.unregister = lambda name, kind: (order.append("release"), unregister(name, kind))
        sem = mp.get_context("spawn").Semaphore()
        cycle = [sem]
        cycle.append(cycle)
        del sem, cycle
        _stop_resource_tracker()
        print(order, gc.isenabled())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.split() == ["['release',", "'stop']", "False"], done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_validate_exits_with_one_line(tmp_path: Path, sig: signal.Signals) -> None:
    """validate runs the target's calls in a thread; interrupted while one runs inside torch, the
    process once aborted at shutdown (status -6, 'terminate called without an active exception')."""
    path = tmp_path / "v.json"
    cmd = [sys.executable, "-m", "orthoverify", "validate", "orthoverify-householder", "--executor", "serial"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # the checks start after this line (they take seconds)
    code, rest = _interrupted([*cmd, "--json", str(path)], env, sig, ready=("executor: serial",))
    assert code == 128 + sig, rest
    what = "terminated by SIGTERM" if sig == signal.SIGTERM else "interrupted by SIGINT"
    assert rest.strip().splitlines() == [f"orthoverify: {what}; the workers are stopped and no output is half-written"]
    assert not path.exists()
