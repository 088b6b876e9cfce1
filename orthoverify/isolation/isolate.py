"""Running a target where it can neither crash nor forge the verdict.

The target lives in a process of its own (multiprocessing's ``forkserver`` context, ``spawn``
where there is none), contained (:mod:`~orthoverify.isolation.contain`) and loaded there by
name, as the Dask executor path loads it. That process runs the fixed program of
:mod:`~orthoverify.isolation.program`, bound before the target is imported: it answers the
operations of :data:`~orthoverify.isolation.wire.OPERATIONS` with raw tensors; its answers are
read in the verifier's process (:mod:`~orthoverify.isolation.runner`), where every comparison,
ratio and verdict is computed (:mod:`orthoverify.conformance`). A process
that dies (``os._exit``, a segfault) or does not answer within the timeout (it is killed) is
started again for the next call; the failure is a
:class:`~orthoverify.isolation.calls.CallFailure` naming the exit status.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import selectors
import signal
import struct
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from orthoverify.errors import InputError, OrthoverifyError
from orthoverify.isolation import adapters_libs  # noqa: F401  (registers the library adapters and declarations)
from orthoverify.isolation.adapters import Loaded, load
from orthoverify.isolation.calls import CallFailure, TargetLoadError
from orthoverify.isolation.contain import MEMORY_NOTE, contain, kill_child, kill_group, sweep
from orthoverify.isolation.declare import Declaration, declaration_data, declaration_from_data, declaration_of
from orthoverify.isolation.program import Subject, make_capture, make_executor, make_server, make_view
from orthoverify.isolation.runner import (
    KEEP_BYTES,
    RESTARTS_PER_CHECK,
    STARTUP_TIMEOUT,
    WARM_UP_TIMEOUT,
    RemoteFn,
    RemotePredicate,
    Runner,
    _reply,
    decode,
    encode,
    load_allowance,
)
from orthoverify.isolation.wire import op_also, op_inverse


def subject_of(
    fn: Callable[..., Any],
    view: Callable[[torch.Tensor], torch.Tensor],
    inverse: Callable[..., Any] | None,
    d: Declaration | None,
) -> Subject:
    """The target as the operations reach it: its function, its kind's view of an output, its
    inverse map (its own, else the declared one) and the code its declaration ``d`` holds."""
    return Subject(
        fn=fn,
        view=view,
        inverse=inverse if inverse is not None or d is None else d.right_inverse,
        also=d.also if d is not None else None,
        module=d.module if d is not None else None,
        weight=d.weight if d is not None else None,
        predicates=tuple(p for p in d.domain if callable(p)) if d is not None else (),
    )


# ------------------------------------------------------------------------------ the target's process
def _warm_up() -> None:
    """The first torch.func and autograd calls of a process initialise lazily (seconds on a loaded
    machine): done before the first timed call, so no target is charged for it. Forward mode
    through ``linalg.solve`` has a one-time cost of its own (about 1 s on an idle core, measured;
    other linalg operations' first jvp take milliseconds), so it is warmed here too."""
    from torch.func import jvp, vmap

    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    (x @ x).sum().backward()
    jvp(lambda y: y @ y, (x.detach(),), (torch.ones(2, 2, dtype=torch.float64),))
    vmap(lambda y: y * 2)(torch.ones(2, 2))
    eye = torch.eye(2, dtype=torch.float64)
    jvp(lambda y: torch.linalg.solve(2 * eye + y, y), (eye,), (eye,))


def child_main(
    conn: Any,
    spec: str,
    kind: str,
    complex_output: bool,
    sys_path: list[str],
    device: str,
    cwd: str,
    memory_limit: int | None = None,
    token: str = "",
    verifier: int | None = None,
    told: Any = None,
) -> None:
    """The process the verifier starts: the warden of the target's process, or that process itself
    where there is no warden (:func:`~orthoverify.isolation.contain.contain`, which tells the
    target's pid on ``told``). The target's process then runs :func:`_target_main`."""
    contain(
        lambda: _target_main(conn, spec, kind, complex_output, sys_path, device, cwd),
        told,
        memory_limit,
        token,
        verifier,
        leave=(conn,),
    )


def _target_main(
    conn: Any, spec: str, kind: str, complex_output: bool, sys_path: list[str], device: str, cwd: str
) -> None:
    """The target's process, contained: bind the serving program (codec, framing, operations: see
    :mod:`~orthoverify.isolation.program`), then load the target by name and answer operations
    until told to stop. Nothing the serving loop calls is looked up after the target is imported.
    The kind comes as its name and whether its output is complex (viewed in real block form):
    the kind itself, with its reference, stays in the verifier."""
    with contextlib.suppress(OSError):  # a program it execs does not hold the connection (its end is EOF)
        os.set_inheritable(conn.fileno(), False)
    take = make_capture(KEEP_BYTES)
    serve, say = make_server(conn.fileno(), take)  # bound before the target is imported
    try:
        _warm_up()  # before the target's folders are on the path: no code of the target's runs in it
        say({"loading": True})  # what follows is the target's loading, bounded by the load timeout
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        for p in reversed(sys_path):
            if p not in sys.path:
                sys.path.insert(0, p)
        view, make_subject, loader = make_view(complex_output), subject_of, load  # bound before the import
        declared, data_of = declaration_of, declaration_data  # likewise: no module global is read after it
        target: Loaded = loader(spec, kind)
        subject = make_subject(target.fn, view, target.inverse, declared(target))
        hello = {
            "ok": True,
            "description": str(target.description),
            "inverse": subject.inverse is not None,
            "declaration": data_of(target),  # plain data; its code stays here
        }
    except BaseException as exc:
        say({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]})
        return
    hello["written"], hello["head"] = take()
    say(hello)
    serve(subject, device)


class InProcessRunner(Runner):
    """The target in a thread of this process (a ``Target`` object given directly, which has no
    name to load elsewhere; ``subject``: see :func:`subject_of`): copies in, a timeout, the same
    operations and the same judging of their raw answers, but no protection from crashes or patches."""

    def __init__(self, subject: Subject) -> None:
        super().__init__()
        self.subject, self.execute = subject, make_executor()
        self.hung = ""

    def _ready(self, key: str) -> CallFailure | None:
        if self.hung:  # an abandoned call may still be running: pile up no more of them
            return CallFailure("not-run", f"not called: an earlier call hung ({self.hung})")
        return None

    def _exchange(
        self, op: str, sent: list[torch.Tensor], kw: dict[str, Any], device: str, limit: float, where: str
    ) -> tuple[dict[str, Any], list[torch.Tensor | None], list[str | None]] | CallFailure:
        box: dict[str, Any] = {}
        args = [x.clone().to(device) for x in sent]
        th = threading.Thread(
            target=lambda: box.update(res=self.execute(self.subject, op, args, dict(kw))),
            daemon=True,
            name="orthoverify-target-call",
        )
        th.start()
        th.join(limit)
        if th.is_alive():
            self.hung = f"no answer within {limit:g} s"
            return CallFailure("timeout", self.hung)
        return decode(encode(*box["res"]))  # the same bytes as from a process of its own


def _context() -> Any:
    import multiprocessing as mp

    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["torch", "numpy", __name__])
        return ctx
    return mp.get_context("spawn")


@contextlib.contextmanager
def _no_main() -> Iterator[None]:
    """Start a process without it re-importing the caller's ``__main__`` (multiprocessing does that
    for spawn and forkserver): a user's script without a main guard, or ``python -m orthoverify``,
    would run again in the target's process. The child needs nothing from it."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


_OUT_OF_MEMORY = re.compile(r"MemoryError|can't allocate memory|out of memory|Cannot allocate memory|bad_alloc", re.I)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


MAX_ANSWER_BYTES = 1 << 30
"""Bytes one message from the target's process may hold (its answers are a few tensors of the
sizes the verifier sent): a longer length is an unreadable answer, never an allocation."""


class _Late(Exception):
    """A message to or from the target's process did not pass whole by its deadline."""


def _wait(sel: selectors.BaseSelector, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0 or not sel.select(left):
        raise _Late


def _send(conn: Any, data: bytes, deadline: float) -> None:
    """``data`` sent on ``conn`` (non-blocking) in ``multiprocessing.connection``'s framing, whole by
    ``deadline`` (``time.monotonic``), else :class:`_Late`: a process that stops reading cannot hold
    the verifier."""
    n = len(data)
    head = struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!i", -1) + struct.pack("!Q", n)
    view = memoryview(head + data)
    with selectors.DefaultSelector() as sel:
        sel.register(conn.fileno(), selectors.EVENT_WRITE)
        while len(view):
            try:
                view = view[os.write(conn.fileno(), view) :]
            except BlockingIOError:
                _wait(sel, deadline)


def _recv(conn: Any, deadline: float) -> bytes:
    """One message read whole from ``conn`` (non-blocking) by ``deadline``, else :class:`_Late`; a
    length beyond :data:`MAX_ANSWER_BYTES` is a ValueError, a closed connection EOFError. A process
    that sends a length and then too little (or a length without end) cannot hold the verifier or
    fill its memory: the per-call timeout covers the whole answer, not only its first byte."""
    fd = conn.fileno()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)

        def exact(k: int) -> bytes:
            buf = bytearray()
            while len(buf) < k:
                try:
                    chunk = os.read(fd, min(k - len(buf), 1 << 20))
                except BlockingIOError:
                    _wait(sel, deadline)
                    continue
                if not chunk:
                    raise EOFError
                buf += chunk
            return bytes(buf)

        (size,) = struct.unpack("!i", exact(4))
        if size == -1:
            (size,) = struct.unpack("!Q", exact(8))
        if not 0 <= size <= MAX_ANSWER_BYTES:
            raise ValueError(f"a message of {size} bytes announced, more than {MAX_ANSWER_BYTES}")
        return exact(size)


def _note(told: Any, wait: float) -> bytes:
    """The warden's message on ``told`` (None: none) if one comes within ``wait`` seconds, else b""."""
    if told is None:
        return b""
    with contextlib.suppress(EOFError, OSError, ValueError, struct.error, _Late):
        return _recv(told, time.monotonic() + wait)
    return b""


class ProcessRunner(Runner):
    """The target in a process of its own, loaded there by name; started again after it dies or
    hangs (at most RESTARTS_PER_CHECK times per check). The process is contained (see
    :mod:`~orthoverify.isolation.contain`): its data segment is capped at ``memory_limit`` bytes
    (None: no cap), and so is the memory of all its processes together (where there is a warden:
    the warden kills them all beyond it, and the call that was made is a death naming the cap);
    every process it leaves behind is killed when it stops and listed in ``left_behind``. Loading
    the target (importing it, building it) may take ``load_timeout`` seconds, at least
    :data:`~orthoverify._limits.LOAD_FLOOR_SECONDS` (:func:`~orthoverify.isolation.runner.load_allowance`);
    starting the process (torch's own warm-up, no code of the target's) :data:`STARTUP_TIMEOUT`."""

    isolated = True

    def __init__(
        self,
        spec: str,
        kind: str,
        device: str = "cpu",
        memory_limit: int | None = None,
        complex_output: bool = False,
        load_timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        self.spec, self.kind, self.device, self.complex_output = spec, kind, device, complex_output
        self.load_timeout = load_allowance(load_timeout)
        super().__init__()
        self.memory_limit, self.token = memory_limit, secrets.token_hex(8)
        self.left_behind: list[str] = []
        self.swept: set[tuple[int, int]] = set()  # (pid, start) of those killed, each listed once
        self.proc: Any = None  # the warden (or, without one, the target's process)
        self.target: int | None = None  # the target's process's pid
        self.conn: Any = None
        self.told: Any = None  # the warden's word (the target's pid, then whether it killed it for memory)
        self.restarts = 0

    def start(self) -> dict[str, Any]:
        """Start the target's process and wait for it to load the target; raises
        :class:`~orthoverify.isolation.calls.TargetLoadError` when it cannot."""
        ctx = _context()
        parent, child = ctx.Pipe()
        told, tell = ctx.Pipe(duplex=False)  # the target's pid, from its warden
        loading = (self.spec, self.kind, self.complex_output, list(sys.path), self.device, os.getcwd())
        confining = (self.memory_limit, self.token, os.getpid(), tell)  # contain.contain's arguments
        proc = ctx.Process(
            target=child_main,
            args=(child, *loading, *confining),
            daemon=True,
            name=f"orthoverify-target {self.spec}",
        )
        with _no_main():
            proc.start()
        child.close()
        tell.close()
        os.set_blocking(parent.fileno(), False)  # every exchange has a deadline (_send, _recv)
        os.set_blocking(told.fileno(), False)
        target: int | None = None
        started = False  # past the start-up: in the target's own loading
        try:
            try:
                deadline = time.monotonic() + STARTUP_TIMEOUT
                target = int(_recv(told, deadline).decode("ascii"))
                hello, _, _ = decode(_recv(parent, deadline))
                if hello.get("loading"):  # started: the target's own code runs from here
                    started = True
                    hello, _, _ = decode(_recv(parent, time.monotonic() + self.load_timeout))
            except _Late:
                late = f"its load timeout, {self.load_timeout:g} s" if started else f"{STARTUP_TIMEOUT:g} s of start-up"
                raise TargetLoadError(f"{self.spec}: its process did not load it within {late} (killed)") from None
        except (EOFError, OSError, ValueError, struct.error) as exc:
            memory = self._bury_after(proc, target, told)
            why = f"sent an unreadable message ({exc})" if isinstance(exc, ValueError) else "ended"
            raise TargetLoadError(
                f"{self.spec}: its process {why} while loading it ({_exit_text(proc.exitcode)}{memory})"
            ) from exc
        except TargetLoadError:
            self._bury(proc, target)
            told.close()
            raise
        if not hello.get("ok"):
            self._bury(proc, target)
            told.close()
            raise TargetLoadError(str(hello.get("error", "cannot load the target")))
        self.proc, self.target, self.conn, self.told = proc, target, parent, told
        self.warm = set()  # a fresh process: every operation's first call is to come
        self.observed.add(hello, "loading the target")
        return hello

    def _bury_after(self, proc: Any, target: int | None, told: Any) -> str:
        """:meth:`_bury` the warden ``proc``, and close ``told``; returns ``; memory cap of X GiB
        exceeded across N processes (...)`` where the warden had killed the target's processes
        for memory (it says so on ``told`` before it kills them), else "". Those it killed are
        not left behind: the warden, which ends once nothing is below it, is waited for first."""
        note = _note(told, 0.0)
        if note:
            proc.join(10)
        self._bury(proc, target)
        note = note or _note(told, 1.0)  # the warden has ended: its end of ``told`` is closed
        with contextlib.suppress(OSError):
            if told is not None:
                told.close()
        word, *numbers = note.decode("ascii", errors="replace").split() or [""]
        if word != MEMORY_NOTE or len(numbers) != 2 or not all(n.isdigit() for n in numbers):
            return ""
        cap = f"{(self.memory_limit or 0) / 2**30:.3g} GiB"
        held, count = int(numbers[0]), int(numbers[1])
        return (
            f"; memory cap of {cap} exceeded across {count} process{'es' if count != 1 else ''} "
            f"({held / 2**30:.3g} GiB of anonymous and shared memory together): "
            + ("all of them killed" if count != 1 else "killed")
        )

    def _bury(self, proc: Any, target: int | None) -> None:
        """Kill the process ``proc`` (the warden) and everything below it (those listed in
        ``left_behind``): what the target's process ``target`` started first, then that process,
        then whatever it orphaned (the warden holds it), then the warden, its group, and whatever
        else carries the run's token. The warden exits as the target's process did."""
        pid = proc.pid
        if pid is None:
            return
        self.left_behind += sweep(pid, self.token, self.swept, target)
        if target is None or target == pid:  # no warden: ``proc`` is the target's process
            if proc.is_alive():
                proc.kill()
        else:
            kill_child(pid, target)
            self.left_behind += sweep(pid, self.token, self.swept, target)
        proc.join(10)  # the warden ends once nothing is below it
        if proc.is_alive():  # told to end: it kills what is below it first
            proc.terminate()
            proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(10)
        kill_group(pid)
        self.left_behind += sweep(pid, self.token, self.swept, target)

    def _stop(self) -> tuple[int | None, str]:
        """Kill the running process (:meth:`_bury`); its exit status (the target's process's), and
        the warden's note where it had killed the target's processes for memory (else "")."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None, ""
        told, self.told = self.told, None
        memory = self._bury_after(proc, self.target, told)
        with contextlib.suppress(OSError):
            self.conn.close()
        code: int | None = proc.exitcode
        return code, memory

    def begin_check(self, name: str) -> None:
        self.check, self.restarts = name, 0

    def _started(self) -> CallFailure | None:
        """Start the target's process again if it is not running (None: it runs)."""
        if self.proc is not None:
            return None
        if self.restarts >= RESTARTS_PER_CHECK:
            return CallFailure(
                "not-run",
                f"not called: the target's process died or hung {self.restarts} times in this check",
            )
        try:
            self.start()
        except OrthoverifyError as exc:
            self.restarts += 1
            return CallFailure("died", f"the target's process could not be started again: {exc}")
        return None

    def _exchange(
        self, op: str, sent: list[torch.Tensor], kw: dict[str, Any], device: str, limit: float, where: str
    ) -> tuple[dict[str, Any], list[torch.Tensor | None], list[str | None]] | CallFailure:
        """One operation sent to the running process and its raw answer; a process that does not
        answer within ``limit`` seconds or dies is stopped (started again by the next call)."""
        deadline = time.monotonic() + limit
        try:
            try:
                _send(self.conn, encode({"op": op, "kw": kw, "device": device}, sent), deadline)
                return decode(_recv(self.conn, deadline))
            except _Late:
                _, memory = self._stop()
                self.restarts += 1
                self.observed.deaths.append(f"timeout{memory} in {where}")
                return CallFailure(
                    "timeout", f"no answer within {limit:g} s (the target's process was killed and restarted){memory}"
                )
        except (EOFError, OSError, ValueError, struct.error) as exc:
            code, memory = self._stop()
            self.restarts += 1
            what = _exit_text(code) if not isinstance(exc, ValueError) else f"an unreadable answer ({exc})"
            what += memory
            self.observed.deaths.append(f"{what} in {where}")
            return CallFailure("died", f"the target's process died during the call ({what})")

    def _prime(self, key: str) -> None:
        """Warm ``key`` in a process started again: the call of it the target answered first is
        made once more under the warm-up allowance, its answer dropped, so that the call to be
        judged next (perhaps one that made the last process hang) gets the plain timeout."""
        op, sent, kw, device = self.primers[key]
        got = self._exchange(op, sent, kw, device, WARM_UP_TIMEOUT, f"warming up {key} for {self.check or op}")
        if isinstance(got, CallFailure):
            self.spent.add(key)
            return
        self.warm.add(key)
        self.observed.add(_reply(got[0], got[1], got[2], sent)[1], self.check or op)

    def _ready(self, key: str) -> CallFailure | None:
        fail = self._started()
        if fail is None and key in self.primers and key not in self.warm | self.spent:
            self._prime(key)
            fail = self._started()
        return fail

    def _memory_note(self, fail: CallFailure) -> CallFailure:
        """A failed allocation says that it hit the cap (so the finding reads as what it is)."""
        if self.memory_limit is None or not _OUT_OF_MEMORY.search(fail.message):
            return fail
        cap = f"{self.memory_limit / 2**30:.3g} GiB"
        return CallFailure(fail.kind, f"{fail.message} (the target's process reached its memory limit, {cap})")

    def close(self) -> None:
        if self.proc is not None:  # what it started, killed before it can orphan more on exit
            self.left_behind += sweep(self.proc.pid, self.token, self.swept, self.target)
        if self.proc is not None and self.proc.is_alive():
            with contextlib.suppress(OSError, _Late):
                _send(self.conn, encode({"op": "stop"}, []), time.monotonic() + 2)
            self.proc.join(2)
        self._stop()


def remote_declaration(spec: str, data: Any, runner: Runner, timeout: float) -> Declaration:
    """The :class:`~orthoverify.isolation.declare.Declaration` of the target ``spec`` from the data
    its process sent, checked here as untrusted input; its code is reached through ``runner``. A
    malformed declaration stops the target's process and raises
    :class:`~orthoverify.isolation.calls.TargetLoadError` naming the field."""
    try:
        return declaration_from_data(
            data,
            lambda i, name: RemotePredicate(runner, timeout, i, name),
            RemoteFn(runner, timeout, op_also),
            RemoteFn(runner, timeout, op_inverse),
        )
    except InputError as exc:
        runner.close()
        raise TargetLoadError(f"{spec}: {exc}") from exc
