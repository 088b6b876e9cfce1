"""The eigendecomposition W = V D V* of a unitary matrix with V unitary by construction (the
spectral form of Lemma 1 of Arjovsky, Shah, Bengio, Unitary Evolution RNNs, ICML 2016).

A general eigensolver returns, for repeated or close eigenvalues, eigenvectors that are far
from orthonormal. W is normal, so the Hermitian part of e^(-i alpha) W has W's eigenvectors,
and a Hermitian eigensolver returns them orthonormal whatever the gaps; alpha is chosen so that
the Hermitian part separates W's eigenvalues as well as possible.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from orthoverify.errors import BackendError
from orthoverify.param._validate import BackendLike
from orthoverify.param.unitary import CArray, ct, require_unitary
from orthoverify.tolerance import THRESHOLD


def best_angle(z: np.ndarray) -> float:
    """The alpha that best separates W's eigenvalues in cos(phi_j - alpha), the spectrum of the
    Hermitian part of e^(-i alpha) W: two eigenvalues e^(i phi_j), e^(i phi_k) map to values that
    differ by |lambda_j - lambda_k| |sin((phi_j + phi_k)/2 - alpha)|, so alpha is taken (on a grid)
    as far as possible from every midpoint (mod pi); the eigenvector error of a Hermitian solver
    is then at most eps / min|sin| times the unit roundoff's share, whatever the gaps of W."""
    phi = np.angle(np.linalg.eigvals(z))
    mids = ((phi[:, None] + phi[None, :]) / 2)[np.triu_indices(len(phi), 1)]
    if mids.size == 0:
        return 0.0
    grid = np.linspace(0, np.pi, 721)[:-1]
    score = np.abs(np.sin(mids[None, :] - grid[:, None])).min(axis=1)
    return float(grid[int(np.argmax(score))])


def unitary_eig(w: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> tuple[CArray, CArray]:
    """(V, d) with W = V diag(d) V* for a unitary W (float or mpmath arithmetic): V from a
    Hermitian eigensolver on the Hermitian part of e^(-i alpha) W (alpha from :func:`best_angle`),
    unitary by construction, also for repeated eigenvalues; d the diagonal of V* W V. A W that
    is not unitary within ``threshold`` (test ratio ``||W*W - I||_F / (n eps)``) raises
    NotUnitaryError; exact arithmetic raises BackendError (its eigenvalues need not be rational)."""
    b, w = require_unitary(w, backend=backend, threshold=threshold)
    if b.exact:
        raise BackendError(f"unitary_eig needs float or mpmath arithmetic, not {b.name}")
    n = w.shape[0]
    z = w.to_complex(b)
    alpha = best_angle(z)
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        m = ctx.matrix([[ctx.mpc(w.re[i, j], w.im[i, j]) for j in range(n)] for i in range(n)])
        m = m * ctx.expj(-ctx.mpf(alpha))
        _e, q = ctx.eighe((m + m.H) / 2)
        v = CArray(
            np.array([[q[i, j].real for j in range(n)] for i in range(n)], dtype=object),
            np.array([[q[i, j].imag for j in range(n)] for i in range(n)], dtype=object),
        )
    else:
        m = z * np.exp(-1j * alpha)
        _e, q = np.linalg.eigh((m + m.conj().T) / 2)
        v = CArray(b.asarray(q.real), b.asarray(q.imag))
    d = ct(b, v) @ w @ v
    return v, CArray(b.diagonal(d.re), b.diagonal(d.im))
