"""complex-to-real: W -> [[Re W, -Im W], [Im W, Re W]], the real form of a complex matrix."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.conformance.kinds.base import Kind, Params, square, tensor
from orthoverify.param import unitary as un


def draw(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    w = (
        samples.haar_unitary(rng, n)
        if rng.random() < 0.5
        else rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    )
    return {"re": np.real(w) * scale, "im": np.imag(w) * scale}


def reference(p: Params, b: Backend) -> Any:
    return un.embed_matrix((b.asarray(p["re"]), b.asarray(p["im"])), backend=b)


def args(p: Params, dt: torch.dtype, dev: str) -> tuple[Any, ...]:
    cdt = torch.complex64 if dt == torch.float32 else torch.complex128
    return (torch.complex(tensor(p["re"], dt, dev), tensor(p["im"], dt, dev)).to(cdt),)


COMPLEX_TO_REAL = Kind(
    name="complex-to-real",
    signature="f(W: complex Tensor[n, n]) -> real Tensor[2n, 2n]",
    conventions=(
        "[[Re W, -Im W], [Im W, Re W]]: the real matrix acting on (Re h, Im h) stacked as one column as W acts "
        "on h (eq. 5 of the Householder paper, Sec. 3.1 of the uRNN paper). complex64 in, float32 out; "
        "complex128 in, float64 out. Unitary W must give an orthogonal output."
    ),
    draw=draw,
    args=args,
    out_shape=square("re", 2),
    reference=reference,
    differentiable=("re", "im"),
    orthogonal_output=False,
    allowance="1 (copies and negations are exact)",
    scaled=("re", "im"),
    linear=True,
    complex_input=True,
)
