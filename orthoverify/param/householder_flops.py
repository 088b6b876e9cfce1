"""Measured flop counts of Algorithm 1 (Mhammedi et al. 2017, Sec. 4.2, Table 2, App. C Table 5).

Why: the paper prints flop counts for Algorithm 1 and for the sRNN; this module *measures*
them by running the unmodified generic code of :mod:`orthoverify.param.householder` on the
counting arithmetic of :mod:`orthoverify.backends.flops`, which attributes every operation
to the printed line (``# Alg1 line 8`` ...) and iteration k that performed it. Nothing here
knows the paper's formulas; comparing the measurements with them is the claims' job.

Zeros of U (eq. 9: column k is zero above row k) are handled in one of three ways:
``"dense"`` (they are ``Flop(0.0)``: counted like any number), ``"structural"`` (they are the
int 0: every operation with them is free), or a mapping from line labels to either mode
(they are :data:`~orthoverify.backends.flops.STRUCTURAL_ZERO`; unlisted labels are dense), to
reproduce accountings that exploit the zeros in some lines only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from orthoverify.backends.flops import (
    OTHER,
    STRUCTURAL_ZERO,
    Flop,
    FlopBackend,
    FlopCounter,
    Key,
    OpCounts,
    ZeroMode,
    counting,
)
from orthoverify.errors import DomainError, ShapeError
from orthoverify.param._validate import size
from orthoverify.param.householder import Algorithm1Result, algorithm1_backward, algorithm1_forward

__all__ = [
    "BP_LABELS",
    "FP_LABELS",
    "NORMS_LABEL",
    "REGENERATE_LABELS",
    "FlopCount",
    "SequenceCount",
    "SrnnCount",
    "ZeroSpec",
    "count_algorithm1",
    "count_algorithm1_on",
    "count_sequence",
    "count_srnn",
    "random_inputs",
]

ZeroSpec = ZeroMode | Mapping[str, ZeroMode]
"""``"dense"``, ``"structural"``, or a per-label mapping (unlisted labels dense)."""

NORMS_LABEL = "line 4"
FP_LABELS: tuple[str, ...] = ("line 4", "line 8", "line 9")
BP_LABELS: tuple[str, ...] = ("line 12", "line 13", "line 14")
REGENERATE_LABELS: tuple[str, ...] = ("regenerate h~", "regenerate H")

_BACKEND = FlopBackend()


def _select(counts: Mapping[Key, int], labels: tuple[str, ...] | None, k: int | None) -> OpCounts:
    kinds: Counter[str] = Counter()
    for (lab, kk, kind), c in counts.items():
        if (labels is None or lab in labels) and (k is None or kk == k):
            kinds[kind] += c
    return OpCounts.of(kinds)


@dataclass(frozen=True)
class FlopCount:
    """Operations of one run of Algorithm 1, keyed by (label, k, kind).

    ``k`` is the code's 0-based loop variable (column ``U[:, k]``), i.e. the paper's k minus 1;
    :meth:`per_iteration` reports the paper's 1-based k. Label ``"other"`` collects operations
    outside any marked line (none, for Algorithm 1).
    """

    n: int
    m: int
    batch: int
    zeros: str
    regenerate: bool
    counts: Mapping[Key, int]
    outputs: Algorithm1Result | None = field(default=None, compare=False, repr=False)

    def labels(self) -> list[str]:
        """Labels with at least one recorded operation, sorted."""
        return sorted({lab for lab, _, _ in self.counts})

    def select(self, labels: str | tuple[str, ...] | None = None, k: int | None = None) -> OpCounts:
        """Counts summed over some labels (all when None) and, when given, the code's k."""
        return _select(self.counts, (labels,) if isinstance(labels, str) else labels, k)

    def by_label(self) -> dict[str, OpCounts]:
        """Totals per label."""
        return {lab: self.select(lab) for lab in self.labels()}

    def per_iteration(self, label: str) -> dict[int, OpCounts]:
        """Counts of one label per iteration, keyed by the paper's k (1-based column of U)."""
        ks = sorted({kk for lab, kk, _ in self.counts if lab == label and kk is not None})
        return {kk + 1: self.select(label, kk) for kk in ks}

    def fp(self, *, norms: bool = True) -> OpCounts:
        """Local forward propagation: lines 4, 8, 9 (without line 4 when ``norms`` is False)."""
        return self.select(FP_LABELS if norms else FP_LABELS[1:])

    def bp(self) -> OpCounts:
        """Local backward propagation: lines 12, 13, 14 and, when used, the regenerating lines."""
        return self.select(BP_LABELS + REGENERATE_LABELS)

    def total(self, *, norms: bool = True) -> OpCounts:
        """FP + BP (+ anything unattributed)."""
        return self.fp(norms=norms) + self.bp() + self.select(OTHER)


# --------------------------------------------------------------------------- inputs
def _check_sizes(n: int, m: int, batch: int) -> None:
    size(n, "n"), size(m, "m"), size(batch, "batch")  # integers within [0, MAX_SIZE]
    if n < 1 or batch < 1:
        raise ShapeError(f"need n >= 1 and batch >= 1, got n = {n}, batch = {batch}")
    if not 0 <= m <= n:
        raise DomainError(f"need 0 <= m <= n, got m = {m}, n = {n}")


def _zero_of(zeros: ZeroSpec) -> Any:
    if zeros == "dense":
        return Flop(0.0)
    if zeros == "structural":
        return 0
    if isinstance(zeros, Mapping):
        bad = {v for v in zeros.values() if v not in ("dense", "structural")}
        if bad:
            raise DomainError(f"zero modes must be 'dense' or 'structural', got {sorted(bad)}")
        return STRUCTURAL_ZERO
    raise DomainError(f"zeros must be 'dense', 'structural' or a mapping of labels to them, got {zeros!r}")


def _flops(values: np.ndarray) -> np.ndarray:
    out = np.empty(values.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(values.reshape(-1)):
        flat[i] = Flop(float(v))
    return out


def random_inputs(
    n: int, m: int, *, zeros: ZeroSpec = "dense", batch: int = 1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random ``(U, h, dL/dC)`` as Flop object arrays: U is n x m of eq. 9's shape (column j
    zero above row j, those zeros stored as ``zeros`` says, the rest nonzero), h and dL/dC n x B."""
    _check_sizes(n, m, batch)
    zero = _zero_of(zeros)
    rng = np.random.default_rng(seed)
    vals = rng.uniform(0.5, 1.5, size=(n, m)) * rng.choice([-1.0, 1.0], size=(n, m))
    u = _flops(vals)
    for j in range(m):
        for i in range(j):
            u[i, j] = zero
    h = _flops(rng.standard_normal((n, batch)))
    dl_dc = _flops(rng.standard_normal((n, batch)))
    return u, h, dl_dc


def _counter(zeros: ZeroSpec) -> FlopCounter:
    if isinstance(zeros, Mapping):
        return FlopCounter(zeros, default="dense")
    return FlopCounter(default=zeros)


def _describe(zeros: ZeroSpec) -> str:
    if isinstance(zeros, Mapping):
        return "per-line(" + ", ".join(f"{k}: {v}" for k, v in sorted(zeros.items())) + "; others dense)"
    return str(zeros)


# --------------------------------------------------------------------------- Algorithm 1
def count_algorithm1_on(
    u: np.ndarray,
    h: np.ndarray,
    dl_dc: np.ndarray,
    *,
    zeros: ZeroSpec = "dense",
    regenerate: bool = False,
) -> FlopCount:
    """Run Algorithm 1's FP then BP (stored H, or H regenerated from C) on given Flop arrays
    (U n x m, h and dL/dC n x B, e.g. from :func:`random_inputs`) and count every operation.
    ``zeros`` only sets the per-label policy for STRUCTURAL_ZERO entries."""
    n, m = u.shape
    if h.ndim != 2 or h.shape[0] != n or dl_dc.shape != h.shape:
        raise ShapeError(f"h and dL/dC must both be {n} x B, got {h.shape} and {dl_dc.shape}")
    b = _BACKEND
    counter = _counter(zeros)
    with counter.active():
        fwd = algorithm1_forward(u, h, b)
        if regenerate:
            dl_dh, dl_du = algorithm1_backward(u, dl_dc, b, c=fwd.big_h[0], norms=fwd.norms)
        else:
            dl_dh, dl_du = algorithm1_backward(u, dl_dc, b, fwd)
    outputs = Algorithm1Result(fwd.big_h[0], dl_dh, dl_du)
    return FlopCount(n, m, h.shape[1], _describe(zeros), regenerate, dict(counter.counts), outputs)


def count_algorithm1(
    n: int,
    m: int,
    *,
    zeros: ZeroSpec = "dense",
    regenerate: bool = False,
    batch: int = 1,
    seed: int = 0,
) -> FlopCount:
    """Counts of one local FP and BP of Algorithm 1 on random inputs of size (n, m, batch)."""
    u, h, dl_dc = random_inputs(n, m, zeros=zeros, batch=batch, seed=seed)
    return count_algorithm1_on(u, h, dl_dc, zeros=zeros, regenerate=regenerate)


# --------------------------------------------------------------------------- sRNN
@dataclass(frozen=True)
class SrnnCount:
    """Operations of the sRNN's one-step FP (``W h``) and BP (``W' g`` and ``g h'``)."""

    n: int
    batch: int
    fp: OpCounts
    bp_wg: OpCounts
    bp_outer: OpCounts

    @property
    def bp(self) -> OpCounts:
        """``W' g`` plus the outer product ``g h'`` (dL/dW, summed over a batch)."""
        return self.bp_wg + self.bp_outer


def count_srnn(n: int, *, batch: int = 1, seed: int = 0) -> SrnnCount:
    """Count the hidden-to-hidden FP and BP of a simple RNN with a dense n x n W."""
    _check_sizes(n, 0, batch)
    rng = np.random.default_rng(seed)
    w = _flops(rng.standard_normal((n, n)))
    h = _flops(rng.standard_normal((n, batch)))
    g = _flops(rng.standard_normal((n, batch)))
    b = _BACKEND
    with counting() as c_fp:
        w @ h
    with counting() as c_wg:
        b.transpose(w) @ g
    with counting() as c_outer:
        g @ b.transpose(h)
    return SrnnCount(n, batch, c_fp.select(), c_wg.select(), c_outer.select())


# --------------------------------------------------------------------------- sequences
@dataclass(frozen=True)
class SequenceCount:
    """Operations of T steps of FP (``h_t = W h_{t-1}``) then T steps of BP through W.

    N (line 4) is counted once, at the first step: ``norms`` is that count, and
    ``norms_recomputed`` is what the code spent recomputing it at steps 2..T (excluded from
    ``fp`` and ``total``). The BP feeds each step's dL/dh back as the previous step's dL/dC
    and does not accumulate dL/dU over time (that sum is outside Algorithm 1).
    """

    n: int
    m: int
    steps: int
    batch: int
    zeros: str
    regenerate: bool
    fp_steps: tuple[FlopCount, ...]
    bp_steps: tuple[FlopCount, ...]

    @property
    def norms(self) -> OpCounts:
        return self.fp_steps[0].select(NORMS_LABEL) if self.fp_steps else OpCounts()

    @property
    def norms_recomputed(self) -> OpCounts:
        return sum((s.select(NORMS_LABEL) for s in self.fp_steps[1:]), OpCounts())

    @property
    def fp(self) -> OpCounts:
        """All FP steps (lines 8 and 9) plus N once."""
        return sum((s.fp(norms=False) for s in self.fp_steps), self.norms)

    @property
    def bp(self) -> OpCounts:
        """All BP steps."""
        return sum((s.bp() for s in self.bp_steps), OpCounts())

    @property
    def total(self) -> OpCounts:
        return self.fp + self.bp


def count_sequence(
    n: int,
    m: int,
    steps: int,
    *,
    zeros: ZeroSpec = "dense",
    regenerate: bool = False,
    batch: int = 1,
    seed: int = 0,
) -> SequenceCount:
    """Count a global FP and BP over ``steps`` time steps through the Householder W (N once).

    With ``regenerate`` the BP regenerates H from each step's output and the N of step 1,
    instead of using the stored forward records."""
    if steps < 1:
        raise DomainError(f"need at least one time step, got {steps}")
    u, h, g = random_inputs(n, m, zeros=zeros, batch=batch, seed=seed)
    b = _BACKEND
    desc = _describe(zeros)
    fwds, fp_steps, outs = [], [], []
    for _ in range(steps):
        counter = _counter(zeros)
        with counter.active():
            fwd = algorithm1_forward(u, h, b)
        fwds.append(fwd)
        fp_steps.append(FlopCount(n, m, batch, desc, regenerate, dict(counter.counts)))
        h = fwd.big_h[0]
        outs.append(h)
    norms = fwds[0].norms
    bp_steps = []
    for t in range(steps - 1, -1, -1):
        counter = _counter(zeros)
        with counter.active():
            if regenerate:
                g, _ = algorithm1_backward(u, g, b, c=outs[t], norms=norms)
            else:
                g, _ = algorithm1_backward(u, g, b, fwds[t])
        bp_steps.append(FlopCount(n, m, batch, desc, regenerate, dict(counter.counts)))
    return SequenceCount(n, m, steps, batch, desc, regenerate, tuple(fp_steps), tuple(bp_steps))
