"""Tests of the counting arithmetic (orthoverify.backends.flops) and of the Algorithm 1 counter.

These test the *counter*: its rules, its attribution to marked lines, and that it runs the
real Algorithm 1 code without changing its numbers. They do not test the paper's formulas.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from orthoverify.backends import get_backend
from orthoverify.backends.flops import (
    OTHER,
    STRUCTURAL_ZERO,
    Flop,
    FlopBackend,
    FlopCounter,
    OpCounts,
    active_counter,
    counting,
)
from orthoverify.errors import DomainError, ShapeError
from orthoverify.param.householder import algorithm1, algorithm1_backward, algorithm1_forward
from orthoverify.param.householder_flops import (
    BP_LABELS,
    FP_LABELS,
    REGENERATE_LABELS,
    count_algorithm1,
    count_algorithm1_on,
    count_sequence,
    count_srnn,
    random_inputs,
)

ALG1_LABELS = set(FP_LABELS + BP_LABELS)


def flops(values: list[float]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = Flop(v)
    return out


# --------------------------------------------------------------------------- scalar rules
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_dot_product_costs_n_mul_and_n_minus_1_add(n: int) -> None:
    a = flops([float(i + 1) for i in range(n)])
    with counting() as c:
        r = a @ a
    assert float(r) == sum((i + 1) ** 2 for i in range(n))
    assert c.select() == OpCounts(add=n - 1, mul=n)
    with counting() as c2:
        a.reshape(1, n) @ a.reshape(n, 1)
    assert c2.select() == OpCounts(add=n - 1, mul=n)


def test_binary_ops_with_flops_and_numbers_are_counted() -> None:
    x, y = Flop(3.0), Flop(2.0)
    with counting() as c:
        results = [x + y, x - y, x * y, x / y, 2 + x, 2 - x, 2 * x, 2 / x, x + 1.5, x - 1, x * 0.5, x / 4]
    assert [float(r) for r in results] == [5.0, 1.0, 6.0, 1.5, 5.0, -1.0, 6.0, 2 / 3, 4.5, 2.0, 1.5, 0.75]
    assert c.select() == OpCounts(add=3, sub=3, mul=3, div=3)
    assert c.select().flops == 12


def test_negation_is_counted_separately_not_as_a_flop() -> None:
    with counting() as c:
        r = -Flop(2.0)
    assert float(r) == -2.0
    counts = c.select()
    assert counts == OpCounts(neg=1)
    assert counts.flops == 0 and counts.with_neg == 1


def test_structural_int_zero_is_free() -> None:
    x = Flop(2.5)
    with counting() as c:
        assert (x + 0) is x
        assert (0 + x) is x
        assert (x - 0) is x
        prod1, prod2, quot = x * 0, 0 * x, 0 / x
        neg = 0 - x
    assert prod1 == 0 and type(prod1) is int
    assert prod2 == 0 and type(prod2) is int
    assert quot == 0 and type(quot) is int
    assert float(neg) == -2.5
    assert c.select() == OpCounts(neg=1)  # 0 - x costs a negation only
    with pytest.raises(ZeroDivisionError):
        x / 0


def test_float_zero_is_a_number_and_is_counted() -> None:
    x, z = Flop(2.0), Flop(0.0)
    with counting() as c:
        x + z, z * x, z - x, x * 0.0
    assert c.select() == OpCounts(add=1, mul=2, sub=1)


def test_structural_zeros_make_matmul_cheaper() -> None:
    dense = flops([0.0, 0.0, 1.0, 2.0])
    struct = np.array([0, 0, Flop(1.0), Flop(2.0)], dtype=object)
    v = flops([1.0, 2.0, 3.0, 4.0])
    with counting() as cd:
        rd = dense @ v
    with counting() as cs:
        rs = struct @ v
    assert float(rd) == float(rs) == 11.0
    assert cd.select() == OpCounts(mul=4, add=3)
    assert cs.select() == OpCounts(mul=2, add=1)


def test_policy_zero_follows_the_counter_policy() -> None:
    x = Flop(3.0)

    def line_a() -> Any:
        return x * STRUCTURAL_ZERO + x  # Alg1 line A

    def line_b() -> Any:
        return x * STRUCTURAL_ZERO + x  # Alg1 line B

    with counting({"line A": "structural", "line B": "dense"}) as c:
        ra, rb = line_a(), line_b()
    assert float(ra) == float(rb) == 3.0
    assert c.select("line A") == OpCounts()
    assert c.select("line B") == OpCounts(mul=1, add=1)
    with counting(default="structural") as c2:
        z = STRUCTURAL_ZERO
        assert (z * x) is z and (x - z) is x and (z / x) is z and (-z) is z
        assert float(z - x) == -3.0
    assert c2.select() == OpCounts(neg=1)
    with counting(default="dense") as c3:
        assert float(z * x) == 0.0 and float(x - z) == 3.0 and float(-z) == 0.0
    assert c3.select() == OpCounts(mul=1, sub=1, neg=1)


def test_ops_outside_a_counter_are_not_recorded_and_values_are_right() -> None:
    assert active_counter() is None
    assert float((Flop(1.0) + 2) * Flop(3.0) / 4 - 1) == 1.25
    with counting() as c:
        assert active_counter() is c
    assert active_counter() is None


def test_comparisons_float_and_abs_are_free() -> None:
    x = Flop(-2.0)
    with counting() as c:
        assert x < 0 and x <= Flop(-2.0) and Flop(1.0) > x and x >= -2 and x == -2.0 and x != Flop(1.0)
        assert float(abs(x)) == 2.0 and float(x) == -2.0
    assert c.select() == OpCounts()


# --------------------------------------------------------------------------- attribution
def _helper(a: Flop, b: Flop) -> Any:
    return a * b


def test_attribution_to_marked_line_and_k() -> None:
    x = Flop(2.0)
    with counting() as c:
        for k in range(3):
            x + (k + 1)  # Alg1 line 99
            _helper(x, x)  # Alg1 line 100 (through a helper frame)
        x - 1  # unmarked
    assert c.select("line 99") == OpCounts(add=3)
    assert {kk for (lab, kk, _) in c.counts if lab == "line 99"} == {0, 1, 2}
    assert c.select("line 100 (through a helper frame)", k=1) == OpCounts(mul=1)
    assert c.select(OTHER) == OpCounts(sub=1)


def test_attribution_without_an_int_k_gives_none() -> None:
    k = "not an int"
    with counting() as c:
        Flop(1.0) * Flop(2.0)  # Alg1 line 7
    assert k == "not an int"
    assert dict(c.counts) == {("line 7", None, "mul"): 1}


def test_algorithm1_every_op_is_attributed_to_a_printed_line() -> None:
    fc = count_algorithm1(7, 4, zeros="dense")
    assert set(fc.labels()) == ALG1_LABELS
    assert fc.select(OTHER) == OpCounts()
    for lab in ALG1_LABELS:
        assert sorted(fc.per_iteration(lab)) == [1, 2, 3, 4]
    fr = count_algorithm1(7, 4, zeros="structural", regenerate=True)
    assert set(fr.labels()) == ALG1_LABELS | set(REGENERATE_LABELS)
    assert fr.bp() == fr.select(BP_LABELS + REGENERATE_LABELS)


def test_algorithm1_hand_checked_iteration_counts() -> None:
    """One column k (code index j = k - 1) of U has n - j nonzeros: check what object matmul costs."""
    n, m = 6, 3
    dense = count_algorithm1(n, m, zeros="dense")
    struct = count_algorithm1(n, m, zeros="structural")
    for k in range(1, m + 1):
        nnz = n - (k - 1)
        assert dense.per_iteration("line 8")[k] == OpCounts(mul=n + 1, add=n - 1, div=1)
        assert struct.per_iteration("line 8")[k] == OpCounts(mul=nnz + 1, add=nnz - 1, div=1)
        assert struct.per_iteration("line 9")[k] == OpCounts(mul=nnz, sub=nnz)
        assert struct.per_iteration("line 14")[k] == OpCounts(mul=2 * n, sub=n, neg=1)
    assert dense.fp(norms=False) + dense.select("line 4") == dense.fp()
    assert dense.total() == dense.fp() + dense.bp()


# --------------------------------------------------------------------------- invariance
@pytest.mark.parametrize("zeros", ["dense", "structural"])
@pytest.mark.parametrize("regenerate", [False, True])
def test_counts_do_not_depend_on_the_values(zeros: str, regenerate: bool) -> None:
    a = count_algorithm1(8, 5, zeros=zeros, regenerate=regenerate, batch=2, seed=1)  # type: ignore[arg-type]
    b = count_algorithm1(8, 5, zeros=zeros, regenerate=regenerate, batch=2, seed=99)  # type: ignore[arg-type]
    assert a.counts == b.counts


def test_policy_modes_match_the_uniform_modes() -> None:
    labels = [*FP_LABELS, *BP_LABELS, *REGENERATE_LABELS]
    for regen in (False, True):
        s = count_algorithm1(7, 5, zeros={lab: "structural" for lab in labels}, regenerate=regen)
        d = count_algorithm1(7, 5, zeros={lab: "dense" for lab in labels}, regenerate=regen)
        assert s.counts == count_algorithm1(7, 5, zeros="structural", regenerate=regen).counts
        assert d.counts == count_algorithm1(7, 5, zeros="dense", regenerate=regen).counts
    mixed = count_algorithm1(7, 5, zeros={"line 9": "structural"})
    dense = count_algorithm1(7, 5, zeros="dense")
    struct = count_algorithm1(7, 5, zeros="structural")
    for lab in ALG1_LABELS:
        assert mixed.select(lab) == (struct if lab == "line 9" else dense).select(lab)


# --------------------------------------------------------------------------- numbers
def _floats(a: np.ndarray) -> np.ndarray:
    return np.asarray([[float(v) for v in row] for row in a], dtype=np.float64)


@pytest.mark.parametrize("regenerate", [False, True])
def test_counter_does_not_change_algorithm1_numbers(regenerate: bool) -> None:
    n, m, batch = 7, 4, 2
    u, h, g = random_inputs(n, m, zeros="dense", batch=batch, seed=3)
    fc = count_algorithm1_on(u, h, g, regenerate=regenerate)
    assert fc.outputs is not None
    # bitwise: the same code on object arrays of plain Python floats (nothing recorded)
    uf, hf, gf = (np.vectorize(float, otypes=[object])(a) for a in (u, h, g))
    b = FlopBackend()
    fwd = algorithm1_forward(uf, hf, b)
    if regenerate:
        dh, du = algorithm1_backward(uf, gf, b, c=fwd.big_h[0], norms=fwd.norms)
    else:
        dh, du = algorithm1_backward(uf, gf, b, fwd)
    for got, want in ((fc.outputs.c, fwd.big_h[0]), (fc.outputs.dl_dh, dh), (fc.outputs.dl_du, du)):
        np.testing.assert_array_equal(_floats(got), np.asarray(want, dtype=np.float64))
    # and against the numpy-float64 backend (BLAS may sum in another order)
    ref = algorithm1(_floats(u), _floats(h), _floats(g), backend=get_backend("numpy-float64"))
    np.testing.assert_allclose(_floats(fc.outputs.c), ref.c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_floats(fc.outputs.dl_dh), ref.dl_dh, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_floats(fc.outputs.dl_du), ref.dl_du, rtol=1e-12, atol=1e-12)


def test_structural_and_dense_runs_compute_the_same_numbers() -> None:
    d = count_algorithm1(6, 3, zeros="dense", seed=5).outputs
    s = count_algorithm1(6, 3, zeros="structural", seed=5).outputs
    assert d is not None and s is not None
    for a, b in ((d.c, s.c), (d.dl_dh, s.dl_dh), (d.dl_du, s.dl_du)):
        np.testing.assert_array_equal(_floats(a), _floats(b))


# --------------------------------------------------------------------------- sRNN, sequences
def test_srnn_counts_are_matmul_counts() -> None:
    c = count_srnn(4)
    assert c.fp == OpCounts(mul=16, add=12)
    assert c.bp_wg == OpCounts(mul=16, add=12)
    assert c.bp_outer == OpCounts(mul=16)
    assert c.bp == c.bp_wg + c.bp_outer


@pytest.mark.parametrize("regenerate", [False, True])
def test_sequence_counts_n_once_and_repeats_steps(regenerate: bool) -> None:
    n, m, steps = 6, 3, 4
    one = count_algorithm1(n, m, zeros="structural", regenerate=regenerate)
    seq = count_sequence(n, m, steps, zeros="structural", regenerate=regenerate)
    assert seq.norms == one.select("line 4")
    assert seq.norms_recomputed.flops == (steps - 1) * one.select("line 4").flops
    assert seq.fp.flops == steps * one.fp(norms=False).flops + one.select("line 4").flops
    assert seq.bp == OpCounts.of({k: steps * getattr(one.bp(), k) for k in ("add", "sub", "mul", "div", "neg")})
    assert seq.total == seq.fp + seq.bp


# --------------------------------------------------------------------------- backend, errors
def test_flop_backend_protocol_basics() -> None:
    b = FlopBackend()
    assert (b.name, b.family, b.method, b.eps, b.exact) == ("flops", "flops", "exhaustive", 2.0**-53, False)
    x = b.asarray([[1.0, -4.0], [0.0, 2.0]])
    assert all(isinstance(v, Flop) for v in x.reshape(-1))
    with counting() as c:
        s = b.sum(x)
        r = b.sqrt(b.asarray([4.0]))
    assert float(s) == -1.0 and float(r[0]) == 2.0
    assert c.select() == OpCounts(add=3, sqrt=1)  # the sum of 4 numbers costs 3 adds
    assert float(b.max_abs(x)) == 4.0 and b.is_zero(b.zeros((2, 2))) and not b.is_zero(x)
    assert b.to_strings(b.asarray([0.5])) == ["0.5"]
    np.testing.assert_array_equal(b.to_numpy(b.eye(2)), np.eye(2))


def test_bad_sizes_and_modes_are_rejected() -> None:
    with pytest.raises(DomainError):
        count_algorithm1(3, 4)
    with pytest.raises(ShapeError):
        count_algorithm1(3, 2, batch=0)
    with pytest.raises(DomainError):
        count_algorithm1(3, 2, zeros="sparse")  # type: ignore[arg-type]
    with pytest.raises(DomainError):
        count_algorithm1(3, 2, zeros={"line 8": "free"})  # type: ignore[dict-item]
    with pytest.raises(DomainError):
        count_sequence(3, 2, 0)


def test_counter_reset_and_labels() -> None:
    c = FlopCounter()
    with c.active():
        Flop(1.0) + Flop(2.0)  # Alg1 line 1
    assert c.labels() == ["line 1"]
    c.reset()
    assert c.select() == OpCounts()


def test_large_grid_is_fast_enough() -> None:
    fc = count_algorithm1(24, 23, zeros="dense", batch=1)
    assert fc.total().flops > 0
