"""Backends: one arithmetic each (see :mod:`orthoverify.backends.base` for the protocol).

Names used on the command line and in results:

``numpy-float32``, ``numpy-float64``, ``torch-float32``, ``torch-float64`` (``float``
evidence; torch runs on ``--device cpu`` or ``cuda``), ``mpmath`` (50 digits) or
``mpmath-D`` (D digits) (``high-precision`` evidence), ``flint`` (50 digits) or ``flint-D``
(Arb ball arithmetic; ``high-precision`` evidence, and the enclosures behind ``rigorous``
evidence; needs the optional extra ``pip install 'orthoverify[flint]'``), ``sympy`` (exact,
``symbolic``).

The torch backend's module, and torch with it (1.3 to 1.7 s to import on this project's machine),
loads when a torch backend is first asked for, not with this package: the engine, the claims and
the report run without torch, and so does every pool worker until it runs a torch task. It is
declared at the top as a module loaded on first use (:mod:`orthoverify._lazy`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from orthoverify._lazy import lazy_module
from orthoverify.backends.base import Array, Backend, Scalar, host_array, reject_dtype
from orthoverify.backends.flint_backend import FlintBackend
from orthoverify.backends.flint_backend import flint_available as _available
from orthoverify.backends.flops import FlopBackend
from orthoverify.backends.mpmath_backend import DEFAULT_DIGITS, MpmathBackend
from orthoverify.backends.numpy_backend import NumpyBackend
from orthoverify.backends.sympy_backend import SympyBackend
from orthoverify.errors import BackendError, InputError

if TYPE_CHECKING:  # torch loads when a torch backend is first asked for (module docstring)
    from orthoverify.backends import torch_backend
else:
    torch_backend = lazy_module("orthoverify.backends.torch_backend")

FLOAT_BACKENDS: tuple[str, ...] = ("numpy-float32", "numpy-float64", "torch-float32", "torch-float64")
"""Every float backend, in the order results list them."""

ALL_BACKENDS: tuple[str, ...] = (*FLOAT_BACKENDS, "mpmath", "sympy")

__all__ = [
    "ALL_BACKENDS",
    "DEFAULT_DIGITS",
    "FLOAT_BACKENDS",
    "MAX_DIGITS",
    "Array",
    "Backend",
    "Scalar",
    "cuda_available",
    "flint_available",
    "get_backend",
    "high_precision_backend",
    "infer_backend",
    "rigorous_backend_names",
]


def flint_available() -> bool:
    """True when python-flint (the optional ``flint`` extra) imports."""
    return _available()


def high_precision_backend(digits: int = DEFAULT_DIGITS) -> Backend:
    """The fastest high-precision arithmetic installed: python-flint's Arb balls when available,
    else mpmath (the fallback, always installed), at ``digits`` decimal digits."""
    suffix = "" if digits == DEFAULT_DIGITS else f"-{digits}"
    return get_backend(("flint" if flint_available() else "mpmath") + suffix)


def rigorous_backend_names() -> tuple[str, ...]:
    """Where a ``rigorous`` check runs: flint when installed; else mpmath, on which such a check
    records itself as skipped (an unproved bound is never a passed one)."""
    return ("flint",) if flint_available() else ("mpmath",)


def cuda_available() -> bool:
    """True when torch sees a CUDA device."""
    return bool(torch_backend.cuda_available())


def get_backend(name: str, device: str = "cpu") -> Backend:
    """The backend called ``name`` (see the module docstring); ``device`` applies to torch.

    One instance per (name, device) for torch and per name otherwise, so that e.g. every
    50-digit mpmath backend shares one context."""
    if not isinstance(name, str) or not isinstance(device, str):
        raise BackendError(f"a backend name and device are strings, got {name!r} and {device!r}")
    return _get_backend(name, device if name.startswith("torch") else "cpu")


MAX_DIGITS = 300
"""The most decimal digits a high-precision backend name may ask for: every backend states its unit
roundoff as a float64 (``eps``), and from about 308 digits on it is subnormal, then 0.0, which
would make the arithmetic pass for exact (at 1000 digits a replay divided by zero)."""


def _digits(name: str) -> int:
    family = name.split("-", 1)[0]
    try:
        digits = int(name.split("-", 1)[1])
    except ValueError:
        raise BackendError(f"bad {family} backend name {name!r}: use {family}-<digits>") from None
    if not 16 <= digits <= MAX_DIGITS:
        raise BackendError(f"{family} backend {name!r}: digits must lie in [16, {MAX_DIGITS}] (float64 below 16)")
    return digits


@functools.cache
def _get_backend(name: str, device: str) -> Backend:
    if name in ("numpy-float32", "numpy-float64"):
        return NumpyBackend(name.split("-")[1])
    if name in ("torch-float32", "torch-float64"):
        return torch_backend.TorchBackend(name.split("-")[1], device)
    if name == "mpmath":
        return MpmathBackend(DEFAULT_DIGITS)
    if name.startswith("mpmath-"):
        return MpmathBackend(_digits(name))
    if name == "flint" or name.startswith("flint-"):
        if name == "flint":
            return FlintBackend(DEFAULT_DIGITS)
        return FlintBackend(_digits(name))
    if name == "sympy":
        return SympyBackend()
    if name == "flops":
        return FlopBackend()
    raise BackendError(
        f"unknown backend {name!r}; known backends: {', '.join(ALL_BACKENDS)}, flops, flint "
        "(and mpmath-<digits>, flint-<digits>)"
    )


def infer_backend(x: Any) -> Backend:
    """The backend matching a native array: its library, dtype and device."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "device"):
        import torch

        dtype = {torch.float32: "float32", torch.float64: "float64"}.get(x.dtype)
        if dtype is None:
            raise reject_dtype(str(x.dtype).replace("torch.", ""), "input", "torch")
        if x.device.type == "meta":
            raise InputError("the input is a meta tensor: it has a shape but no values to compute with")
        return get_backend(f"torch-{dtype}", str(x.device))  # cuda:1 stays cuda:1
    arr = host_array(x, "input", "numpy") if not isinstance(x, np.ndarray) else x
    if arr.dtype == np.float32:
        return get_backend("numpy-float32")
    if arr.dtype == object and arr.size:
        first = arr.reshape(-1)[0]
        if type(first).__module__.startswith("mpmath"):
            ctx = getattr(first, "context", None)
            digits = int(ctx.dps) if ctx is not None else DEFAULT_DIGITS
            return get_backend("mpmath" if digits == DEFAULT_DIGITS else f"mpmath-{digits}")
        if getattr(type(first), "_orthoverify_ball", False):
            for digits in range(int(type(first).prec * 0.30103), 0, -1):  # the digits whose precision made it
                if FlintBackend.prec_of(digits) == type(first).prec:
                    return get_backend("flint" if digits == DEFAULT_DIGITS else f"flint-{digits}")
            return get_backend("flint")
        if type(first).__module__.startswith("sympy"):
            return get_backend("sympy")
    return get_backend("numpy-float64")
