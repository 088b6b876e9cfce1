"""Targets that attack the verifier's containment (issue 26): each is a wrong map (the negated
reflection, refuted) that also leaves processes behind, takes the result's path, or eats memory.

The paths they attack are relative to the working directory (the verifier's, which the target's
process starts in): JSON_PATH (the test's ``--json`` path) and PIDS (a file where each process it
starts writes its pid). Not the environment: a forkserver started by an earlier test keeps its own.
"""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from tests.planted.conformance_targets import householder, householder_wrong_sign

JSON_PATH = "out/v.json"
PIDS = "pids"

_STARTED: list[int] = []

FORGER = """
import json, os, sys, time
path, pids = sys.argv[1], sys.argv[2]
with open(pids, "a") as f:
    f.write(f"{os.getpid()}\\n")
end = time.time() + (float(sys.argv[3]) if len(sys.argv) > 3 else 120)
while time.time() < end:  # rewrite every result JSON beside the path to all-verified
    folder = os.path.dirname(path) or "."
    try:
        for name in os.listdir(folder):
            p = os.path.join(folder, name)
            if name.endswith(".json") and os.path.isfile(p):
                with open(p, "w") as f:
                    json.dump({"forged": True, "summary": {"verified": 99}}, f)
    except OSError:
        pass
    time.sleep(0.1)
"""


def leaves_forgers(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection; on its first call it starts two forgers that outlive it and rewrite
    the result JSON: a double-forked, setsid grandchild and a new-session subprocess with an empty
    environment."""
    if not _STARTED:
        _STARTED.append(1)
        path, pids = os.path.abspath(JSON_PATH), os.path.abspath(PIDS)
        subprocess.Popen(
            [sys.executable, "-c", FORGER, path, pids],
            start_new_session=True,
            env={},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        pid = os.fork()
        if pid == 0:  # the intermediate: a new session, a grandchild, then gone
            try:
                os.setsid()
                if os.fork() == 0:
                    sys.argv = ["forger", path, pids]
                    exec(compile(FORGER, "forger", "exec"), {"__name__": "forger"})
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    return householder_wrong_sign(u)


def takes_the_json_path(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection; on its first call it turns the ``--json`` path into a folder."""
    path = Path(JSON_PATH)
    if not path.is_dir():
        path.unlink(missing_ok=True)
        path.mkdir(parents=True)
    return householder_wrong_sign(u)


HOARD_BYTES = 2 * 2**30
"""What :func:`hoards` tries to hold (touched, so it is really taken): under a cap of 768 MiB it fails."""


def hoards(u: torch.Tensor) -> torch.Tensor:
    """Takes HOARD_BYTES of memory in 64 MiB blocks (then lets go), and returns the right answer."""
    blocks = [torch.ones(2**26, dtype=torch.uint8) for _ in range(HOARD_BYTES // 2**26)]
    del blocks
    return householder(u)


SHARED_CAP = 400 * 2**20
"""The --memory-limit the targets below are run under: each process they start stays under it (so
its data segment cap never stops it), all of them together do not."""

TAKER = """
import os, sys, time
with open(sys.argv[3], "a") as f:
    f.write(f"{os.getpid()}\\n")
held = b"\\x01" * int(sys.argv[1])  # written, so taken: resident, not merely reserved
time.sleep(float(sys.argv[2]))
"""


def hoards_across_children(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection, after (on each call) recording its pid and starting 3 processes that
    record theirs and each take 0.6 x SHARED_CAP (under the cap each, over it together), and
    waiting for them (60 s)."""
    with open(PIDS, "a") as f:
        f.write(f"{os.getpid()}\n")
    size, pids = str(int(0.6 * SHARED_CAP)), os.path.abspath(PIDS)
    takers = [
        subprocess.Popen([sys.executable, "-c", TAKER, size, "60", pids], stdin=subprocess.DEVNULL) for _ in range(3)
    ]
    for t in takers:
        t.wait()
    return householder_wrong_sign(u)


FORKS = 6
"""How many idle children :func:`forks_idle_children` forks on each call."""


def forks_idle_children(u: torch.Tensor) -> torch.Tensor:
    """The right map, after forking FORKS children (no exec: they share its pages, torch's
    included, copy-on-write) that sleep for a second and exit, and waiting for them. Each child's
    resident memory counts those shared pages again; together they hold little more than the
    target's process alone."""
    children = []
    for _ in range(FORKS):
        pid = os.fork()
        if pid == 0:
            time.sleep(1.0)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return householder(u)


def hoards_shared_memory(u: torch.Tensor) -> torch.Tensor:
    """Touches an anonymous shared mapping of 2 x SHARED_CAP (not in the data segment, so no
    RLIMIT_DATA stops it) and holds it for 60 s, then returns the negated reflection."""
    size = 2 * SHARED_CAP
    held = mmap.mmap(-1, size)  # MAP_SHARED | MAP_ANONYMOUS
    page = b"\x01" * 2**20
    for at in range(0, size, len(page)):
        held[at : at + len(page)] = page
    time.sleep(60)
    held.close()
    return householder_wrong_sign(u)


def attacks_the_result(u: torch.Tensor) -> torch.Tensor:
    """Both: leaves forgers behind and turns the ``--json`` path into a folder."""
    takes_the_json_path(u)
    return leaves_forgers(u)


def keeps_a_child(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection; on its first call it forks a child that sleeps (never reaped: killed,
    it stays a zombie of the target's process until that process ends)."""
    if not _STARTED:
        _STARTED.append(1)
        pid = os.fork()
        if pid == 0:
            with open(PIDS, "a") as f:
                f.write(f"{os.getpid()}\n")
            time.sleep(300)
            os._exit(0)
    return householder_wrong_sign(u)


HEADLESS = """
import ctypes, os, threading, time
with open("pids", "a") as f:
    f.write(f"{os.getpid()}\\n")
threading.Thread(target=time.sleep, args=(300,)).start()
ctypes.CDLL(None).pthread_exit(None)  # /proc/PID/stat now says zombie; the process runs on
"""


def leaves_a_headless_process(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection; on its first call it starts a process in a session of its own
    whose main thread exits while another runs on (/proc calls it a zombie, and it is not one)."""
    if not _STARTED:
        _STARTED.append(1)
        subprocess.Popen([sys.executable, "-c", HEADLESS], start_new_session=True, stdin=subprocess.DEVNULL)
    return householder_wrong_sign(u)


def escapes_by_dying(u: torch.Tensor) -> torch.Tensor:
    """The negated reflection; on its first call it leaves a forger that escapes every sign of the
    run: an intermediate in a new session forks it and exits, the forger records its pid (in PIDS,
    the mark that this was done: a process started again skips it) and drops the run's token from
    its environment, and then the target's own process exits (os._exit): the forger is orphaned
    twice, and no process the verifier knows of is its parent."""
    if not os.path.exists(PIDS):
        path = os.path.abspath(JSON_PATH)
        ready_r, ready_w = os.pipe()  # not inherited across exec: EOF once the forger has exec'd
        intermediate = os.fork()
        if intermediate == 0:
            try:
                os.close(ready_r)
                os.setsid()
                if os.fork() == 0:
                    with open(PIDS, "a") as f:
                        f.write(f"{os.getpid()}\n")
                    env = {k: v for k, v in os.environ.items() if not k.startswith("ORTHOVERIFY")}
                    os.execve(sys.executable, [sys.executable, "-c", FORGER, path, os.devnull, "900"], env)
            finally:
                os._exit(0)
        os.close(ready_w)
        os.read(ready_r, 1)  # EOF: the forger runs (its pid recorded)
        os.waitpid(intermediate, 0)  # its parent is gone
        os._exit(3)
    return householder_wrong_sign(u)
