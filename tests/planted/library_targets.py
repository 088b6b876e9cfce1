"""Householder products of libraries that orthoverify has no built-in adapter for, as
``householder-product`` targets (``f(U[n, m]) -> Q = H(u_1) ... H(u_m)``), for
``tools/library_findings.py`` (the README's table of what ``validate`` says about installed
libraries). Each wrapper only reshapes: the library computes the matrix.

``orthoverify validate tests.planted.library_targets:nflows_householder --kind householder-product``
(``pip install nflows``; ``torch-householder`` for ``torch_householder_orgqr``)."""

from __future__ import annotations

import torch


def nflows_householder(u: torch.Tensor) -> torch.Tensor:
    """nflows' ``HouseholderSequence`` with q_j = column j of U, applied to the rows of I (its
    ``_apply_transforms``, what ``forward`` and ``matrix`` call): rows x map to x H(q_1) ... H(q_K),
    so the rows of I give Q. nflows takes one set of vectors at a time; a stack is looped over."""
    from nflows.transforms.orthogonal import HouseholderSequence

    if u.dim() > 2:
        return torch.stack([nflows_householder(x) for x in u])
    eye = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    out: torch.Tensor = HouseholderSequence._apply_transforms(eye, u.mT)[0]
    return out


def torch_householder_product(u: torch.Tensor) -> torch.Tensor:
    """torch-householder's ``torch_householder_orgqr`` (it normalises each column, clamping its norm
    at 1e-12) on U padded with zero columns to n x n (a zero column is the identity reflection), so
    that it returns the whole Q; it takes stacks itself."""
    from torch_householder import torch_householder_orgqr

    n, m = u.shape[-2], u.shape[-1]
    padded = torch.cat([u, u.new_zeros(*u.shape[:-1], n - m)], dim=-1)
    out: torch.Tensor = torch_householder_orgqr(padded)
    return out
