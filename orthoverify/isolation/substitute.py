"""Reference formulations of suspect torch operations, swapped in one at a time in the target's process.

When an AD-mode check fails on a map whose forward and gradient pass, the verifier asks the
target's process to run the failing case again with one torch operation replaced by another
formulation of the same mathematics (:data:`SUBSTITUTIONS`), through a
:class:`torch.overrides.TorchFunctionMode` entered around the operation. The child only computes
raw values; whether the check now passes is measured in the verifier
(:mod:`~orthoverify.conformance.blame`). Nothing here knows of any bug: a substitution that makes
the check pass is the measurement that names the operation.

Like the rest of :mod:`~orthoverify.isolation.program`, :func:`make_substituted` binds every
function it calls (the torch functions it replaces and the ones it computes with, the mode's
enter and exit) when it is called, before the target is imported.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

SUBSTITUTIONS: dict[str, str] = {
    "torch.linalg.solve": "torch.linalg.lu_factor + torch.linalg.lu_solve",
    "torch.linalg.inv": "torch.linalg.lu_factor + torch.linalg.lu_solve against the identity",
    "torch.linalg.householder_product": "an explicit product of the reflections I - tau_i v_i v_i^H",
}
"""Each operation that can be replaced (also reached as its aliases: ``torch.inverse`` and
``Tensor.inverse`` for ``inv``, ``torch.orgqr`` and ``Tensor.orgqr`` for ``householder_product``)
and the reference formulation that replaces it."""


def make_substituted(op: Callable[..., Any]) -> Callable[..., Any]:
    """``op`` taking one more keyword, ``substitute`` (a key of :data:`SUBSTITUTIONS`, or "" for
    none): with one, ``op`` runs inside a torch function mode that computes that operation by its
    reference formulation, every other call passing through unchanged."""
    lu_factor, lu_solve = torch.linalg.lu_factor, torch.linalg.lu_solve
    eye, tril, matmul, conj = torch.eye, torch.tril, torch.matmul, torch.conj
    transpose, unsqueeze, squeeze = torch.transpose, torch.unsqueeze, torch.squeeze
    sub, mul, expand = torch.sub, torch.mul, torch.Tensor.expand
    Tensor = torch.Tensor
    anyt: Any = Tensor
    shape_of, dtype_of, device_of = anyt.shape.__get__, anyt.dtype.__get__, anyt.device.__get__
    ndim_of = anyt.ndim.__get__
    enter, leave = TorchFunctionMode.__enter__, TorchFunctionMode.__exit__
    b = builtins
    _len, _range, _tuple, _dict, _str, _isinstance = b.len, b.range, b.tuple, b.dict, b.str, b.isinstance

    def solve(a: Any, bb: Any, *, left: bool = True, out: Any = None) -> Any:
        if out is not None:
            raise TypeError("torch.linalg.solve(out=...) is not substituted")
        vector = ndim_of(bb) == 1 or (ndim_of(bb) == ndim_of(a) - 1 and shape_of(bb) == shape_of(a)[:-1])
        lu, piv = lu_factor(a)
        if vector:
            return squeeze(lu_solve(lu, piv, unsqueeze(bb, -1), left=True), -1)
        return lu_solve(lu, piv, bb, left=left)

    def inv(a: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise TypeError("torch.linalg.inv(out=...) is not substituted")
        n = shape_of(a)[-1]
        lu, piv = lu_factor(a)
        i = expand(eye(n, dtype=dtype_of(a), device=device_of(a)), shape_of(a))
        return lu_solve(lu, piv, i)

    def householder_product(a: Any, tau: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise TypeError("torch.linalg.householder_product(out=...) is not substituted")
        m, n = shape_of(a)[-2], shape_of(a)[-1]
        k = shape_of(tau)[-1]
        ones = eye(m, n, dtype=dtype_of(a), device=device_of(a))
        v = tril(a, -1) + ones  # v_i: 1 at i, A's entries below it, zeros above
        q = expand(eye(m, dtype=dtype_of(a), device=device_of(a)), (*shape_of(a)[:-2], m, m))
        for i in _range(k):
            vi = v[..., :, i : i + 1]
            ti = unsqueeze(unsqueeze(tau[..., i], -1), -1)
            q = sub(q, mul(matmul(matmul(q, vi), conj(transpose(vi, -1, -2))), ti))  # Q H_i
        return q[..., :, :n]

    replaced: dict[str, tuple[tuple[Any, ...], Callable[..., Any]]] = {
        "torch.linalg.solve": ((torch.linalg.solve,), solve),
        "torch.linalg.inv": ((torch.linalg.inv, torch.inverse, torch.Tensor.inverse), inv),
        "torch.linalg.householder_product": (
            (torch.linalg.householder_product, torch.orgqr, torch.Tensor.orgqr),
            householder_product,
        ),
    }

    class Substitution(TorchFunctionMode):
        """One operation computed by its reference formulation; every other call unchanged."""

        def __init__(self, funcs: tuple[Any, ...], ref: Callable[..., Any]) -> None:
            super().__init__()
            self.funcs, self.ref = funcs, ref

        def __enter__(self) -> Any:
            return enter(self)

        def __exit__(self, *exc: Any) -> Any:
            return leave(self, *exc)

        def __torch_function__(
            self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
        ) -> Any:
            kw = kwargs or {}
            for f in self.funcs:
                if func is f:
                    return self.ref(*args, **kw)
            return func(*args, **kw)

    def run(*args: Any, substitute: str = "", **kw: Any) -> Any:
        if not substitute:
            return op(*args, **kw)
        if substitute not in replaced:
            raise LookupError(f"no substitution {_str(substitute)[:80]!r}")
        funcs, ref = replaced[substitute]
        with Substitution(funcs, ref):
            return op(*args, **kw)

    return run


__all__ = ["SUBSTITUTIONS", "make_substituted"]
