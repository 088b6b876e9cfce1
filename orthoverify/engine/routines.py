"""A routine's outputs against the references the engine derives from its definition.

An algorithm that returns a value and the gradients of a loss of it (Algorithm 1's C = W h, dL/dh
and dL/dU; a torch ``autograd.Function``'s forward and backward) is judged against its definition:
the value against the definition's value, the gradients against the references a
:class:`~orthoverify.engine.templates.Derivative` derives from the loss (SymPy's exact derivative,
50-digit central differences, torch autograd). A claim declares the routine, the definition and
the sizes of their terms; the engine computes every reference and every test ratio, each
difference scaled by the size of the terms it adds (LAPACK-style: a residual over ||A|| ||x||,
not over its result, which would blame any method for cancellation).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.engine.checks import Case
from orthoverify.engine.ratios import Measure, residual, scaled, worst
from orthoverify.engine.reference import fd_eps
from orthoverify.engine.templates import Derivative, Inputs

VALUE = "value"
"""The key of a routine's value among its outputs (the others are its gradients, by input)."""

Outputs = Callable[[Backend, Inputs], Mapping[str, Array]]
"""A routine's outputs on a backend: its value (key :data:`VALUE`) and its gradients, keyed by
the input each is the gradient with respect to."""


@dataclass(frozen=True)
class Routine:
    """A routine's value and gradients against its definition.

    ``reference`` is the definition's :class:`~orthoverify.engine.templates.Derivative` (its
    inputs, loss, sizes of terms, steps); its ``formula`` is replaced by the routine's gradients.
    The value is compared with ``definition`` and scaled by ``value_scale`` (the size of its
    terms); each measure is the worst of the value's ratio and the gradients'."""

    reference: Derivative
    routine: Outputs
    definition: Callable[[Backend, Inputs], Array]
    value_scale: Callable[[Backend, Inputs], float]

    @property
    def gradients(self) -> Derivative:
        """The reference Derivative with the routine's gradients as its formula."""
        return dataclasses.replace(self.reference, formula=self._gradients)

    def _gradients(self, b: Backend, x: Inputs) -> dict[str, Array]:
        return {k: v for k, v in self.routine(b, x).items() if k != VALUE}

    def _value(self, b: Backend, x: Inputs) -> Measure:
        """The routine's value against the definition in b's own arithmetic."""
        diff = self.routine(b, x)[VALUE] - self.definition(b, x)
        return residual(b, diff, self.reference.dim(x), self.value_scale(b, x))

    def exact(self, b: Backend, case: Case) -> Measure:
        """Value and gradients against the definition and SymPy's exact derivative of the loss
        (in floating point: :meth:`finite_differences`)."""
        if not b.exact:
            return self.finite_differences(b, case)
        return worst(self._value(b, self.reference.inputs(b, case)), self.gradients.exact(b, case))

    def autograd(self, b: Backend, case: Case) -> Measure:
        """Value and gradients against the definition and torch autograd through the loss (on
        other backends, central differences in the backend's own precision)."""
        return worst(self._value(b, self.reference.inputs(b, case)), self.gradients.autograd(b, case))

    def finite_differences(self, b: Backend, case: Case) -> Measure:
        """Value and gradients on b against the definition at 50 digits (b's own precision when it
        is high precision) on b's rounded inputs and central differences of the loss there; in
        units of b's eps, or of the differences' accuracy when that is larger."""
        x = self.reference.inputs(b, case)
        r = b if b.method == "high-precision" else get_backend("mpmath")
        xr = {k: r.asarray(b.to_strings(v)) if hasattr(v, "shape") else v for k, v in x.items()}
        diff = r.asarray(b.to_strings(self.routine(b, x)[VALUE])) - self.definition(r, xr)
        size = self.value_scale(r, xr)
        value = scaled(r.to_float(r.norm(diff)) / size, self.reference.dim(x), max(b.eps, fd_eps(r)))
        return worst(value, self.gradients.finite_differences(b, case))

    def against(self, other: Outputs) -> Callable[[Backend, Case], Measure]:
        """A measure of the routine against another formulation of the same outputs in the same
        arithmetic (a definition for the value, a closed form for the gradients), each output
        scaled as above."""

        def measure(b: Backend, case: Case) -> Measure:
            x = self.reference.inputs(b, case)
            mine, theirs, n = self.routine(b, x), other(b, x), self.reference.dim(x)
            out = [residual(b, mine[VALUE] - theirs[VALUE], n, self.value_scale(b, x))]
            for k in (k for k in mine if k != VALUE):
                out += [residual(b, d, n, s) for d, s in _parts(mine[k] - theirs[k], self.reference.scale(b, x, k))]
            return worst(*out)

        return measure


def _parts(diff: Array, scale: float | Sequence[float]) -> list[tuple[Array, float]]:
    """A difference and its scale, or its columns and theirs (a scale per column)."""
    if not isinstance(scale, Sequence):
        return [(diff, float(scale))]
    return [(diff[:, j], float(s)) for j, s in enumerate(scale)]
