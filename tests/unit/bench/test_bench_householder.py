"""The Householder and svdRNN benchmark cases, run at one small point each, and the CPU
peak-memory measurement they report. Nothing here asserts on speed: the rows are checked for
what they measured (baselines, correctness ratios, memory), never for how fast."""

from __future__ import annotations

import pytest
import torch

from orthoverify.bench import cases_householder as ch
from orthoverify.bench.core import BenchContext
from orthoverify.bench.timing import peak_bytes

CTX = BenchContext(device="cpu", quick=True, budget_s=0.05)
ITEM = 8  # float64


def test_peak_bytes_sees_an_allocation_and_before_runs_outside() -> None:
    """A fn that drops an earlier gradient and allocates a new one: measured after ``before``
    has dropped it, the peak is at least the new allocation (without ``before`` the profiler
    may count the earlier gradient's release against it: why the cases pass ``before``)."""
    n = 256
    leaf = torch.zeros(n, n, dtype=torch.float64, requires_grad=True)

    def step() -> None:
        leaf.grad = None
        (leaf * 2).sum().backward()

    def clear() -> None:
        leaf.grad = None

    step()
    got = peak_bytes(step, before=clear)
    if got is None:
        pytest.skip("this torch build's profiler reports no memory events")
    assert got >= ITEM * n * n
    assert leaf.grad is not None


def test_fwd_bwd_rows_at_one_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """One (n, m, B): a row per baseline plus the dense-U row, each baseline checked against
    the WY path before timing, and peaks that hold at least the gradients each one returns."""
    n, m, b = 64, 64, 8
    monkeypatch.setattr(ch, "grid", lambda quick: [(n, m, b)])
    rows = ch.householder_fwd_bwd(CTX)
    assert [(r.impl == ch.IMPL, r.baseline) for r in rows] == [
        (True, ch.BASELINES["sequential"]),
        (True, ch.BASELINES["householder_product"]),
        (True, ch.BASELINES["dense"]),
        (False, ch.BASELINES["dense"]),
    ]
    for r in rows:
        assert r.params == {"n": n, "m": m, "B": b, "dtype": "float64", "block": ch.choose_block(m, "cpu")}
        assert 0 <= r.extra["check_ratio"] <= ch.THRESHOLD
        assert r.ops is not None and r.baseline_ops is not None and r.ops > 0 and r.baseline_ops > 0
        assert r.seconds > 0 and r.baseline_seconds > 0
        assert r.peak_bytes is not None and r.baseline_peak_bytes is not None
        assert r.peak_bytes >= ITEM * (n * m + n * b)  # dL/dU and dL/dX stay alive
    assert rows[2].baseline_peak_bytes is not None and rows[2].baseline_peak_bytes >= ITEM * n * n  # dL/dW
    assert rows[0].extra["lower"] and not rows[3].extra["lower"]
    assert rows[0].ops == rows[2].ops and rows[0].ops < rows[0].baseline_ops  # fewer than Algorithm 1's loop
    assert rows[0].extra["ops_cuda_block"] < rows[0].ops  # m = 64: one block on CUDA, three on the CPU
    assert rows[2].baseline_ops is not None and rows[2].baseline_ops < 20  # the dense leaf: a few products


def test_blocks_rows_one_per_block_with_ops() -> None:
    """``householder.blocks`` (quick: n = m = 128): a row per block up to m, each checked
    against the dense product, more operations for more blocks, the chosen one marked."""
    rows = ch.householder_blocks(CTX)
    assert [r.params["block"] for r in rows] == [16, 24, 32, 64, 128]
    assert all(0 <= r.extra["check_ratio"] <= ch.THRESHOLD for r in rows)
    ops = [r.ops for r in rows]
    assert all(o is not None for o in ops) and ops == sorted(ops, reverse=True)
    assert [r.extra["chosen"] for r in rows] == [False, True, False, False, False]


def test_forward_rows_and_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forward only; a point past the sequential limit names the baseline it left out."""
    n, m, b = 64, 16, 4
    monkeypatch.setattr(ch, "grid", lambda quick: [(n, m, b)])
    monkeypatch.setattr(ch, "SEQ_MAX_M", 8)
    rows = ch.householder_forward(CTX)
    assert [r.baseline for r in rows] == [
        ch.BASELINES["householder_product"],
        ch.BASELINES["dense"],
        ch.BASELINES["dense"],
    ]
    assert all(0 <= r.extra["check_ratio"] <= ch.THRESHOLD for r in rows)
    assert "sequential" in rows[0].extra["not_measured"]


def test_memory_t_recompute_keeps_less_than_store() -> None:
    """Algorithm 1 over T steps: "recompute" keeps O(nB) per step, "store" O(nmB)."""
    rows = ch.householder_memory_t(CTX)
    assert [r.params["T"] for r in rows] == [4, 16]
    for r in rows:
        assert r.peak_bytes is not None and r.baseline_peak_bytes is not None
        assert r.peak_bytes < r.baseline_peak_bytes
        assert r.baseline_peak_bytes >= r.extra["store_saved_bytes_model"]


def test_svd_rows_checked_against_the_dense_product() -> None:
    rows = ch.svd_fwd_bwd(CTX)
    assert len(rows) == 1 and rows[0].params["n"] == 64
    assert 0 <= rows[0].extra["check_ratio"] <= ch.THRESHOLD
    assert rows[0].peak_bytes is not None and rows[0].peak_bytes >= ITEM * 2 * 64 * 64  # dUu, dUv
