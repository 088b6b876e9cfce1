"""PyTorch backends: float32 and float64 on cpu or cuda (the same code on either device)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from orthoverify.backends.base import Array, Backend, Scalar, exact_decimal, nested_map, reject_dtype
from orthoverify.backends.numpy_backend import _numeric_numpy, narrowed
from orthoverify.errors import BackendError, DomainError, DTypeError, InputError

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_NUMPY = {torch.float32: np.float32, torch.float64: np.float64}


def float_tensor(x: object, name: str) -> torch.Tensor:
    """``x`` if it is a float32 or float64 torch tensor with data (not on the meta device): the
    check every torch-native entry point (modules, autograd Functions) makes first."""
    if not isinstance(x, torch.Tensor):
        raise DTypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in _DTYPES.values():
        raise reject_dtype(str(x.dtype).replace("torch.", ""), name, "torch")
    if x.device.type == "meta":
        raise InputError(f"{name} is a meta tensor: it has a shape but no values to compute with")
    return x


def cuda_available() -> bool:
    """True when torch can run on a CUDA device here."""
    return bool(torch.cuda.is_available())


class TorchBackend(Backend):
    """IEEE float32 or float64 arithmetic through PyTorch, differentiable by autograd."""

    family = "torch"
    method = "float"

    def __init__(self, dtype: str = "float64", device: str = "cpu") -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"unsupported torch dtype {dtype}")
        if device.startswith("cuda") and not cuda_available():
            raise BackendError(
                "CUDA was requested but torch.cuda.is_available() is False on this machine; use --device cpu"
            )
        if not (device == "cpu" or device.startswith("cuda") or (device.startswith("cpu:") and device[4:].isdigit())):
            raise BackendError(f"unknown device {device!r}: use 'cpu' or 'cuda'")
        self.dtype = _DTYPES[dtype]
        self.device = torch.device(device)
        self.name = f"torch-{dtype}"
        self.eps = float(torch.finfo(self.dtype).eps) / 2
        self.tiny = float(torch.finfo(self.dtype).tiny)
        self.digits = 6 if dtype == "float32" else 15

    @property
    def label(self) -> str:
        return f"{self.name}-{self.device.type}"

    def asarray(self, x: Any, *, name: str = "array") -> Array:
        if isinstance(x, torch.Tensor):
            if x.device.type == "meta":
                raise InputError(f"{name} is a meta tensor: it has a shape but no values to compute with")
            if x.is_complex() or x.dtype in (torch.bool, torch.float16, torch.bfloat16):
                raise reject_dtype(str(x.dtype).replace("torch.", ""), name, self.label)
            out = x.to(dtype=self.dtype, device=self.device)
            if out.dtype != x.dtype and out.dtype.itemsize < x.dtype.itemsize and bool(
                (torch.isinf(out) & torch.isfinite(x.to(device=self.device))).any()
            ):
                big = torch.finfo(self.dtype).max
                raise DomainError(f"{name} has entries beyond {self.label}'s range [-{big:.3g}, {big:.3g}]")
            return out
        arr = narrowed(_numeric_numpy(x, name, self.label), _NUMPY[self.dtype], name, self.label)
        return torch.as_tensor(arr, dtype=self.dtype, device=self.device)

    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        return torch.zeros(shape, dtype=self.dtype, device=self.device)

    def eye(self, n: int) -> Array:
        return torch.eye(n, dtype=self.dtype, device=self.device)

    def scalar(self, v: Any) -> Scalar:
        return torch.tensor(float(v), dtype=self.dtype, device=self.device)

    def to_numpy(self, x: Array) -> np.ndarray:
        if isinstance(x, torch.Tensor):
            return x.detach().to("cpu", torch.float64).numpy()
        return np.asarray(x, dtype=np.float64)

    def to_float(self, x: Any) -> float:
        """One number read off a tensor; also inside torch.func transforms (jvp, grad), whose
        wrapped tensors have no storage for ``numpy()`` but give their value to ``float()``."""
        if isinstance(x, torch.Tensor):
            return float(x.detach().reshape(()))
        return super().to_float(x)

    def to_strings(self, x: Array) -> Any:
        return nested_map(lambda v: exact_decimal(float(v)), self.to_numpy(x))

    def sqrt(self, x: Any) -> Any:
        return torch.sqrt(x)

    def abs(self, x: Any) -> Any:
        return torch.abs(x)

    def sign(self, x: Scalar) -> Scalar:
        return torch.sign(x)

    def exp(self, x: Any) -> Any:
        return torch.exp(x)

    def log(self, x: Any) -> Any:
        return torch.log(x)

    def cos(self, x: Any) -> Any:
        return torch.cos(x)

    def sin(self, x: Any) -> Any:
        return torch.sin(x)

    def atan2(self, y: Any, x: Any) -> Any:
        return torch.atan2(y, x)

    def pi(self) -> Scalar:
        return self.scalar(math.pi)

    def svd(self, a: Array) -> tuple[Array, Array, Array]:
        u, s, vh = torch.linalg.svd(a, full_matrices=True)
        return u, s, vh.mT

    def max_abs(self, x: Array) -> Scalar:
        if x.numel() == 0:
            return self.scalar(0)
        return torch.max(torch.abs(x))

    def sum(self, x: Array) -> Scalar:
        return torch.sum(x)

    def transpose(self, x: Array) -> Array:
        return x.transpose(0, 1)

    def triu(self, x: Array, k: int = 0) -> Array:
        return torch.triu(x, k)

    def tril(self, x: Array, k: int = 0) -> Array:
        return torch.tril(x, k)

    def diagonal(self, x: Array) -> Array:
        return torch.diagonal(x)

    def diag(self, v: Array) -> Array:
        return torch.diag(v)

    def concat(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return torch.cat(list(xs), dim=axis)

    def stack(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return torch.stack(list(xs), dim=axis)

    def solve(self, a: Array, b: Array) -> Array:
        return torch.linalg.solve(a, b)

    def solve_triangular(self, t: Array, b: Array, *, upper: bool) -> Array:
        if t.shape[0] == 0:
            return b
        vec = b.ndim == 1
        rhs = b.reshape(-1, 1) if vec else b
        out = torch.linalg.solve_triangular(t, rhs, upper=upper)
        return out.reshape(-1) if vec else out

    def is_zero(self, x: Any) -> bool:
        return bool(torch.all(torch.as_tensor(x) == 0))

    def all_finite(self, x: Array) -> bool:
        return bool(torch.all(torch.isfinite(x)))

    def positive(self, x: Scalar) -> bool:
        return bool(x > 0)

