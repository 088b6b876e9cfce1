"""The protocol between the verifier and the target's process: the operations it serves, by name
with their keywords (:data:`OPERATIONS`, read by both sides), and the wire format, a JSON header
and raw tensor bytes of the dtype and shape it names (read with ``np.frombuffer``), nothing
unpickled or evaluated. :func:`make_codec` binds everything it calls when it is made, so the
target's process makes its codec before the target is imported (see
:mod:`~orthoverify.isolation.program`).
"""

from __future__ import annotations

import builtins
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

WIRE_DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
"""The dtypes that travel (bfloat16 as float32, exactly); any other output is refused."""


op_forward = "forward"
op_loss_grad = "loss_grad"
op_jvp = "jvp"
op_second = "second"
op_vmap = "vmap"
op_reach = "reach"
op_inverse = "inverse"
op_also = "also"
op_domain = "domain"
op_weight_decay = "weight_decay"
op_state_dict = "state_dict"
op_dtype_cast = "dtype_cast"
op_to_device = "to_device"

OPERATIONS: dict[str, dict[str, type]] = {
    op_forward: {},
    op_loss_grad: {"wrt": list, "substitute": str},
    op_jvp: {"which": list, "substitute": str},
    op_second: {"which": list, "mode": str, "substitute": str},
    op_vmap: {},
    op_reach: {"steps": int},
    op_inverse: {},
    op_also: {},
    op_domain: {"keys": list, "index": int},
    op_weight_decay: {"n": int, "opt": int, "steps": int, "seed": int, "dtype": str},
    op_state_dict: {"n": int, "seed": int, "dtype": str},
    op_dtype_cast: {"n": int, "cast": int, "seed": int},
    op_to_device: {"n": int, "seed": int, "dtype": str, "other": str},
}
"""The operations the target's process serves (:func:`~orthoverify.isolation.program.make_ops`
builds exactly these), each with the keywords it takes and their JSON types; its tensors travel
positionally. The verifier checks each request against it (:func:`check_request`)."""


def check_request(op: str, kw: dict[str, Any]) -> None:
    """Raise ValueError for an operation or keyword :data:`OPERATIONS` does not declare, or a value
    of another type: the verifier's own mistake, caught here so it is never taken for the target's."""
    sig = OPERATIONS.get(op)
    if sig is None:
        raise ValueError(f"no operation {op!r}")
    bad = [k for k, v in kw.items() if k not in sig or not isinstance(v, sig[k])]
    if bad:
        raise ValueError(f"operation {op!r}: keywords {bad} not as declared ({sig})")


class Json:
    """An operation's answer that is JSON data, not tensors (a domain predicate's reason)."""

    def __init__(self, value: str | None) -> None:
        self.value = value


class WireError(ValueError):
    """A message or an output that cannot travel (malformed, or a value that cannot be read)."""


Blob = tuple[dict[str, Any], bytes]


Codec = tuple[
    Callable[[dict[str, Any], Sequence[Any]], bytes],
    Callable[[bytes], tuple[dict[str, Any], list[torch.Tensor | None], list[str | None]]],
    Callable[[Any], Blob],
]


# ------------------------------------------------------------------------------ the wire
def make_codec() -> Codec:
    """(encode, decode, raw): the wire codec with every function it calls bound now.

    ``raw(x)`` is a tensor's (meta, bytes), read through ``torch.Tensor``'s own methods with
    ``__torch_function__`` disabled; it raises :class:`WireError` for anything else.
    ``encode(header, items)`` packs a JSON header and items (tensors, None, or ``raw`` blobs);
    ``decode(data)`` gives (header, tensors, devices) and raises ValueError on anything
    malformed (sizes, dtypes and shapes are checked; ``np.frombuffer``, never a pickle)."""
    b = builtins
    _type, _isinstance, _len, _int, _str, _list, _dict = b.type, b.isinstance, b.len, b.int, b.str, b.list, b.dict
    _tuple, _bytes, _memoryview, _all, _ValueError = b.tuple, b.bytes, b.memoryview, b.all, b.ValueError
    _WireError, struct_error = WireError, struct.error
    dumps, loads = json.dumps, json.loads
    pack, unpack_from = struct.pack, struct.unpack_from
    Tensor = torch.Tensor
    base_dispatch = Tensor.__torch_dispatch__
    no_function = torch._C.DisableTorchFunction
    detach, to, contiguous, numpy = Tensor.detach, Tensor.to, Tensor.contiguous, Tensor.numpy
    resolve_conj, resolve_neg = Tensor.resolve_conj, Tensor.resolve_neg
    anyt: Any = Tensor  # the descriptors, not the typed attributes
    dtype_of, device_of, shape_of = anyt.dtype.__get__, anyt.device.__get__, anyt.shape.__get__
    tobytes = np.ndarray.tobytes
    frombuffer, np_dtype, from_numpy = np.frombuffer, np.dtype, torch.from_numpy
    names = {v: k for k, v in WIRE_DTYPES.items()}
    by_name = dict(WIRE_DTYPES)
    bf16, f32 = torch.bfloat16, torch.float32

    def raw(x: Any) -> Blob:
        if not _isinstance(x, Tensor):
            raise _WireError(f"returned {_type(x).__name__}, not a torch.Tensor")
        if _type(x) is not Tensor and _type(x).__torch_dispatch__ is not base_dispatch:
            raise _WireError(
                f"returned a torch.Tensor subclass {_type(x).__name__} with its own __torch_dispatch__ "
                "(its values cannot be read)"
            )
        with no_function():  # torch.Tensor's own methods, not the object's (a subclass reads as its storage)
            y = detach(x)
            name = names.get(dtype_of(y))
            if name is None:
                raise _WireError(f"returned dtype {dtype_of(y)}, which does not travel")
            dev = _str(device_of(y))
            y = resolve_neg(resolve_conj(to(y, "cpu")))
            if name == "bfloat16":
                y = to(y, f32)
            shape = [_int(s) for s in shape_of(y)]
            data = tobytes(numpy(contiguous(y)))
        return {"dtype": name, "shape": shape, "bytes": _len(data), "device": dev}, data

    def encode(header: dict[str, Any], items: Sequence[Any]) -> bytes:
        meta: list[dict[str, Any] | None] = []
        blobs: list[bytes] = []
        for item in items:
            if item is None:
                meta.append(None)
                continue
            m, data = item if _type(item) is _tuple else raw(item)
            meta.append(m)
            blobs.append(data)
        head = dumps({**header, "tensors": meta}).encode()
        return pack("<Q", _len(head)) + head + b"".join(blobs)

    def decode(data: bytes) -> tuple[dict[str, Any], list[torch.Tensor | None], list[str | None]]:
        try:
            (n,) = unpack_from("<Q", data, 0)
        except struct_error as exc:
            raise _ValueError(f"a message too short ({_len(data)} bytes)") from exc
        if n > _len(data) - 8:
            raise _ValueError("a header longer than the message")
        header = loads(_bytes(_memoryview(data)[8 : 8 + n]).decode())
        if not _isinstance(header, _dict):
            raise _ValueError("the header is not a JSON object")
        metas = header.get("tensors", [])
        if not _isinstance(metas, _list):
            raise _ValueError("the header's tensors are not a list")
        pos = 8 + n
        out: list[torch.Tensor | None] = []
        devices: list[str | None] = []
        for m in metas:
            if m is None:
                out.append(None)
                devices.append(None)
                continue
            if not _isinstance(m, _dict) or m.get("dtype") not in by_name:
                raise _ValueError(f"a tensor of unknown dtype {m!r:.80}")
            shape, size = m.get("shape"), m.get("bytes")
            if not (_isinstance(shape, _list) and _all(_type(s) is _int and 0 <= s < 1 << 40 for s in shape)):
                raise _ValueError("a tensor's shape is not a list of sizes")
            name = "float32" if m["dtype"] == "bfloat16" else m["dtype"]
            dt = np_dtype(name)
            count = 1
            for s in shape:
                count *= s
            if _type(size) is not _int or size != count * dt.itemsize or pos + size > _len(data):
                raise _ValueError("a tensor's byte count does not match its shape, or the message is cut short")
            arr = frombuffer(data, dtype=dt, count=count, offset=pos).reshape(shape).copy()
            pos += size
            t = from_numpy(arr)
            if m["dtype"] == "bfloat16":
                t = to(t, bf16)
            out.append(t)
            dev = m.get("device")
            devices.append(dev if _isinstance(dev, _str) else None)
        if pos != _len(data):
            raise _ValueError("bytes after the last tensor")
        return header, out, devices

    return encode, decode, raw
