"""unitary-composition: uRNN's W = D3 R2 F^-1 D2 Pi R1 F D1, compared in its real block form."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from orthoverify.backends import Backend
from orthoverify.conformance.kinds.base import Kind, Params, tensor
from orthoverify.param import unitary as un


def urnn_of(p: Params, b: Backend) -> un.URNNParameters:
    """The uRNN parameters of a (7, n) X and a permutation given as numbers."""
    x = b.asarray(p["X"])
    perm = [round(float(v)) for v in np.asarray(p["perm"], dtype=object).reshape(-1)]
    return un.urnn_parameters(x[0], x[1], x[2], (x[3], x[4]), (x[5], x[6]), perm, backend=b)


def reference(p: Params, b: Backend) -> Any:
    """The real block form of W = D3 R2 F^-1 D2 Pi R1 F D1 (dense factor product)."""
    return un.embed_matrix(un.urnn_matrix(urnn_of(p, b)), backend=b)


def draw(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    x = rng.uniform(-1.0, 1.0, size=(7, n))
    x[:3] *= np.pi
    return {"X": x * scale, "perm": rng.permutation(n).astype(float)}


def args(p: Params, dt: torch.dtype, dev: str) -> tuple[Any, ...]:
    perm = torch.as_tensor(np.rint(np.asarray(p["perm"], dtype=np.float64)).astype(np.int64), device=dev)
    return (tensor(p["X"], dt, dev), perm)


UNITARY_COMPOSITION = Kind(
    name="unitary-composition",
    signature="f(X: Tensor[7, n], perm: LongTensor[n]) -> complex Tensor[n, n]",
    conventions=(
        "W = D3 R2 F^-1 D2 Pi R1 F D1 (uRNN, Arjovsky et al. Sec. 2). Rows 0, 1, 2 of X are the phases w1, w2, w3 "
        "of D_k = diag(exp(i w_k)); rows 3, 4 are Re and Im of v1 and rows 5, 6 of v2, with R_k = I - 2 v_k v_k* / "
        "||v_k||^2. F is the unitary DFT, F_jk = exp(-2 pi i jk / n) / sqrt(n); (Pi x)_i = x[perm[i]]. Output "
        "complex64 for float32 X, complex128 for float64; the checks compare its real block form "
        "[[Re W, -Im W], [Im W, Re W]], orthogonal exactly when W is unitary. Gradients with respect to X."
    ),
    draw=draw,
    args=args,
    out_shape=lambda p: (p["X"].shape[1], p["X"].shape[1]),
    reference=reference,
    differentiable=("X",),
    complex_output=True,
    allowance="1 (diagonal phases, unitary DFTs and reflections are backward stable)",
    scaled=("X",),
)
