"""The program the target's process runs: a fixed table of operations that compute raw values.

Everything the target's process uses to serve the verifier (the wire codec, the framing, the
dispatch table, the operations and what they call: torch's AD, optimisers, the tensor methods
that read an output) is bound by :func:`make_codec`, :func:`make_ops` and :func:`make_server`
*before* the target is imported, captured in closures: a target that rebinds a module attribute,
a ``torch.Tensor`` method or a numpy function afterwards changes nothing this program calls.
Nothing is looked up by name after the target is loaded.

An operation returns tensors only (the target's output, a gradient, a scalar v'Hw, a module's
weights after training steps); every ratio, comparison and verdict is computed in the verifier (the
quantities each planned check measures: :mod:`~orthoverify.conformance.planning`). An output is
read only as an exact ``torch.Tensor`` or through ``torch.Tensor``'s own methods with
``__torch_function__`` disabled, never the object's own methods; a subclass with its own
``__torch_dispatch__`` is refused (its values cannot be read). Outputs travel as raw bytes after a
JSON header naming dtype and shape: nothing a target sends is unpickled or evaluated. The arguments
of every call travel back after it, so the verifier sees (and compares) what the call did to them.
"""

from __future__ import annotations

import builtins
import os
import struct
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify.isolation import wire
from orthoverify.isolation.substitute import make_substituted
from orthoverify.isolation.wire import WIRE_DTYPES, Codec, Json, WireError, make_codec

_LEARNING_RATES: tuple[tuple[str, float], ...] = (("SGD", 0.1), ("Adam", 0.01), ("AdamW", 0.01))
OPTIMISERS: tuple[str, ...] = tuple(f"{name}(lr={lr}, weight_decay=0.1)" for name, lr in _LEARNING_RATES)
"""The optimisers of the weight-decay scenario, by index (its ``opt``)."""


CASTS: tuple[tuple[str, torch.dtype], ...] = (
    ("double", torch.float64),
    ("float", torch.float32),
    ("half", torch.float16),
    ("bfloat16", torch.bfloat16),
)
"""The casts of the dtype scenario, by index (its ``cast``): ``module.double()`` etc."""


@dataclass(frozen=True)
class Subject:
    """The target as the operations reach it: its function, the kind's view of an output (bound
    before the target is imported), and the code its declaration holds."""

    fn: Callable[..., Any]
    view: Callable[[torch.Tensor], torch.Tensor]
    inverse: Callable[..., Any] | None = None
    also: Callable[..., Any] | None = None
    module: Callable[[int], Any] | None = None
    weight: Callable[[Any], Any] | None = None
    predicates: tuple[Callable[[Any], Any], ...] = ()


def make_view(complex_output: bool) -> Callable[[torch.Tensor], torch.Tensor]:
    """The output as the checks compare it (and differentiate it): itself, or for a kind with a
    complex output W its real block form [[Re W, -Im W], [Im W, Re W]]; every function it calls
    bound now."""
    cat, real, imag, neg = torch.cat, torch.real, torch.imag, torch.neg

    def block(out: torch.Tensor) -> torch.Tensor:
        re, im = real(out), imag(out)
        return cat([cat([re, neg(im)], dim=-1), cat([im, re], dim=-1)], dim=-2)

    return block if complex_output else (lambda out: out)


# ------------------------------------------------------------------------------ the operations
def make_ops() -> dict[str, Callable[..., Any]]:
    """The operations of :data:`~orthoverify.isolation.wire.OPERATIONS` by name, each
    ``op(subject, *tensors, **kw)`` (the keywords as declared there, checked by the verifier)
    returning tensors (or a :class:`Json`), with every function they call bound now."""
    from torch.func import grad, jvp, vmap

    autograd_grad = torch.autograd.grad
    Tensor = torch.Tensor
    detach, clone, requires_grad_, to = Tensor.detach, Tensor.clone, Tensor.requires_grad_, Tensor.to
    backward, tnumpy, reshape, tcpu = Tensor.backward, Tensor.numpy, Tensor.reshape, Tensor.cpu
    anyt: Any = Tensor  # the descriptors, not the typed attributes
    dtype_of, device_of = anyt.dtype.__get__, anyt.device.__get__
    tsum, mul, zeros, zeros_like, as_tensor = torch.sum, torch.mul, torch.zeros, torch.zeros_like, torch.as_tensor
    f64 = torch.float64
    LBFGS, SGD, Adam, AdamW = torch.optim.LBFGS, torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW
    steps_of = {cls: cls.step for cls in (LBFGS, SGD, Adam, AdamW)}
    manual_seed, get_default, set_default = torch.manual_seed, torch.get_default_dtype, torch.set_default_dtype
    Module, module_to, parameters = torch.nn.Module, torch.nn.Module.to, torch.nn.Module.parameters
    state_dict, load_state_dict = torch.nn.Module.state_dict, torch.nn.Module.load_state_dict
    zero_grad = torch.optim.Optimizer.zero_grad
    shape_of = anyt.shape.__get__

    def opt_step(opt: Any, *closure: Any) -> Any:
        return steps_of[_type(opt)](opt, *closure)

    default_rng = np.random.default_rng
    b = builtins
    _len, _list, _tuple, _str, _range, _zip = b.len, b.list, b.tuple, b.str, b.range, b.zip
    _enumerate, _isinstance, _getattr, _type = b.enumerate, b.isinstance, b.getattr, b.type
    dtypes, _Json = dict(WIRE_DTYPES), Json
    optimisers = _tuple((_getattr(torch.optim, name), lr) for name, lr in _LEARNING_RATES)
    casts = _tuple(CASTS)

    def along(s: Subject, primals: Sequence[Any], which: Sequence[int]) -> Callable[..., Any]:
        """view(f) as a function of the arguments ``which``, the others fixed at ``primals``."""

        def f(*xs: torch.Tensor) -> torch.Tensor:
            args = _list(primals)
            for i, x in _zip(which, xs, strict=True):
                args[i] = x
            return s.view(s.fn(*args))

        return f

    def loss_of(s: Subject, primals: list[Any], which: Sequence[int], g: torch.Tensor) -> Callable[..., Any]:
        f = along(s, primals, which)

        def loss(*xs: torch.Tensor) -> torch.Tensor:
            out = f(*xs)
            return tsum(mul(out, to(g, dtype=dtype_of(out), device=device_of(out))))

        return loss

    def forward(s: Subject, *args: torch.Tensor) -> Any:
        """The target's output (whatever it returns: the verifier checks type, shape and dtype)."""
        return s.fn(*args)

    def loss_grad(s: Subject, g: torch.Tensor, *args: torch.Tensor, wrt: Sequence[int] = ()) -> tuple[Any, ...]:
        """(L, dL/d args[i] for i in ``wrt``) of L = sum(view(f(args)) * G) by the target's autograd;
        a gradient autograd leaves unused is returned as zeros."""
        leaves = [requires_grad_(detach(x), i in wrt) for i, x in _enumerate(args)]
        lval = loss_of(s, leaves, (), g)()
        which = [leaves[i] for i in wrt]
        grads = autograd_grad(lval, which, allow_unused=True)
        return (detach(lval), *(zeros_like(x) if gr is None else gr for x, gr in _zip(which, grads, strict=True)))

    def jvp_op(s: Subject, *xs: torch.Tensor, which: Sequence[int] = ()) -> Any:
        """torch.func.jvp of view(f) along tangents of the arguments ``which`` (``xs``: the
        arguments, then one tangent per index of ``which``)."""
        k = _len(xs) - _len(which)
        primals, tangents = _list(xs[:k]), xs[k:]
        ts = _tuple(
            to(tg, dtype=dtype_of(primals[i]), device=device_of(primals[i]))
            for i, tg in _zip(which, tangents, strict=True)
        )
        return jvp(along(s, primals, which), _tuple(primals[i] for i in which), ts)[1]

    def second(s: Subject, g: torch.Tensor, *xs: torch.Tensor, which: Sequence[int] = (), mode: str = "") -> Any:
        """v'Hw of L = sum(view(f(P)) * G) by the target's own derivatives in ``mode`` (second_ff,
        second_fr, second_rr); ``xs``: the arguments, then v and w (one tangent each per index of
        ``which``)."""
        m = _len(which)
        k = _len(xs) - 2 * m
        primals = _list(xs[:k])
        vt, wt = _tuple(xs[k : k + m]), _tuple(xs[k + m :])
        p0 = _tuple(primals[i] for i in which)
        loss = loss_of(s, primals, which, g)

        def dot(a: Sequence[torch.Tensor], c: Sequence[torch.Tensor]) -> Any:
            out = zeros((), dtype=f64)
            for x, y in _zip(a, c, strict=True):
                out = out + tsum(mul(x, y))
            return out

        if mode == "second_ff":
            val = jvp(lambda *ys: jvp(loss, ys, vt)[1], p0, wt)[1]
        elif mode == "second_fr":
            hw = jvp(grad(loss, argnums=_tuple(_range(_len(p0)))), p0, wt)[1]
            val = dot(hw, vt)
        elif mode == "second_rr":
            leaves = [requires_grad_(clone(detach(x)), True) for x in p0]
            gr = autograd_grad(loss(*leaves), leaves, create_graph=True)
            hv = autograd_grad(dot(gr, vt), leaves, allow_unused=True)
            val = dot(_tuple(zeros_like(x) if h is None else h for x, h in _zip(leaves, hv, strict=True)), wt)
        else:
            raise LookupError(f"no second-order mode {mode!r}")
        return reshape(detach(as_tensor(val)), (1,))

    def vmap_op(s: Subject, *stacked: torch.Tensor) -> Any:
        """torch.func.vmap of the target over parameters stacked on a leading axis."""
        return vmap(s.fn)(*stacked)

    def reach(s: Subject, q: torch.Tensor, x0: torch.Tensor, steps: int = 100) -> Any:
        """X after L-BFGS (3 x ``steps`` iterations from X0) on ||f(X) - Q||_F^2; the verifier
        measures the distance itself from a forward call at X."""
        x = requires_grad_(clone(detach(x0)), True)
        opt = LBFGS(
            [x], lr=1, max_iter=steps, line_search_fn="strong_wolfe", tolerance_grad=1e-14, tolerance_change=1e-16
        )

        def closure() -> torch.Tensor:
            zero_grad(opt)
            d = s.fn(x) - q
            loss = tsum(mul(d, d))
            backward(loss)
            return loss

        for _ in _range(3):
            opt_step(opt, closure)
        return detach(x)

    def inverse(s: Subject, w: torch.Tensor) -> Any:
        """The target's own inverse map (a parametrisation's ``right_inverse``) at W."""
        if s.inverse is None:
            raise LookupError("the target declares no inverse map")
        return s.inverse(w)

    def also(s: Subject, *args: torch.Tensor) -> Any:
        """The target's declared second entry point (``declare(also=...)``) on ``args``."""
        if s.also is None:
            raise LookupError("the target declares no second entry point")
        return s.also(*args)

    def domain(s: Subject, *xs: torch.Tensor, keys: Sequence[str] = (), index: int = 0) -> Json:
        """Why the point ``dict(zip(keys, xs))`` lies outside the ``index``-th domain predicate the
        target declares (its own code, run here): a reason string, or None (inside)."""
        why = s.predicates[index]({k: tnumpy(tcpu(detach(x))) for k, x in _zip(keys, xs, strict=True)})
        return _Json(None if why is None else _str(why)[:300])

    # -------------------------------------------------------------------------- the module's life
    def build(s: Subject, n: int, seed: int, dtype: torch.dtype) -> Any:
        """A fresh module after ``torch.manual_seed(seed)``, built with ``dtype`` as the default
        dtype (its initialisation as accurate as the dtype allows), then moved to ``dtype``."""
        if s.module is None:
            raise LookupError("the target declares no module factory")
        manual_seed(seed)
        default = get_default()
        set_default(dtype)
        try:
            m = s.module(n)
        finally:
            set_default(default)
        if not _isinstance(m, Module):
            raise TypeError(f"the declared module factory returned {_type(m).__name__}, not a torch.nn.Module")
        return module_to(m, dtype)

    def weight(s: Subject, m: Any) -> torch.Tensor:
        w: Any = s.weight(m) if s.weight is not None else _getattr(m, "weight", None)
        if not _isinstance(w, Tensor):
            raise TypeError(f"the module's weight is a {_type(w).__name__}, not a torch.Tensor")
        out: torch.Tensor = w
        return out

    def kept(w: torch.Tensor) -> torch.Tensor:
        return clone(detach(w))

    def step(s: Subject, m: Any, opt: Any, seed: int) -> None:
        """One step of ``opt`` on the linear loss sum(W * G), G fixed by ``seed``."""
        zero_grad(opt)
        w = weight(s, m)
        g = as_tensor(default_rng(seed).standard_normal(_tuple(shape_of(w))), device=device_of(w))
        backward(tsum(mul(w, to(g, dtype_of(w)))))
        opt_step(opt)

    def weight_decay(s: Subject, *, n: int, opt: int, steps: int, seed: int, dtype: str) -> list[torch.Tensor]:
        """The weight at initialisation and after each of ``steps`` steps of optimiser ``opt``."""
        m = build(s, n, seed, dtypes[dtype])
        out = [kept(weight(s, m))]
        cls, lr = optimisers[opt]
        o = cls(_list(parameters(m)), lr=lr, weight_decay=0.1)
        for _ in _range(steps):
            step(s, m, o, seed)
            out.append(kept(weight(s, m)))
        return out

    def state_dict_op(s: Subject, *, n: int, seed: int, dtype: str) -> list[torch.Tensor]:
        """Module A after two Adam steps, a fresh module B (another seed) loaded with A's state_dict:
        the weights of A and B, then of each after one more SGD step."""
        dt = dtypes[dtype]
        a = build(s, n, seed, dt)
        opt = Adam(_list(parameters(a)), lr=0.01)
        for _ in _range(2):
            step(s, a, opt, seed)
        saved = {k: clone(detach(v)) for k, v in state_dict(a).items()}
        bm = build(s, n, seed + 1, dt)
        load_state_dict(bm, saved)
        out = [kept(weight(s, a)), kept(weight(s, bm))]
        for mod in (a, bm):
            step(s, mod, SGD(_list(parameters(mod)), lr=0.1), seed + 2)
        return [*out, kept(weight(s, a)), kept(weight(s, bm))]

    def dtype_cast(s: Subject, *, n: int, cast: int, seed: int) -> list[torch.Tensor]:
        """A module built in float32, cast (``.double()`` etc.): its weight, then after one SGD step."""
        name, _dt = casts[cast]
        m = _getattr(build(s, n, seed, torch.float32), name)()
        out = [kept(weight(s, m))]
        step(s, m, SGD(_list(parameters(m)), lr=0.1), seed)
        return [*out, kept(weight(s, m))]

    def to_device(s: Subject, *, n: int, seed: int, dtype: str, other: str) -> list[torch.Tensor]:
        """A module built on the cpu: its weight there, after ``.to(other)`` (the device travels with
        it), and after one SGD step there."""
        m = build(s, n, seed, dtypes[dtype])
        here = kept(weight(s, m))
        m = module_to(m, other)
        there = kept(weight(s, m))
        step(s, m, SGD(_list(parameters(m)), lr=0.1), seed)
        return [here, there, kept(weight(s, m))]

    return {
        wire.op_forward: forward,
        wire.op_loss_grad: make_substituted(loss_grad),  # substitute=...: a torch op by its reference formulation
        wire.op_jvp: make_substituted(jvp_op),
        wire.op_second: make_substituted(second),
        wire.op_vmap: vmap_op,
        wire.op_reach: reach,
        wire.op_inverse: inverse,
        wire.op_also: also,
        wire.op_domain: domain,
        wire.op_weight_decay: weight_decay,
        wire.op_state_dict: state_dict_op,
        wire.op_dtype_cast: dtype_cast,
        wire.op_to_device: to_device,
    }


# ------------------------------------------------------------------------------ one call
Executor = Callable[[Subject, str, list[torch.Tensor], dict[str, Any]], tuple[dict[str, Any], list[Any]]]


def make_executor(codec: Codec | None = None) -> Executor:
    """``execute(subject, op, args, kw)`` -> (header, items): the operation run on the subject and
    what it gave: ``error`` (the target's exception), ``type`` (an output that cannot be read),
    ``json`` (a :class:`Json` answer), else the outputs as ``raw`` blobs; ``n_out`` of them,
    followed by the arguments as they are after the call (the verifier compares them with what
    it sent); ``side``: a changed working directory (put back)."""
    _encode, _decode, raw = codec or make_codec()
    ops = make_ops()
    getcwd, chdir = os.getcwd, os.chdir
    format_exc = traceback.format_exc
    b = builtins
    _type, _list, _tuple, _str, _len, _dict = b.type, b.list, b.tuple, b.str, b.len, b.dict
    _BaseException, _KeyboardInterrupt, _OSError = b.BaseException, b.KeyboardInterrupt, b.OSError
    _Json, _WireError = Json, WireError

    def execute(
        s: Subject, name: str, args: list[torch.Tensor], kw: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Any]]:
        res: dict[str, Any] = {"side": []}
        op = ops.get(name)
        cwd = getcwd()
        out: Any = None
        try:
            if op is None:
                raise LookupError(f"no operation {name!r}")
            out = op(s, *args, **_dict(kw))
        except _BaseException as exc:  # the target's own error, whatever it is
            if _type(exc) is _KeyboardInterrupt:
                raise
            res["error"] = f"{_type(exc).__name__}: {exc}".strip()[:500]
            res["traceback"] = format_exc(limit=6)[-2000:]
        try:
            now = getcwd()
        except _OSError:
            now = "(deleted)"
        if now != cwd:
            res["side"].append(f"changes the working directory (to {now})")
            chdir(cwd)
        items: list[Any] = []
        if "error" not in res and _type(out) is _Json:
            v = out.value
            res["json"] = v if v is None or _type(v) is _str else _str(v)
        elif "error" not in res:
            outs = _list(out) if _type(out) in (_tuple, _list) else [out]
            try:
                items = [None if o is None else raw(o) for o in outs]
            except _WireError as exc:
                res["type"], items = _str(exc), []
            except _BaseException as exc:  # reading the output ran the target's code (say, a property)
                if _type(exc) is _KeyboardInterrupt:
                    raise
                res["type"], items = f"its output cannot be read: {_type(exc).__name__}: {exc}"[:500], []
        res["n_out"] = _len(items)
        after: list[Any] = []
        for x in args:
            try:
                after.append(raw(x))
            except _BaseException as exc:
                if _type(exc) is _KeyboardInterrupt:
                    raise
                after.append(None)
        return res, [*items, *after]

    return execute


# ------------------------------------------------------------------------------ the serving loop
def make_capture(keep: int) -> Callable[[], tuple[int, str]]:
    """``take()``: (bytes written to stdout/stderr since the last take, the first ``keep`` of them).
    File descriptors 1 and 2 are redirected into a pipe drained by a thread that counts the bytes
    (a flood neither blocks nor fills anything); everything it calls is bound now."""
    read, lock, b = os.read, threading.Lock(), builtins
    _len, _Exception = b.len, b.Exception
    streams = (sys.stdout, sys.stderr)
    flushes = [s.flush for s in streams]
    for flush in flushes:
        flush()
    r, w = os.pipe()
    os.dup2(w, 1)
    os.dup2(w, 2)
    os.close(w)
    count, head = 0, b""  # bytes since the last take, the first of them

    def drain() -> None:
        nonlocal count, head
        while chunk := read(r, 1 << 16):
            with lock:
                count += _len(chunk)
                if _len(head) < keep:
                    head += chunk[: keep - _len(head)]

    def take() -> tuple[int, str]:
        nonlocal count, head
        for flush in flushes:
            try:
                flush()
            except _Exception:  # a target may have closed them
                pass
        with lock:
            out = count, head.decode(errors="replace")
            count, head = 0, b""
        return out

    threading.Thread(target=drain, daemon=True, name="orthoverify-capture").start()
    return take


def make_server(
    fd: int, take_output: Callable[[], tuple[int, str]]
) -> tuple[Callable[[Subject, str], None], Callable[[dict[str, Any]], None]]:
    """(serve, say). ``say(header)`` sends one message of JSON data (the hello after loading the
    target). ``serve(subject, device)``: answer the verifier's requests on the connection ``fd`` (the
    framing of ``multiprocessing.connection``: a 4-byte big-endian length, or -1 and an 8-byte
    one) until it says stop or goes away. Built, with everything it calls, before the target is
    imported; ``take_output`` says how many bytes the target wrote to stdout/stderr since the
    last call, and the first of them."""
    codec = make_codec()
    encode, decode, _raw = codec
    execute = make_executor(codec)
    read, write = os.read, os.write
    pack, unpack = struct.pack, struct.unpack
    to = torch.Tensor.to
    b = builtins
    _len, _str, _dict, _isinstance, _min = b.len, b.str, b.dict, b.isinstance, b.min
    _bytearray, _bytes, _memoryview, _EOFError, _OSError = b.bytearray, b.bytes, b.memoryview, b.EOFError, b.OSError
    _ValueError = b.ValueError

    def read_exact(n: int) -> bytes:
        buf = _bytearray()
        while _len(buf) < n:
            chunk = read(fd, _min(n - _len(buf), 1 << 20))
            if not chunk:
                raise _EOFError
            buf += chunk
        return _bytes(buf)

    def recv() -> bytes:
        (size,) = unpack("!i", read_exact(4))
        if size == -1:
            (size,) = unpack("!Q", read_exact(8))
        return read_exact(size)

    def send(data: bytes) -> None:
        n = _len(data)
        head = pack("!i", n) if n <= 0x7FFFFFFF else pack("!i", -1) + pack("!Q", n)
        view = _memoryview(head + data)
        while _len(view):
            view = view[write(fd, view) :]

    def serve(subject: Subject, device: str) -> None:
        while True:
            try:
                header, tensors, _devices = decode(recv())
            except (_EOFError, _OSError, _ValueError):
                return
            if header.get("op") == "stop":
                return
            dev = _str(header.get("device") or device)
            args: list[torch.Tensor] = [to(x, dev) for x in tensors if x is not None]
            kw: Any = header.get("kw")
            res, items = execute(subject, _str(header.get("op")), args, kw if _isinstance(kw, _dict) else {})
            res["written"], res["head"] = take_output()
            try:
                send(encode(res, items))
            except _OSError:
                return

    def say(header: dict[str, Any]) -> None:
        send(encode(header, []))

    return serve, say
