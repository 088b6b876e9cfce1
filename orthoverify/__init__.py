"""orthoverify: executable verification of orthogonal and unitary RNN parametrisations.

Importing the package is light (the error classes only); ``orthoverify.validate`` (the
conformance checks of ``orthoverify validate``) is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orthoverify._lazy import lazy_module
from orthoverify._package import OUT_DIR, __version__
from orthoverify.errors import (
    BackendError,
    ConvergenceError,
    DomainError,
    DTypeError,
    InputError,
    NonFiniteError,
    NotOrthogonalError,
    OrthoverifyError,
    RegistryError,
    ReplayError,
    ShapeError,
    SingularError,
    ZeroVectorError,
)

if TYPE_CHECKING:
    from orthoverify import conformance as _conformance
    from orthoverify.conformance import validate as validate
else:
    _conformance = lazy_module("orthoverify.conformance")


__all__ = [
    "OUT_DIR",
    "BackendError",
    "ConvergenceError",
    "DTypeError",
    "DomainError",
    "InputError",
    "NonFiniteError",
    "NotOrthogonalError",
    "OrthoverifyError",
    "RegistryError",
    "ReplayError",
    "ShapeError",
    "SingularError",
    "ZeroVectorError",
    "__version__",
    "validate",
]


def __getattr__(name: str) -> Any:
    """``orthoverify.validate`` on first use (it imports torch and the conformance checks)."""
    if name == "validate":
        return _conformance.validate
    raise AttributeError(f"module 'orthoverify' has no attribute {name!r}")
