"""Backends: one arithmetic each (see :mod:`orthoverify.backends.base` for the protocol).

Names used on the command line and in results:

``numpy-float32``, ``numpy-float64``, ``torch-float32``, ``torch-float64`` (``float``
evidence; torch runs on ``--device cpu`` or ``cuda``), ``mpmath`` (50 digits) or
``mpmath-D`` (D digits) (``high-precision`` evidence), ``sympy`` (exact, ``symbolic``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from orthoverify.backends.base import Array, Backend, Scalar
from orthoverify.backends.mpmath_backend import DEFAULT_DIGITS, MpmathBackend
from orthoverify.backends.numpy_backend import NumpyBackend
from orthoverify.backends.sympy_backend import SympyBackend
from orthoverify.errors import BackendError

FLOAT_BACKENDS: tuple[str, ...] = ("numpy-float32", "numpy-float64", "torch-float32", "torch-float64")
"""Every float backend, in the order results list them."""

ALL_BACKENDS: tuple[str, ...] = (*FLOAT_BACKENDS, "mpmath", "sympy")

__all__ = [
    "ALL_BACKENDS",
    "DEFAULT_DIGITS",
    "FLOAT_BACKENDS",
    "Array",
    "Backend",
    "Scalar",
    "cuda_available",
    "get_backend",
    "infer_backend",
]


def cuda_available() -> bool:
    """True when torch sees a CUDA device."""
    from orthoverify.backends.torch_backend import cuda_available as _cuda

    return _cuda()


def get_backend(name: str, device: str = "cpu") -> Backend:
    """The backend called ``name`` (see the module docstring); ``device`` applies to torch.

    One instance per (name, device) for torch and per name otherwise, so that e.g. every
    50-digit mpmath backend shares one context."""
    return _get_backend(name, device if name.startswith("torch") else "cpu")


@functools.cache
def _get_backend(name: str, device: str) -> Backend:
    if name in ("numpy-float32", "numpy-float64"):
        return NumpyBackend(name.split("-")[1])
    if name in ("torch-float32", "torch-float64"):
        from orthoverify.backends.torch_backend import TorchBackend

        return TorchBackend(name.split("-")[1], device)
    if name == "mpmath":
        return MpmathBackend(DEFAULT_DIGITS)
    if name.startswith("mpmath-"):
        try:
            digits = int(name.split("-", 1)[1])
        except ValueError:
            raise BackendError(f"bad mpmath backend name {name!r}: use mpmath-<digits>") from None
        return MpmathBackend(digits)
    if name == "sympy":
        return SympyBackend()
    if name == "flops":
        from orthoverify.backends.flops import FlopBackend

        return FlopBackend()
    raise BackendError(
        f"unknown backend {name!r}; known backends: {', '.join(ALL_BACKENDS)}, flops (and mpmath-<digits>)"
    )


def infer_backend(x: Any) -> Backend:
    """The backend matching a native array: its library, dtype and device."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "device"):
        import torch

        dtype = {torch.float32: "float32", torch.float64: "float64"}.get(x.dtype)
        if dtype is None:
            from orthoverify.backends.base import reject_dtype

            raise reject_dtype(str(x.dtype).replace("torch.", ""), "input", "torch")
        return get_backend(f"torch-{dtype}", x.device.type)
    arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if arr.dtype == np.float32:
        return get_backend("numpy-float32")
    if arr.dtype == object and arr.size:
        first = arr.reshape(-1)[0]
        if type(first).__module__.startswith("mpmath"):
            ctx = getattr(first, "context", None)
            digits = int(ctx.dps) if ctx is not None else DEFAULT_DIGITS
            return get_backend("mpmath" if digits == DEFAULT_DIGITS else f"mpmath-{digits}")
        if type(first).__module__.startswith("sympy"):
            return get_backend("sympy")
    return get_backend("numpy-float64")
