"""Running a target where it can neither crash nor forge the verdict.

The target lives in a process of its own (multiprocessing's ``forkserver`` context, ``spawn``
where there is none), loaded there by name, as the Dask executor path loads it. The verifier
sends it *operations*: module-level functions ``op(target, *tensors, **kw)`` named by
``module:qualname`` (:func:`op_forward`, :func:`op_loss_grad`, :func:`op_jvp`, :func:`op_reach`,
:func:`op_inverse`, or a check's own), with copies of the tensors; it gets back the tensors the
operation returns and what the call did besides (arguments changed, working directory changed,
bytes written to stdout/stderr). References and measures are computed in the verifier's process
only, so a target that patches ``numpy.linalg.norm`` changes nothing the judge reads.

The wire format is a JSON header and ``.npy`` blobs read with ``allow_pickle=False``: nothing a
target sends is ever unpickled or evaluated. A process that dies (``os._exit``, a segfault) or
does not answer within the timeout (it is killed) is started again for the next call; the
failure is a :class:`~orthoverify.conformance.calls.CallFailure` naming the exit status.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
import secrets
import signal
import struct
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from orthoverify.conformance.calls import CallFailure
from orthoverify.conformance.contain import confine, kill_group, sweep

if TYPE_CHECKING:
    from orthoverify.conformance.checks import Target
    from orthoverify.conformance.declare import Declaration

STARTUP_TIMEOUT = 300.0
"""Seconds a fresh target process may take to import torch, warm up torch.func and load the target
(never charged to the per-call timeout)."""

FLOOD_BYTES = 1 << 20
"""Bytes a target may write to stdout/stderr over a whole run before that is a finding."""

KEEP_BYTES = 2000
"""Bytes of the target's stdout/stderr kept to show (the first ones)."""

RESTARTS_PER_CHECK = 3
"""Deaths and timeouts one check may cause before its remaining calls are not made (not run)."""


# ------------------------------------------------------------------------------ wire format
def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).removeprefix("torch.")


def encode(header: dict[str, Any], tensors: Sequence[torch.Tensor | None]) -> bytes:
    """A JSON header and the tensors as ``.npy`` blobs (bfloat16 travels as float32, exactly)."""
    blobs: list[bytes] = []
    meta: list[dict[str, Any] | None] = []
    for t in tensors:
        if t is None:
            meta.append(None)
            continue
        x = t.detach().to("cpu")
        name = _dtype_name(x.dtype)
        if x.dtype == torch.bfloat16:
            x = x.to(torch.float32)
        buf = io.BytesIO()
        np.save(buf, x.resolve_conj().resolve_neg().numpy(), allow_pickle=False)
        blobs.append(buf.getvalue())
        meta.append({"dtype": name, "bytes": len(blobs[-1])})
    head = json.dumps({**header, "tensors": meta}).encode()
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def decode(data: bytes) -> tuple[dict[str, Any], list[torch.Tensor | None]]:
    """The inverse of :func:`encode`; raises ValueError on anything malformed."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n].decode())
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    pos = 8 + n
    out: list[torch.Tensor | None] = []
    for m in header.get("tensors", []):
        if m is None:
            out.append(None)
            continue
        size = int(m["bytes"])
        arr = np.load(io.BytesIO(data[pos : pos + size]), allow_pickle=False)
        pos += size
        t = torch.from_numpy(np.array(arr, copy=True))
        want = getattr(torch, str(m["dtype"]), None)
        if isinstance(want, torch.dtype) and t.dtype != want:
            t = t.to(want)
        out.append(t)
    return header, out


# ------------------------------------------------------------------------------ operations
def op_name(op: Callable[..., Any]) -> str:
    """How an operation is named on the wire: ``module:qualname`` (a module-level function)."""
    return f"{op.__module__}:{op.__qualname__}"


def resolve(name: str) -> Callable[..., Any]:
    module, _, attr = name.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    fn: Callable[..., Any] = obj
    return fn


def op_forward(t: Target, *args: torch.Tensor) -> Any:
    """The target's output (whatever it returns: the verifier checks type, shape and dtype)."""
    return t.fn(*args)


def op_loss_grad(t: Target, g: torch.Tensor, *args: torch.Tensor, wrt: Sequence[int] = ()) -> tuple[Any, ...]:
    """(L, dL/d args[i] for i in ``wrt``) of L = sum(view(f(args)) * G) by the target's autograd; a
    gradient autograd leaves unused is returned as zeros."""
    leaves = [x.detach().requires_grad_(i in wrt) for i, x in enumerate(args)]
    out = t.kind.view(t.fn(*leaves))
    lval = (out * g.to(dtype=out.dtype, device=out.device)).sum()
    which = [leaves[i] for i in wrt]
    grads = torch.autograd.grad(lval, which, allow_unused=True)
    return (lval.detach(), *(torch.zeros_like(x) if gr is None else gr for x, gr in zip(which, grads, strict=True)))


def op_jvp(t: Target, *xs: torch.Tensor, which: Sequence[int] = ()) -> torch.Tensor:
    """torch.func.jvp of view(f) along tangents of the arguments ``which``: ``xs`` holds the
    arguments, then one tangent per index of ``which``."""
    from torch.func import jvp

    k = len(xs) - len(which)
    primals, tangents = list(xs[:k]), xs[k:]

    def f(*moving: torch.Tensor) -> torch.Tensor:
        args = list(primals)
        for i, x in zip(which, moving, strict=True):
            args[i] = x
        out: torch.Tensor = t.kind.view(t.fn(*args))
        return out

    ts = tuple(tg.to(dtype=primals[i].dtype, device=primals[i].device) for i, tg in zip(which, tangents, strict=True))
    out: torch.Tensor = jvp(f, tuple(primals[i] for i in which), ts)[1]
    return out


def op_reach(t: Target, q: torch.Tensor, x0: torch.Tensor, steps: int = 100) -> torch.Tensor:
    """X after L-BFGS (3 x ``steps`` iterations from X0) on ||f(X) - Q||_F^2; the verifier measures
    the distance itself from a forward call at X."""
    x = x0.detach().clone().requires_grad_(True)
    opt = torch.optim.LBFGS(
        [x], lr=1, max_iter=steps, line_search_fn="strong_wolfe", tolerance_grad=1e-14, tolerance_change=1e-16
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = ((t.fn(x) - q) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    return x.detach()


def op_inverse(t: Target, w: torch.Tensor) -> Any:
    """The target's own inverse map (a parametrisation's ``right_inverse``) at W."""
    assert t.inverse is not None
    return t.inverse(w)


def op_also(t: Target, *args: torch.Tensor) -> Any:
    """The target's declared second entry point (``declare(also=...)``) on ``args``."""
    from orthoverify.conformance.declare import declaration_of

    d = declaration_of(t)
    if d is None or d.also is None:
        raise LookupError("the target declares no second entry point")
    return d.also(*args)


def op_domain(t: Target, *xs: torch.Tensor, keys: Sequence[str] = (), index: int = 0) -> dict[str, Any]:
    """Why the parameter point ``dict(zip(keys, xs))`` lies outside the ``index``-th domain predicate
    the target declares (a callable: it runs here, never in the verifier), as JSON (None: inside)."""
    from orthoverify.conformance.declare import declaration_of

    d = declaration_of(t)
    preds = [p for p in d.domain if callable(p)] if d is not None else []
    why = preds[int(index)]({str(k): x.detach().cpu().numpy() for k, x in zip(keys, xs, strict=True)})
    return {"__json__": None if why is None else str(why)[:300]}


def op_check(t: Target, *, name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A whole check run where the target lives (for checks that need the target object itself:
    autograd or vmap through it, its module's life in training, its declarations): the check runs
    with a context that calls the target in a thread of this process, and its evidence comes back
    as JSON. Crashes and hangs still cannot reach the verifier; measures are taken here."""
    from orthoverify import conformance as cf
    from orthoverify.conformance import checks as ck

    ctx = ck.Ctx.in_target_process(t, options)
    for check, _kind, _statement, fn in cf._plan(t.kind.name, ctx.dtypes, t.inverse is not None, ctx.device, t):
        if check == name:
            evidence = cf._evidence(ctx, f"conformance.{t.kind.name}.{name}", name, fn)
            return {"__json__": [ck.evidence_to_json(e) for e in evidence]}
    raise LookupError(f"no check {name!r} for this target")


# ------------------------------------------------------------------------------ one call, anywhere
def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return bool(torch.equal(a, b))


def execute(target: Target, op: Callable[..., Any], tensors: list[torch.Tensor], kw: dict[str, Any]) -> dict[str, Any]:
    """Run ``op`` on ``target`` and say what happened: ``out`` (a list of tensors), or ``error``
    (the target's exception), or ``type`` (a result that is no tensor); ``side``: arguments the
    call changed and a changed working directory (put back)."""
    before = [x.detach().clone() for x in tensors]
    cwd = os.getcwd()
    res: dict[str, Any] = {"side": []}
    try:
        out = op(target, *tensors, **kw)
    except BaseException as exc:  # the target's own error, whatever it is
        if isinstance(exc, KeyboardInterrupt):
            raise
        res["error"] = f"{type(exc).__name__}: {exc}".strip()[:500]
        res["traceback"] = traceback.format_exc(limit=6)[-2000:]
        out = None
    changed = [i for i, (a, b) in enumerate(zip(before, tensors, strict=True)) if not _same(a, b)]
    if changed:
        res["side"].append(f"mutates its input: argument {', '.join(map(str, changed))} changed by the call")
    try:
        now = os.getcwd()
    except OSError:
        now = "(deleted)"
    if now != cwd:
        res["side"].append(f"changes the working directory (to {now})")
        os.chdir(cwd)
    if "error" not in res and isinstance(out, dict) and "__json__" in out:  # a whole check's evidence
        res["json"], res["out"] = out["__json__"], []
    elif "error" not in res:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        bad = [type(o).__name__ for o in outs if o is not None and not isinstance(o, torch.Tensor)]
        if bad:
            res["type"] = f"returned {bad[0]}, not a torch.Tensor"
        else:
            res["out"] = [None if o is None else o.detach() for o in outs]
    return res


# ------------------------------------------------------------------------------ the target's process
class _Capture:
    """The process's file descriptors 1 and 2 redirected into a pipe drained by a thread that
    counts the bytes and keeps the first KEEP_BYTES: a flood neither blocks nor fills anything."""

    def __init__(self) -> None:
        r, w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.close(w)
        self.count = 0
        self.head = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._drain, args=(r,), daemon=True, name="orthoverify-capture").start()

    def _drain(self, r: int) -> None:
        while True:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                return
            with self.lock:
                self.count += len(chunk)
                if len(self.head) < KEEP_BYTES:
                    self.head += chunk[: KEEP_BYTES - len(self.head)]

    def take(self) -> tuple[int, str]:
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except Exception:  # a target may have replaced or closed them
                pass
        with self.lock:
            count, head = self.count, self.head
            self.count, self.head = 0, b""
        return count, head.decode(errors="replace")


def _warm_up() -> None:
    """The first torch.func and autograd calls of a process initialise lazily (seconds on a loaded
    machine): done before the first timed call, so no target is charged for it."""
    from torch.func import jvp, vmap

    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    (x @ x).sum().backward()
    jvp(lambda y: y @ y, (x.detach(),), (torch.ones(2, 2, dtype=torch.float64),))
    vmap(lambda y: y * 2)(torch.ones(2, 2))


def child_main(
    conn: Any,
    spec: str,
    kind: str | None,
    sys_path: list[str],
    device: str,
    cwd: str,
    memory_limit: int | None = None,
    token: str = "",
    verifier: int | None = None,
) -> None:
    """The target's process: contained first (:func:`~orthoverify.conformance.contain.confine`),
    then load the target by name, answer operations until told to stop."""
    confine(memory_limit, token, verifier)
    try:
        os.chdir(cwd)
    except OSError:
        pass
    for p in reversed(sys_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    capture = _Capture()
    try:
        _warm_up()
        from orthoverify.conformance.adapters import load_target
        from orthoverify.conformance.declare import declaration_data

        target = load_target(spec, kind)
    except BaseException as exc:
        conn.send_bytes(encode({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}, []))
        return
    count, head = capture.take()
    hello = {
        "ok": True,
        "description": target.description,
        "inverse": target.inverse is not None,
        "declaration": declaration_data(target),  # plain data; its code stays here
        "written": count,
        "head": head,
    }
    conn.send_bytes(encode(hello, []))
    while True:
        try:
            header, tensors = decode(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if header.get("op") == "stop":
            return
        dev = str(header.get("device") or device)
        args = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in tensors]
        res = execute(target, resolve(str(header["op"])), args, dict(header.get("kw") or {}))  # type: ignore[arg-type]
        outs = res.pop("out", None)
        res["written"], res["head"] = capture.take()
        res["n_out"] = None if outs is None else len(outs)
        conn.send_bytes(encode(res, outs or []))


# ------------------------------------------------------------------------------ the verifier's side
@dataclass
class Reply:
    """What one operation gave: its output tensors (None for an output that was None)."""

    out: list[torch.Tensor | None]
    side: list[str] = field(default_factory=list)
    data: Any = None
    """JSON data an operation returned instead of tensors (a whole check's evidence, see op_check)."""


@dataclass
class Observed:
    """What the target did besides computing, over a run: side effects (first occurrence of each),
    bytes written to stdout/stderr and the first of them, deaths and timeouts."""

    side: dict[str, str] = field(default_factory=dict)
    written: int = 0
    head: str = ""
    deaths: list[str] = field(default_factory=list)

    def add(self, reply: dict[str, Any], where: str) -> None:
        for s in reply.get("side", []):
            self.side.setdefault(str(s).split(":")[0], f"{s} ({where})")
        n = int(reply.get("written") or 0)
        self.written += n
        if n and len(self.head) < KEEP_BYTES:
            self.head += str(reply.get("head", ""))[: KEEP_BYTES - len(self.head)]


class Runner:
    """Runs operations on a target and says what they gave."""

    observed: Observed
    isolated: bool = False

    def request(
        self, op: Callable[..., Any], tensors: Sequence[torch.Tensor], kw: dict[str, Any], timeout: float, device: str
    ) -> Reply | CallFailure:
        raise NotImplementedError

    def begin_check(self, name: str) -> None:
        """A new check starts: its own budget of restarts."""

    def close(self) -> None:
        """Stop the target's process, if any."""


def _failure_of(res: dict[str, Any]) -> CallFailure | None:
    if "error" in res:
        return CallFailure("raised", str(res["error"]))
    if "type" in res:
        return CallFailure("type", str(res["type"]))
    return None


class InProcessRunner(Runner):
    """The target in a thread of this process (a :class:`Target` object given directly, which has
    no name to load elsewhere): copies in, a timeout, but no protection from crashes or patches."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.observed = Observed()
        self.hung = ""

    def request(
        self, op: Callable[..., Any], tensors: Sequence[torch.Tensor], kw: dict[str, Any], timeout: float, device: str
    ) -> Reply | CallFailure:
        if self.hung:  # an abandoned call may still be running: pile up no more of them
            return CallFailure("not-run", f"not called: an earlier call hung ({self.hung})")
        box: dict[str, Any] = {}
        args = [x.detach().clone().to(device) for x in tensors]

        def work() -> None:
            box["res"] = execute(self.target, op, args, kw)

        th = threading.Thread(target=work, daemon=True, name="orthoverify-target-call")
        th.start()
        th.join(timeout)
        if th.is_alive():
            self.hung = f"no answer within {timeout:g} s"
            return CallFailure("timeout", self.hung)
        res = box["res"]
        self.observed.add(res, op.__name__)
        fail = _failure_of(res)
        return fail if fail is not None else Reply(res["out"], res["side"], res.get("json"))


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


class ProcessRunner(Runner):
    """The target in a process of its own, loaded there by name; started again after it dies or
    hangs (at most RESTARTS_PER_CHECK times per check). The process is contained (see
    :mod:`~orthoverify.conformance.contain`): its data segment is capped at ``memory_limit`` bytes
    (None: no cap), and every process it leaves behind is killed when it stops and listed in
    ``left_behind``."""

    isolated = True

    def __init__(self, spec: str, kind: str | None, device: str = "cpu", memory_limit: int | None = None) -> None:
        self.spec, self.kind, self.device = spec, kind, device
        self.memory_limit = memory_limit
        self.token = secrets.token_hex(8)
        self.left_behind: list[str] = []
        self.observed = Observed()
        self.proc: Any = None
        self.conn: Any = None
        self.hello: dict[str, Any] = {}
        self.restarts = 0
        self.check = ""

    def start(self) -> dict[str, Any]:
        """Start the target's process and wait for it to load the target; raises
        :class:`~orthoverify.conformance.adapters.TargetLoadError` when it cannot."""
        from orthoverify.conformance.adapters import TargetLoadError

        ctx = _context()
        parent, child = ctx.Pipe()
        proc = ctx.Process(
            target=child_main,
            args=(child, self.spec, self.kind, list(sys.path), self.device, os.getcwd(), *self._containment()),
            daemon=True,
            name=f"orthoverify-target {self.spec}",
        )
        with _no_main():
            proc.start()
        child.close()
        try:
            if not parent.poll(STARTUP_TIMEOUT):
                raise TargetLoadError(f"{self.spec}: its process did not load it within {STARTUP_TIMEOUT:g} s")
            hello, _ = decode(parent.recv_bytes())
        except (EOFError, OSError, ValueError) as exc:
            self._bury(proc)
            raise TargetLoadError(
                f"{self.spec}: its process ended while loading it ({_exit_text(proc.exitcode)})"
            ) from exc
        except TargetLoadError:
            self._bury(proc)
            raise
        if not hello.get("ok"):
            self._bury(proc)
            raise TargetLoadError(str(hello.get("error", "cannot load the target")))
        self.proc, self.conn, self.hello = proc, parent, hello
        self.observed.add(hello, "loading the target")
        return hello

    def _containment(self) -> tuple[int | None, str, int]:
        """The child's containment arguments (see :func:`~orthoverify.conformance.contain.confine`)."""
        return self.memory_limit, self.token, os.getpid()

    def _bury(self, proc: Any) -> None:
        """Kill the process ``proc`` and everything it started (those listed in ``left_behind``):
        its own processes first, while it still holds them (a subreaper), then it and its group,
        then whatever was orphaned meanwhile."""
        pid = proc.pid
        if pid is None:
            return
        self.left_behind += sweep(pid, self.token)
        if proc.is_alive():
            proc.kill()
        proc.join(10)
        kill_group(pid)
        self.left_behind += sweep(pid, self.token)

    def _stop(self, kill: bool) -> int | None:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if kill:
            self._bury(proc)
        proc.join(10)
        try:
            self.conn.close()
        except OSError:
            pass
        code: int | None = proc.exitcode
        return code

    def begin_check(self, name: str) -> None:
        self.check, self.restarts = name, 0

    def request(
        self, op: Callable[..., Any], tensors: Sequence[torch.Tensor], kw: dict[str, Any], timeout: float, device: str
    ) -> Reply | CallFailure:
        from orthoverify.errors import OrthoverifyError

        if self.proc is None:
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
        try:
            self.conn.send_bytes(encode({"op": op_name(op), "kw": kw, "device": device}, list(tensors)))
            answered = self.conn.poll(timeout)
            if not answered:
                self._stop(kill=True)
                self.restarts += 1
                self.observed.deaths.append(f"timeout in {self.check or op.__name__}")
                return CallFailure(
                    "timeout", f"no answer within {timeout:g} s (the target's process was killed and restarted)"
                )
            res, outs = decode(self.conn.recv_bytes())
        except (EOFError, OSError, ValueError, struct.error) as exc:
            code = self._stop(kill=True)
            self.restarts += 1
            what = _exit_text(code) if not isinstance(exc, ValueError) else f"an unreadable answer ({exc})"
            self.observed.deaths.append(f"{what} in {self.check or op.__name__}")
            return CallFailure("died", f"the target's process died during the call ({what})")
        self.observed.add(res, self.check or op.__name__)
        fail = _failure_of(res)
        if fail is not None:
            return self._memory_note(fail)
        n = res.get("n_out")
        return Reply(list(outs[: n if isinstance(n, int) else len(outs)]), list(res.get("side", [])), res.get("json"))

    def _memory_note(self, fail: CallFailure) -> CallFailure:
        """A failed allocation says that it hit the cap (so the finding reads as what it is)."""
        if self.memory_limit is None or not _OUT_OF_MEMORY.search(fail.message):
            return fail
        cap = f"{self.memory_limit / 2**30:.3g} GiB"
        return CallFailure(fail.kind, f"{fail.message} (the target's process reached its memory limit, {cap})")

    def close(self) -> None:
        if self.proc is not None:  # what it started, found while it still holds it (it may orphan it on exit)
            self.left_behind += sweep(self.proc.pid, self.token)
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send_bytes(encode({"op": "stop"}, []))
            except OSError:
                pass
            self.proc.join(2)
        self._stop(kill=True)


class RemotePredicate:
    """A domain predicate the target declares, as the verifier sees it: each point is sent to the
    target's process (:func:`op_domain`), where the predicate runs; a failure is a target fault."""

    def __init__(self, runner: Runner, timeout: float, index: int, name: str) -> None:
        self.runner, self.timeout, self.index, self.__name__ = runner, timeout, index, name

    def __call__(self, params: Any) -> str | None:
        from orthoverify.conformance.checks import TargetFault

        keys = [str(k) for k in params]
        xs = [torch.as_tensor(np.asarray(params[k])) for k in keys]
        res = self.runner.request(op_domain, xs, {"keys": keys, "index": self.index}, self.timeout, "cpu")
        if isinstance(res, CallFailure):
            raise TargetFault(f"the declared domain predicate {self.__name__}: {res}")
        if res.data is not None and not isinstance(res.data, str):
            raise TargetFault(f"the declared domain predicate {self.__name__} sent no reason string")
        return res.data


def remote_declaration(spec: str, data: Any, runner: Runner, timeout: float) -> Declaration:
    """The :class:`~orthoverify.conformance.declare.Declaration` of the target ``spec`` from the data
    its process sent, checked here as untrusted input; its code is reached through ``runner``. A
    malformed declaration stops the target's process and raises
    :class:`~orthoverify.conformance.adapters.TargetLoadError` naming the field."""
    from orthoverify.conformance.adapters import TargetLoadError
    from orthoverify.conformance.checks import RemoteFn
    from orthoverify.conformance.declare import declaration_from_data
    from orthoverify.errors import InputError

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
