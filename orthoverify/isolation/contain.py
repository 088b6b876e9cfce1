"""Containing a target's process: its own session, a memory cap, and no process left behind.

What this promises, and what not: the target runs as the user, with the user's files and network;
it is not a sandbox. What it adds: the target's process leads a session and process group of its
own (the terminal's Ctrl-C does not reach it, the verifier kills the group), it is a child
subreaper (a process it starts and orphans stays its child while it lives, even after ``setsid``),
its group is killed from inside when the verifier's process ends (even by SIGKILL),
every process it starts carries a token in its environment, and its data segment is capped
(``RLIMIT_DATA``; exhaustion is then an allocation that fails, a finding, not a full machine).
When the verifier stops it, :func:`sweep` finds every process that descends from it, shares its
session or group, or carries its token, kills them, and names them: the run's result lists them.
A process that leaves the session, drops the token and is orphaned after its parent died can
still escape; so can anything the user's account can do.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from dataclasses import dataclass

from orthoverify._files import read_regular
from orthoverify._text import printable

TOKEN_VAR = "ORTHOVERIFY_TARGET_RUN"
"""The environment variable whose value marks the processes of one target run."""

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 50
"""Sweeps at most (a process forking while it is killed is found again in the next round)."""


def confine(memory_limit: int | None, token: str, verifier: int | None = None) -> None:
    """Called first in the target's process: a session and group of its own, subreaper of what it
    starts, a thread that kills its group when the process ``verifier`` ends, the run's token in
    the environment, the data segment capped at ``memory_limit`` bytes (None: no cap). Each step
    is skipped where the system lacks it."""
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if verifier is not None:
        threading.Thread(target=_watch, args=(verifier,), daemon=True, name="orthoverify-watch").start()
    os.environ[TOKEN_VAR] = token
    if memory_limit is not None:
        try:
            import resource
        except ImportError:  # not POSIX
            return
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        cap = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))  # the hard limit too: it cannot be raised back


def _watch(verifier: int) -> None:
    """Kill this process's group once the verifier is gone (killed with SIGKILL, say): a target
    hung in a call would otherwise run on (the forkserver it came from outlives the verifier while
    any of its children lives)."""
    first = _stat(verifier)
    if first is None:  # no /proc to watch it through (or gone already: the pipe's EOF ends the process)
        return
    while True:
        time.sleep(0.5)
        now = _stat(verifier)
        if now is None or now.start != first.start or now.state in "ZX":  # a zombie is dead, not yet reaped
            if os.getpgrp() == os.getpid():  # its own group (setsid worked): never the verifier's
                os.killpg(0, signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    state: str


def _stat(pid: int) -> _Proc | None:
    try:
        text = read_regular(f"/proc/{pid}/stat", 4096, prefix=True).decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name, in parentheses, may hold anything
    try:
        return _Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), fields[0])
    except (IndexError, ValueError):
        return None


def _own_processes() -> dict[int, _Proc]:
    uid = os.getuid()
    out: dict[int, _Proc] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
        except OSError:
            continue
        p = _stat(int(name))
        if p is not None:
            out[p.pid] = p
    return out


def _has_token(pid: int, token: str) -> bool:
    try:
        env = read_regular(f"/proc/{pid}/environ", 1 << 20, prefix=True)
    except OSError:
        return False
    return f"{TOKEN_VAR}={token}".encode() in env.split(b"\0")


def describe(pid: int) -> str:
    """``pid 123: python grandchild.py`` (the command line, control characters escaped, shortened)."""
    try:
        raw = read_regular(f"/proc/{pid}/cmdline", 4096, prefix=True)
    except OSError:
        raw = b""
    cmd = printable(raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace"), newlines=False)[:160]
    return f"pid {pid}: {cmd or '(no command line)'}"


def members(root: int, token: str) -> list[_Proc]:
    """The processes of the target whose process is ``root`` (itself excluded): its descendants,
    those in its session or group, those carrying ``token``, and their descendants."""
    procs = _own_processes()
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    found = {p.pid for p in procs.values() if root in (p.sid, p.pgid)}
    found |= {pid for pid in procs if pid not in found and pid != root and _has_token(pid, token)}
    stack = [root, *found]
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in found:
                found.add(c)
                stack.append(c)
    mine = {os.getpid(), os.getppid(), root}
    return [procs[pid] for pid in sorted(found - mine)]


def sweep(root: int, token: str, seen: set[tuple[int, int]] | None = None) -> list[str]:
    """Kill every process of the target rooted at ``root`` but ``root`` itself (see
    :func:`members`), again until none is left; returns them, described, but those in ``seen``
    (pid and start time of the processes earlier sweeps killed: a zombie now, or still freeing its
    memory; killed again, never listed again), to which it adds the ones it lists. A process whose
    /proc entry says zombie is killed all the same: that is also how a process looks whose main
    thread exited while its other threads run on."""
    seen = set() if seen is None else seen
    killed: dict[tuple[int, int], str] = {}
    for _ in range(_ROUNDS):
        fresh = [p for p in members(root, token) if (p.pid, p.start) not in killed]
        if not fresh:
            break
        for p in fresh:
            now = _stat(p.pid)
            if now is None or now.start != p.start:  # gone, or its pid reused since
                continue
            text = describe(p.pid)
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
                killed[(p.pid, p.start)] = text
        time.sleep(0.01)
    listed = [text for key, text in killed.items() if key not in seen]
    seen.update(killed)
    return listed


def kill_group(pgid: int) -> None:
    """SIGKILL to the process group ``pgid`` (the target's, which leads it), if any is left."""
    with contextlib.suppress(OSError, AttributeError):
        os.killpg(pgid, signal.SIGKILL)
