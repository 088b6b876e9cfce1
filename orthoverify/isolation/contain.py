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
machine). The warden also measures, every :data:`POLL_SECONDS`, the memory of all the processes
below it together (:class:`_MemoryWatch`: anonymous and shared memory, ``RssAnon`` and
``RssShmem``, made exact as ``Pss_Anon`` and ``Pss_Shmem`` before it acts, so pages forked
processes share count once); over the same cap, it says so to the verifier (:data:`MEMORY_NOTE`)
and kills them all. When the verifier stops it, :func:`sweep` finds every process below the warden, in its
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

POLL_SECONDS = 0.05
"""Seconds between two measures of the memory of the processes below the warden."""

_RESCAN_SECONDS = 2.0
"""Seconds between two full walks of /proc for the processes below the warden (a process started
meanwhile is found sooner: its pid lies between two readings of /proc/loadavg's last pid)."""

_NEW_PIDS = 512
"""New pids looked at one by one at most; more (or a wrap of the pid counter): a full walk."""

_EXACT_SECONDS = 0.25
"""Seconds before the exact measure is taken again after one that found the processes under the cap."""

MEMORY_NOTE = "memory"
"""How the warden's message to the verifier starts when it killed the target's processes for
memory: ``memory BYTES COUNT`` (what they held together, and how many they were)."""


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
    at ``memory_limit`` bytes (None: no cap); a warden also holds all the processes below it to
    that many bytes together (:class:`_MemoryWatch`, which reports on ``told``)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()
    os.environ[TOKEN_VAR] = token
    warden = os.getpid()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    child = os.fork() if _subreaper() else 0
    if child:
        _tell(told, child, keep=memory_limit is not None)  # kept: where the memory watch reports
        for conn in leave:
            with contextlib.suppress(OSError):
                conn.close()
        _keep(child, verifier, memory_limit, told)
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


def _tell(told: Any, pid: int | None, keep: bool = False) -> None:
    """Send ``pid`` (unless None) on the connection ``told`` (if any), and close it (unless ``keep``)."""
    if told is None:
        return
    with contextlib.suppress(OSError):
        if pid is not None:
            told.send_bytes(str(pid).encode())
        if not keep:
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


def _keep(child: int, verifier: int | None, memory_limit: int | None = None, told: Any = None) -> NoReturn:
    """The warden's life: reap whatever is below it (orphans come to it) until nothing is left,
    then exit as its child ``child``, the target's process, did. Told to end (SIGTERM), or once the
    verifier's process ``verifier`` is gone, it kills everything below it first; so it does when
    they hold more than ``memory_limit`` bytes together (:class:`_MemoryWatch`, telling ``told``)."""

    def end(signum: int = signal.SIGTERM, frame: object = None) -> None:
        _end_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, end)
    if verifier is not None:
        threading.Thread(target=_watch, args=(verifier, end), daemon=True, name="orthoverify-watch").start()
    if memory_limit is not None and os.path.exists(f"/proc/{os.getpid()}/status"):
        watch = _MemoryWatch(os.getpid(), memory_limit, told)
        threading.Thread(target=watch.run, daemon=True, name="orthoverify-memory").start()
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


def _end_below(reap: bool = True) -> None:
    """SIGKILL every process below this one, again until none runs (one forked meanwhile is found
    in the next round); zombies are reaped (unless not ``reap``: the warden's main thread does)."""
    me = os.getpid()
    for _ in range(_ROUNDS):
        below = _below(me, _own_processes())
        for p in below:
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while reap and os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if all(p.state in "ZX" for p in below):  # killed once, a process that looks dead is
            return
        time.sleep(0.01)


class _MemoryWatch:
    """The warden's watch over the memory of all the processes below it (``root``, the warden,
    not counted), every :data:`POLL_SECONDS`: their anonymous and shared memory together, against
    ``cap`` bytes. A cheap measure first, ``RssAnon`` + ``RssShmem`` from /proc/PID/status of the
    processes known to be below (a page forked processes share counts once per process, so it can
    only say too much); where that is over the cap, the exact one: the processes below found
    afresh, each one's ``Pss_Anon`` + ``Pss_Shmem`` from /proc/PID/smaps_rollup (a shared page
    split between those that map it). Over the cap, the warden tells the verifier on ``told``
    (:data:`MEMORY_NOTE`, what they held and how many they were) and kills them all, then the
    watch ends. Memory no process maps (a file in /dev/shm, say) is not counted."""

    def __init__(self, root: int, cap: int, told: Any) -> None:
        self.root, self.cap, self.told = root, cap, told
        self.known: set[int] = set()
        self.last_pid = _last_pid()
        self.rescan_at = 0.0  # a full walk at once
        self.exact_at = 0.0

    def run(self) -> None:
        while True:
            time.sleep(POLL_SECONDS)
            try:
                if self.over():
                    return
            except Exception:  # a watch that fails must not take the warden with it
                traceback.print_exc()
                return

    def over(self) -> bool:
        """One measure; True once the processes were over the cap (and are killed)."""
        now = time.monotonic()
        self._find(now)
        if sum(_status_bytes(pid)[1] for pid in list(self.known)) <= self.cap or now < self.exact_at:
            return False
        below = [p.pid for p in _below(self.root, _own_processes()) if p.state not in "ZX"]
        self.known = set(below)
        held = sum(_exact_bytes(pid) for pid in below)
        if held <= self.cap:
            self.exact_at = now + _EXACT_SECONDS
            return False
        with contextlib.suppress(Exception):
            self.told.send_bytes(f"{MEMORY_NOTE} {held} {len(below)}".encode())
        _end_below(reap=False)
        return True

    def _find(self, now: float) -> None:
        """Bring ``known`` up to date: a full walk every :data:`_RESCAN_SECONDS`, else the pids
        created since the last look, each below the warden where its parent is."""
        last = _last_pid()
        fresh = range(self.last_pid + 1, last + 1) if self.last_pid is not None and last is not None else range(0)
        if now >= self.rescan_at or (last is not None and last != self.last_pid and not 0 < len(fresh) <= _NEW_PIDS):
            self.known = {p.pid for p in _below(self.root, _own_processes())}
            self.rescan_at = now + _RESCAN_SECONDS
        else:
            for pid in fresh:  # in the order they were created: a parent before its child
                tgid, parent = _status_bytes(pid)[0]
                if tgid == pid and (parent == self.root or parent in self.known):
                    self.known.add(pid)
        self.last_pid = last


def _last_pid() -> int | None:
    """The pid most recently given to a process or thread (the last field of /proc/loadavg)."""
    try:
        return int(read_regular("/proc/loadavg", 256, prefix=True).split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _kib(text: bytes, *names: bytes) -> dict[bytes, int]:
    """The fields ``names`` of a /proc file of ``Name: value`` lines (in kB where a size)."""
    out: dict[bytes, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(b":")
        if name in names:
            with contextlib.suppress(ValueError, IndexError):
                out[name] = int(value.split()[0])
    return out


def _status_bytes(pid: int) -> tuple[tuple[int, int], int]:
    """((its thread group, its parent), the bytes of anonymous and shared memory it holds) of the
    process (or thread) ``pid``, from /proc/PID/status; ((0, 0), 0) where it is gone."""
    try:
        text = read_regular(f"/proc/{pid}/status", 16384, prefix=True)
    except OSError:
        return (0, 0), 0
    f = _kib(text, b"Tgid", b"PPid", b"RssAnon", b"RssShmem")
    return (f.get(b"Tgid", 0), f.get(b"PPid", 0)), 1024 * (f.get(b"RssAnon", 0) + f.get(b"RssShmem", 0))


def _exact_bytes(pid: int) -> int:
    """The anonymous and shared memory of process ``pid``, each page shared with other processes
    counted by its share (``Pss_Anon`` + ``Pss_Shmem``; where the kernel does not say, its
    ``RssAnon`` + ``RssShmem``); 0 where it is gone."""
    try:
        f = _kib(read_regular(f"/proc/{pid}/smaps_rollup", 16384, prefix=True), b"Pss_Anon", b"Pss_Shmem")
    except OSError:
        f = {}
    if b"Pss_Anon" not in f:
        return _status_bytes(pid)[1]
    return 1024 * (f[b"Pss_Anon"] + f.get(b"Pss_Shmem", 0))


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
