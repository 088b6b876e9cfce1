"""Containing a target's process: its own session, a memory cap, and no process left behind.

What this promises, and what not: the target runs as the user, with the user's files and network;
it is not a sandbox. What it adds (:func:`contain`): on Linux a warden process, which runs no
target code, leads a session and process group of its own (the terminal's Ctrl-C does not reach
it, the verifier kills the group) and is a child subreaper; the target's process is its child, in
its group. A process the target starts and orphans, even after ``setsid`` and after the target's
process itself exited, is re-parented to the warden, so it stays below the warden until the
verifier has swept it. The warden kills everything below it when the verifier's process ends
(even by SIGKILL) or when it is told to end (SIGTERM); the target's process dies with the warden.
Every process the target starts carries a token in its environment, and its data segment is
capped (``RLIMIT_DATA``; exhaustion is then an allocation that fails, a finding, not a full
machine). When the verifier stops it, :func:`sweep` finds every process below the warden, in its
session or group, or carrying the token, kills them, and names them: the run's result lists them.
What can still escape: a process that kills the warden first (it runs as the same user) and then
leaves the session, drops the token and is orphaned; anything the user's account can do
(``systemd-run``, ``at``, ``ssh``). Where there is no ``prctl`` (not Linux), there is no warden:
the target's process leads its session itself, and an orphan that leaves it escapes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from orthoverify._files import read_regular
from orthoverify._text import printable

TOKEN_VAR = "ORTHOVERIFY_TARGET_RUN"
"""The environment variable whose value marks the processes of one target run."""

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 50
"""Sweeps at most (a process forking while it is killed is found again in the next round)."""


def contain(
    run: Callable[[], None],
    told: Any,
    memory_limit: int | None,
    token: str,
    verifier: int | None = None,
    leave: Sequence[Any] = (),
) -> None:
    """Run ``run`` (the target's program) as the target's process, contained. Where the system has
    ``fork`` and a child subreaper (Linux), this process becomes the warden: it forks the target's
    process, tells its pid on the connection ``told`` (closed there before the target runs), closes
    the connections ``leave`` (the target's own: so that its death is their end), and holds
    everything below it until the verifier ends it (:func:`_keep`; it never returns). Elsewhere
    this process is the target's: it tells its own pid and runs ``run`` itself. Either way the
    target's process runs with the run's ``token`` in its environment and its data segment capped
    at ``memory_limit`` bytes (None: no cap)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()
    os.environ[TOKEN_VAR] = token
    warden = os.getpid()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    child = os.fork() if _subreaper() else 0
    if child:
        _tell(told, child)
        for conn in leave:
            with contextlib.suppress(OSError):
                conn.close()
        _keep(child, verifier)
    if os.getpid() == warden:  # no warden: this process is the target's, and watches the verifier
        _tell(told, warden)
        if verifier is not None:
            threading.Thread(target=_watch, args=(verifier, _end_group), daemon=True, name="orthoverify-watch").start()
        _cap(memory_limit)
        run()
        return
    _tell(told, None)  # the warden tells; the target's process cannot
    with contextlib.suppress(OSError, AttributeError):  # dies with the warden (it is killed last)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != warden:  # the warden died before that was set
        os._exit(1)
    _cap(memory_limit)
    _finish(run)


def _tell(told: Any, pid: int | None) -> None:
    """Send ``pid`` (unless None) on the connection ``told`` (if any), and close it."""
    if told is None:
        return
    with contextlib.suppress(OSError):
        if pid is not None:
            told.send_bytes(str(pid).encode())
        told.close()


def _subreaper() -> bool:
    """Make this process a child subreaper (True), where the system can (Linux) and has ``fork``."""
    if not hasattr(os, "fork"):
        return False
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _cap(memory_limit: int | None) -> None:
    """The data segment capped at ``memory_limit`` bytes, the hard limit too (it cannot be raised back)."""
    if memory_limit is None:
        return
    try:
        import resource
    except ImportError:  # not POSIX
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


def _finish(run: Callable[[], None]) -> NoReturn:
    """Run ``run`` in a forked process and end it as multiprocessing ends its own: status 0, the
    code of a SystemExit, or 1 after printing the exception. Never returns into the code it was
    forked from."""
    code = 1
    try:
        run()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _keep(child: int, verifier: int | None) -> NoReturn:
    """The warden's life: reap whatever is below it (orphans come to it) until nothing is left,
    then exit as its child ``child``, the target's process, did. Told to end (SIGTERM), or once the
    verifier's process ``verifier`` is gone, it kills everything below it first."""

    def end(signum: int = signal.SIGTERM, frame: object = None) -> None:
        _end_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, end)
    if verifier is not None:
        threading.Thread(target=_watch, args=(verifier, end), daemon=True, name="orthoverify-watch").start()
    status: int | None = None
    while True:
        try:
            pid, got = os.waitpid(-1, 0)
        except ChildProcessError:  # nothing below: nothing can come to it any more
            break
        if pid == child:
            status = got
    code = os.waitstatus_to_exitcode(status) if status is not None else 1
    if code < 0:  # killed by a signal: so is the warden (without a core file)
        with contextlib.suppress(Exception):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def _end_below() -> None:
    """SIGKILL every process below this one, again until none runs (one forked meanwhile is found
    in the next round); zombies are reaped."""
    me = os.getpid()
    for _ in range(_ROUNDS):
        below = _below(me, _own_processes())
        for p in below:
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if all(p.state in "ZX" for p in below):  # killed once, a process that looks dead is
            return
        time.sleep(0.01)


def _end_group() -> None:
    """Kill this process's group (where it leads its own: never the verifier's), then itself."""
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _watch(verifier: int, end: Callable[[], object]) -> None:
    """Call ``end`` once the verifier is gone (killed with SIGKILL, say): a target hung in a call
    would otherwise run on (the forkserver it came from outlives the verifier while any of its
    children lives)."""
    first = _stat(verifier)
    if first is None:  # no /proc to watch it through (or gone already: the pipe's EOF ends the process)
        return
    while True:
        time.sleep(0.5)
        now = _stat(verifier)
        if now is None or now.start != first.start or now.state in "ZX":  # a zombie is dead, not yet reaped
            end()
            return


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


def _runs(pid: int) -> bool:
    """Whether a thread of ``pid`` runs: a process whose main thread exited while others run on
    looks like a zombie in /proc/PID/stat, and is not one."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            text = read_regular(f"/proc/{pid}/task/{tid}/stat", 4096, prefix=True).decode(errors="replace")
        except OSError:
            continue
        state = text[text.rfind(")") + 2 : text.rfind(")") + 3]
        if state and state not in "ZX":
            return True
    return False


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


def _below(root: int, procs: dict[int, _Proc]) -> list[_Proc]:
    """The processes of ``procs`` that descend from ``root``."""
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in found:
                found.add(c)
                stack.append(c)
    return [procs[pid] for pid in sorted(found)]


def members(root: int, token: str, spare: int | None = None) -> list[_Proc]:
    """The processes of the target whose warden (or, without one, whose process) is ``root``: its
    descendants, those in its session or group, those carrying ``token``, and their descendants;
    neither ``root`` nor ``spare`` (the target's process below a warden) among them."""
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
    mine = {os.getpid(), os.getppid(), root, spare}
    return [procs[pid] for pid in sorted(found - mine)]


def sweep(root: int, token: str, seen: set[tuple[int, int]] | None = None, spare: int | None = None) -> list[str]:
    """Kill every process of the target rooted at ``root`` but ``root`` and ``spare`` (see
    :func:`members`), again until none is left; returns them, described, but those in ``seen``
    (pid and start time of the processes earlier sweeps killed: a zombie now, or still freeing its
    memory; killed again, never listed again), to which it adds the ones it lists. A process whose
    /proc entry says zombie is killed all the same if any of its threads runs (so looks a process
    whose main thread exited while others run on); a real zombie, dead and not yet reaped (by the
    warden, say), is neither killed nor listed."""
    seen = set() if seen is None else seen
    killed: dict[tuple[int, int], str] = {}
    dead: set[tuple[int, int]] = set()
    for _ in range(_ROUNDS):
        fresh = [
            p for p in members(root, token, spare) if (p.pid, p.start) not in dead and (p.pid, p.start) not in killed
        ]
        if not fresh:
            break
        for p in fresh:
            now = _stat(p.pid)
            if now is None or now.start != p.start:  # gone, or its pid reused since
                continue
            if now.state in "ZX" and not _runs(p.pid):  # dead (exited, its parent has not reaped it yet)
                dead.add((p.pid, p.start))
                continue
            text = describe(p.pid)
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
                killed[(p.pid, p.start)] = text
        time.sleep(0.01)
    listed = [text for key, text in killed.items() if key not in seen]
    seen.update(killed)
    return listed


def kill_child(parent: int, pid: int) -> None:
    """SIGKILL to ``pid`` if it is ``parent`` or a child of it (not a pid reused since)."""
    p = _stat(pid)
    if p is not None and (pid == parent or p.ppid == parent):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def kill_group(pgid: int) -> None:
    """SIGKILL to the process group ``pgid`` (the target's, which leads it), if any is left."""
    with contextlib.suppress(OSError, AttributeError):
        os.killpg(pgid, signal.SIGKILL)
