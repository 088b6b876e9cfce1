"""Measured flop counts of svdRNN's Hprod, Hgrad and local FP/BP (Zhang et al., Sec. 4.2, Table 1).

Why: the paper prints flop counts for Algorithms 1-3; this module *measures* them by running the
unmodified generic code of :mod:`orthoverify.param.svd` on the counting arithmetic of
:mod:`orthoverify.backends.flops` (binary ``+ - * /`` by kind, unary negations recorded apart,
the padding zeros of ``(0; u_k)`` structural and so free). Nothing here knows the paper's
formulas; comparing the measurements with them is the claims' job.

Operations are attributed to the innermost marked line (``# Count <label>``): inside
:func:`~orthoverify.param.svd.svdrnn_local` that is a line of ``hprod`` (forward), of ``hgrad``
(backward), ``fp sigma``, ``bp sigma``, ``norms once`` (``reuse_norms=True``) or ``norm`` (the
norm recomputed inside each call when ``reuse_norms=False``). The oRNN counts come from
:mod:`orthoverify.param.householder_flops` (Algorithm 1 of Mhammedi et al.).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from orthoverify.backends.flops import KINDS, FlopBackend, Key, OpCounts, counting
from orthoverify.errors import DomainError, ShapeError
from orthoverify.param import svd
from orthoverify.param._validate import size
from orthoverify.param.householder_flops import ZeroSpec, count_algorithm1

__all__ = [
    "BP_LABELS",
    "FP_LABELS",
    "INLINE_NORM_LABEL",
    "NORMS_LABEL",
    "LocalCount",
    "count_hgrad",
    "count_hprod",
    "count_ornn_local",
    "count_svdrnn_local",
    "difference",
]

FP_LABELS: tuple[str, ...] = ("hprod alpha", "hprod update", "fp sigma", "fp u", "fp v")
"""Labels of Algorithm 1's forward propagation (Hprod's lines and Sigma h)."""
BP_LABELS: tuple[str, ...] = (
    "hgrad 2/uu",
    "hgrad alpha",
    "hgrad beta",
    "hgrad h_bar",
    "hgrad u_bar",
    "bp sigma",
    "bp sigma map",
    "bp u",
    "bp v",
)
"""Labels of Algorithm 1's backward propagation (Hgrad's lines and the Sigma gradient)."""
NORMS_LABEL = "norms once"
"""The ||u_k||^2 computed once per call of Algorithm 1 (``reuse_norms=True``)."""
INLINE_NORM_LABEL = "norm"
"""The ||u_k||^2 recomputed inside every Hprod and Hgrad (``reuse_norms=False``)."""

_BACKEND = FlopBackend()


def difference(a: OpCounts, b: OpCounts) -> OpCounts:
    """``a - b`` kind by kind (a measured saving; may be negative if ``b`` costs more)."""
    return OpCounts(*(getattr(a, k) - getattr(b, k) for k in KINDS))


def _size(x: Any, name: str, low: int) -> int:
    if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_)):
        raise DomainError(f"{name} must be an integer, got {x!r}")
    if x < low:
        raise (ShapeError if name in ("n", "batch") else DomainError)(f"need {name} >= {low}, got {name} = {x}")
    return size(x, name, minimum=low)  # and at most MAX_SIZE


def _nk(n: int, k: int, batch: int, name: str = "k") -> tuple[int, int, int]:
    n, k, batch = _size(n, "n", 1), _size(k, name, 1), _size(batch, "batch", 1)
    if k > n:
        raise DomainError(f"need 1 <= {name} <= n, got {name} = {k}, n = {n}")
    return n, k, batch


def _values(rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
    """Nonzero Flop entries (magnitudes in [0.5, 1.5], random signs), so that no product is free."""
    vals = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return _BACKEND.asarray(vals)


def _hvec(rng: np.random.Generator, n: int, batch: int) -> np.ndarray:
    return _values(rng, n) if batch == 1 else _values(rng, (n, batch))


# --------------------------------------------------------------------------- Alg. 2, 3
def count_hprod(n: int, k: int, *, norm: bool = False, batch: int = 1, seed: int = 0) -> OpCounts:
    """Operations of one Hprod (Algorithm 2) on a length-n vector (n x batch), u of length k;
    with ``norm`` the u'u is precomputed (not counted) and passed in."""
    n, k, batch = _nk(n, k, batch)
    rng = np.random.default_rng(seed)
    h, u = _hvec(rng, n, batch), _values(rng, k)
    given = u @ u if norm else None  # outside any counter: free
    with counting() as c:
        svd.hprod(h, u, norm=given, backend=_BACKEND)
    return c.select()


def count_hgrad(n: int, k: int, *, norm: bool = False, alpha: bool = False, batch: int = 1, seed: int = 0) -> OpCounts:
    """Operations of one Hgrad (Algorithm 3); with ``norm`` u'u and with ``alpha`` the forward
    pass's alpha = 2u'h/u'u are precomputed (not counted) and passed in."""
    n, k, batch = _nk(n, k, batch)
    rng = np.random.default_rng(seed)
    h, u, g = _hvec(rng, n, batch), _values(rng, k), _hvec(rng, n, batch)
    nrm = u @ u
    a = None
    if alpha:
        hh = h.reshape(n, batch)
        a = (2 / nrm) * (svd.pad(u, n, backend=_BACKEND) @ hh)
    with counting() as c:
        svd.hgrad(h, u, g, norm=nrm if norm else None, alpha=a, backend=_BACKEND)
    return c.select()


@lru_cache(maxsize=4096)
def _alpha_saving(n: int, k: int, batch: int) -> OpCounts:
    """Measured ``Hgrad(norm) - Hgrad(norm, alpha)`` at (n, k, batch) (pure: cached)."""
    return difference(count_hgrad(n, k, norm=True, batch=batch), count_hgrad(n, k, norm=True, alpha=True, batch=batch))


# --------------------------------------------------------------------------- Alg. 1
@dataclass(frozen=True)
class LocalCount:
    """Operations of one call of Algorithm 1 (``svdrnn_local``), keyed by (label, k, kind)."""

    n: int
    m1: int
    m2: int
    batch: int
    reuse_norms: bool
    counts: Mapping[Key, int]

    def labels(self) -> list[str]:
        """Labels with at least one recorded operation, sorted."""
        return sorted({lab for lab, _, _ in self.counts})

    def select(self, labels: str | tuple[str, ...] | None = None) -> OpCounts:
        """Counts summed over some labels (all when None)."""
        want = (labels,) if isinstance(labels, str) else labels
        kinds: dict[str, int] = {}
        for (lab, _, kind), c in self.counts.items():
            if want is None or lab in want:
                kinds[kind] = kinds.get(kind, 0) + c
        return OpCounts.of(kinds)

    @property
    def norms(self) -> OpCounts:
        """The norms computed once (zero unless ``reuse_norms``)."""
        return self.select(NORMS_LABEL)

    @property
    def inline_norms(self) -> OpCounts:
        """The norms recomputed inside Hprod and Hgrad (zero when ``reuse_norms``); in neither fp nor bp."""
        return self.select(INLINE_NORM_LABEL)

    def fp(self, *, norms: bool = False) -> OpCounts:
        """Forward propagation: the Hprods and Sigma h, plus the norms computed once when ``norms``."""
        out = self.select(FP_LABELS)
        return out + self.norms if norms else out

    def bp(self) -> OpCounts:
        """Backward propagation: the Hgrads and the Sigma gradient."""
        return self.select(BP_LABELS)

    def total(self) -> OpCounts:
        """Every recorded operation."""
        return self.select()

    def hgrad_lengths(self) -> list[int]:
        """The lengths k of the reflection vectors the backward pass calls Hgrad with."""
        return list(range(self.n - self.m1 + 1, self.n + 1)) + list(range(self.n - self.m2 + 1, self.n + 1))

    def alpha_saving(self) -> OpCounts:
        """What passing the forward alpha to every Hgrad of the BP would save: the measured
        ``Hgrad(norm) - Hgrad(norm, alpha)`` summed over the BP's calls (svdrnn_local has no
        option to reuse alpha, so this is composed from measured Hgrad calls)."""
        out = OpCounts()
        for k in self.hgrad_lengths():
            out = out + _alpha_saving(self.n, k, self.batch)
        return out

    def bp_reusing_alpha(self) -> OpCounts:
        """The BP when the forward alpha is reused too (Sec. 4.2): :meth:`bp` minus :meth:`alpha_saving`."""
        return difference(self.bp(), self.alpha_saving())


def count_svdrnn_local(
    n: int, m1: int, m2: int, *, reuse_norms: bool = True, batch: int = 1, seed: int = 0
) -> LocalCount:
    """Count one call of Algorithm 1 (variant "corrected") on random inputs: m1 reflections on
    the U side (lengths n-m1+1..n), m2 on the V side, h and dL/dC of length n (n x batch)."""
    n, batch = _size(n, "n", 1), _size(batch, "batch", 1)
    m1, m2 = _size(m1, "m1", 0), _size(m2, "m2", 0)
    if m1 > n or m2 > n:
        raise DomainError(f"need 0 <= m1, m2 <= n, got m1 = {m1}, m2 = {m2}, n = {n}")
    rng = np.random.default_rng(seed)
    h, g = _hvec(rng, n, batch), _hvec(rng, n, batch)
    us = [_values(rng, j) for j in range(n - m1 + 1, n + 1)]
    vs = [_values(rng, j) for j in range(n - m2 + 1, n + 1)]
    sigma = _values(rng, n)
    with counting() as c:
        svd.svdrnn_local(h, g, us, sigma, vs, variant="corrected", reuse_norms=reuse_norms, backend=_BACKEND)
    return LocalCount(n, m1, m2, batch, reuse_norms, dict(c.counts))


# --------------------------------------------------------------------------- oRNN
def count_ornn_local(n: int, m: int, *, zeros: ZeroSpec = "structural", batch: int = 1) -> tuple[OpCounts, OpCounts]:
    """(FP, BP) of one step of oRNN's Algorithm 1 (Mhammedi et al.) with the norms N known, U of
    eq. 9's shape (n x m) and its zeros treated as ``zeros`` says (see householder_flops)."""
    n, m, batch = _nk(n, m, batch, "m")
    fc = count_algorithm1(n, m, zeros=zeros, batch=batch)
    return fc.fp(norms=False), fc.bp()
