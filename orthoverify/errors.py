"""orthoverify's exception hierarchy.

Every problem with a user's input is reported by one of these classes, with a message that
names the problem (which argument, what shape or value, what was expected), never by a NaN or
a traceback from deep inside NumPy or PyTorch.
"""

from __future__ import annotations


class OrthoverifyError(Exception):
    """Base class of every exception orthoverify raises on purpose."""


class InputError(OrthoverifyError, ValueError):
    """An argument is not acceptable: wrong shape, value, or dtype."""


class ShapeError(InputError):
    """An array has the wrong number of dimensions or the wrong size."""


class NonFiniteError(InputError):
    """An array contains NaN or Inf."""


class ZeroVectorError(InputError):
    """A reflection vector is zero where the reflection it defines is undefined (eq. 6)."""


class DomainError(InputError):
    """A value lies outside the domain where the requested map or claim is defined."""


class SingularError(InputError):
    """A matrix that must be invertible (or of full rank) is singular."""


class NotOrthogonalError(InputError):
    """A matrix that must be orthogonal is not, within the stated test-ratio threshold."""

    def __init__(self, message: str, *, ratio: float, threshold: float) -> None:
        super().__init__(message)
        self.ratio = ratio
        self.threshold = threshold


class NotUnitaryError(NotOrthogonalError):
    """A complex matrix that must be unitary is not, within the stated test-ratio threshold."""


class DTypeError(InputError, TypeError):
    """An array has a dtype orthoverify does not support for this operation."""


class ConvergenceError(OrthoverifyError):
    """An iterative algorithm did not meet its stopping rule within its step limit."""


class BackendError(OrthoverifyError):
    """A backend name is unknown or the backend cannot run here (e.g. CUDA without a GPU)."""


class RegistryError(OrthoverifyError):
    """A claim id is unknown, duplicated, or a glob matches nothing."""


class ReplayError(OrthoverifyError):
    """A counterexample cannot be replayed (missing claim, check, or malformed inputs)."""


class ReportError(OrthoverifyError):
    """A result file cannot be read or rendered into a report."""


class ParseError(InputError):
    """Text that should hold a number (read from a result file, say) is not one: numbers are parsed
    strictly (decimal, integer or p/q within bounds), never evaluated."""
