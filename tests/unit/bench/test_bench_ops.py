"""The bench's figures beside time: operations per call (timing.op_counts, measured on the
CPU), the GPU's name and the CUDA timing path. Nothing here asserts on speed."""

from __future__ import annotations

import pytest
import torch

from orthoverify.bench.core import BenchResult, format_row, merge_repeats
from orthoverify.bench.timing import op_counts, ops_per_call, take_turns


def test_op_counts_sees_every_operation_views_included() -> None:
    a = torch.ones(3, 3, dtype=torch.float64)
    assert op_counts(lambda: (a @ a).T.sum()) == {
        "aten.mm.default": 1,
        "aten.permute.default": 1,
        "aten.sum.default": 1,
    }
    assert ops_per_call(lambda: None) == 0


def test_op_counts_include_what_backward_runs() -> None:
    """Autograd's backward dispatches through the same mode: the product's backward shows."""
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    counts = op_counts(lambda: (x * 2).sum().backward())
    assert counts["aten.mul.Tensor"] == 2  # forward, and backward's grad * 2
    assert counts["aten.sum.default"] == 1 and sum(counts.values()) >= 4
    assert x.grad is not None


def test_op_counts_follow_a_python_loop() -> None:
    """A planted per-column Python loop: its count grows with the loop, a batched call's does not."""
    u = torch.ones(8, 16, dtype=torch.float64)

    def loop() -> None:
        for j in range(u.shape[1]):
            u[:, j].sum()

    assert ops_per_call(loop) == 2 * 16  # a select and a sum per column
    assert ops_per_call(lambda: u.sum(0)) == 1


def test_rows_report_ops_and_device_name() -> None:
    row = BenchResult("c", {"n": 1}, "impl", "base", 2e-3, 1e-3, ops=56, baseline_ops=12, device_name="NVIDIA H100")
    text = format_row(row)
    assert "ops 56 vs 12" in text and "on NVIDIA H100" in text
    merged = merge_repeats([[row], [BenchResult("c", {"n": 1}, "impl", "base", 3e-3, 1e-3, ops=56, baseline_ops=12)]])
    assert merged[0].ops == 56 and merged[0].baseline_ops == 12 and merged[0].device_name == "NVIDIA H100"
    assert "ops" not in format_row(BenchResult("c", {}, "i", "b", 1.0, 1.0))
    assert merged[0].to_json()["ops"] == 56


@pytest.mark.cuda
def test_cuda_turns_time_by_events_within_budget() -> None:
    """On a GPU: a sub-millisecond call is timed (positive, many calls per sample) and the
    rounds stop once the budget has passed after three."""
    a = torch.randn(256, 256, device="cuda")
    times = take_turns({"mm": lambda: a @ a}, reps=1000, budget_s=0.2, device="cuda")
    assert 3 <= len(times["mm"]) < 1000
    assert all(t > 0 for t in times["mm"])
