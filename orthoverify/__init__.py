"""orthoverify: executable verification of orthogonal and unitary RNN parametrisations."""

__version__ = "0.1.0"

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

__all__ = [
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
]
