"""Targets that attack the verifier's containment (issue 26): each is a wrong map (the negated
reflection, refuted) that also leaves processes behind, takes the result's path, or eats memory.

The paths they attack are relative to the working directory (the verifier's, which the target's
process starts in): JSON_PATH (the test's ``--json`` path) and PIDS (a file where each process it
starts writes its pid). Not the environment: a forkserver started by an earlier test keeps its own.
"""

from __future__ import annotations

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
