"""Measured flop counts of the uRNN product W h (orthoverify.param.unitary_flops) and a smoke
test of the ``unitary.fft`` benchmark case (run on its quick sizes; nothing here is timed)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from orthoverify.backends.flops import OpCounts
from orthoverify.errors import DomainError, ShapeError
from orthoverify.param import unitary_flops as uf

POW2 = tuple(n for n in uf.POW2_SIZES if n <= 256)
NONPOW2 = tuple(n for n in uf.NONPOW2_SIZES if n <= 33)
LINEAR_FACTORS = ("D1", "R1", "Pi", "D2", "R2", "D3")


# --------------------------------------------------------------------------- powers of two
@pytest.mark.parametrize("part", ["call", "per_vector", "setup"])
def test_exact_nlogn_fit_per_factor_and_total(part: uf.Part) -> None:
    fits = uf.fit_factors(POW2, part=part)
    for key, (coeffs, misses) in fits.items():
        assert misses == [], f"{part} {key}: {uf.formula(coeffs)} misses {misses}"
    # the factors add up to the total, coefficient by coefficient
    summed = [sum((fits[f][0][i] for f in uf.FACTORS), Fraction(0)) for i in range(3)]
    assert tuple(summed) == fits["total"][0]


def test_per_vector_formulas() -> None:
    """Per column h: the radix-2 FFT's textbook 5 n log2 n real flops (plus 2n for the 1/sqrt(n)),
    a complex diagonal 6 flops per entry, a reflection x - 2 v (v* x)/||v||^2 16 per entry."""
    fits = uf.fit_factors(POW2, part="per_vector")
    got = {key: uf.formula(coeffs) for key, (coeffs, _) in fits.items()}
    assert got == {
        "D1": "6 n",
        "F": "5 n log2 n + 2 n",
        "R1": "16 n",
        "Pi": "0",
        "D2": "6 n",
        "Finv": "5 n log2 n + 2 n",
        "R2": "16 n",
        "D3": "6 n",
        "total": "10 n log2 n + 54 n",
    }


@pytest.mark.parametrize("part", ["call", "per_vector"])
def test_only_the_fourier_factors_are_n_log_n(part: uf.Part) -> None:
    fits = uf.fit_factors(POW2, part=part)
    for f in LINEAR_FACTORS:
        a, _, _ = fits[f][0]
        assert a == 0, f"{f} is not O(n): {uf.formula(fits[f][0])}"
        counts = [uf.urnn_apply_counts(n, part=part)[f] for n in POW2]
        lin = uf.fit_exact(POW2, counts, uf.LINEAR)
        assert uf.check_fit(POW2, counts, lin, uf.LINEAR) == []
    for f in ("F", "Finv"):
        assert fits[f][0][0] > 0
    assert fits["Pi"][0] == (0, 0, 0)  # a permutation is indexing, no arithmetic


def test_call_is_setup_plus_per_vector_and_batch_affine() -> None:
    for n in (4, 16, 6):
        call = uf.urnn_apply_counts(n)
        setup = uf.urnn_apply_counts(n, part="setup")
        per = uf.urnn_apply_counts(n, part="per_vector")
        assert all(call[k] == setup[k] + per[k] for k in call)
        three = uf.urnn_apply_counts(n, batch=3)
        assert all(three[k] == setup[k] + 3 * per[k] for k in call)


def test_counts_do_not_depend_on_the_values_and_follow_urnn_apply() -> None:
    a = uf.count_urnn_apply(16)
    b = uf.count_urnn_apply(16, seed=7)
    assert a.factors == b.factors
    assert a.total == sum(a.labels.values(), OpCounts())
    assert {"urnn D1", "urnn D2", "urnn D3", "fft butterfly"} <= set(a.labels)
    assert uf.count_urnn_apply(16, cross_check=False).labels == {}


# --------------------------------------------------------------------------- other n (Bluestein)
def test_bluestein_per_vector_is_exact_in_m_and_bounded_by_n_log_n() -> None:
    per = [uf.urnn_apply_counts(n, part="per_vector") for n in NONPOW2]
    for key in ("F", "Finv", "total"):
        counts = [c[key] for c in per]
        coeffs = uf.fit_exact(NONPOW2, counts, uf.BLUESTEIN)
        assert uf.check_fit(NONPOW2, counts, coeffs, uf.BLUESTEIN) == []
    for f in LINEAR_FACTORS:
        counts = [c[f] for c in per]
        lin = uf.fit_exact(NONPOW2, counts, uf.LINEAR)
        assert uf.check_fit(NONPOW2, counts, lin, uf.LINEAR) == []
    parts: tuple[uf.Part, ...] = ("call", "per_vector")
    for part in parts:
        totals = [uf.urnn_apply_counts(n, part=part)["total"] for n in NONPOW2]
        c = uf.nlogn_constant(NONPOW2, totals)
        assert math.isfinite(c)
        assert uf.check_nlogn_bound(NONPOW2, totals, c) == []
        assert uf.check_nlogn_bound(NONPOW2, totals, c * 0.99) != []


def test_bluestein_length() -> None:
    assert [uf.bluestein_length(n) for n in (1, 2, 3, 5, 8, 9, 100)] == [1, 2, 8, 16, 8, 32, 256]
    for n in range(3, 200):
        m = uf.bluestein_length(n)
        assert uf.is_power_of_two(m) and (m == n or 2 * n - 1 <= m < 4 * n - 2)


# --------------------------------------------------------------------------- dense
def test_dense_count_is_quadratic() -> None:
    for batch, want in ((1, "8 n^2 - 2 n"), (2, "16 n^2 - 4 n")):
        totals = [uf.dense_apply_counts(n, batch=batch) for n in uf.DENSE_SIZES]
        coeffs = uf.fit_quadratic(uf.DENSE_SIZES, totals)
        assert uf.check_fit(uf.DENSE_SIZES, totals, coeffs, uf.QUADRATIC) == []
        assert uf.formula(coeffs, uf.QUADRATIC) == want


def test_dense_over_fft() -> None:
    rows = uf.dense_over_fft([2, 16, 64, 1024], fft_ns=(2, 4, 8, 16, 32))
    by_n = {r["n"]: r for r in rows}
    assert by_n[2]["ratio"] < 1 < by_n[16]["ratio"] < by_n[64]["ratio"] < by_n[1024]["ratio"]
    assert by_n[64]["fft_from"] == "formula" and by_n[64]["dense_from"] == "count"
    assert by_n[1024]["dense"] == 8 * 1024**2 - 2 * 1024
    assert by_n[1024]["fft"] == 10 * 1024 * 10 + 54 * 1024
    with pytest.raises(DomainError):
        uf.dense_over_fft([12], fft_ns=(2, 4, 8, 16))


# --------------------------------------------------------------------------- fit helpers
def test_fit_helpers() -> None:
    ns = [2, 4, 8, 16, 32]
    totals = [int(Fraction(7, 2) * n * (n.bit_length() - 1) - 3 * n + 5) for n in ns]
    coeffs = uf.fit_nlogn(ns, totals)
    assert coeffs == (Fraction(7, 2), -3, 5)
    assert uf.check_fit(ns, totals, coeffs) == []
    assert uf.formula(coeffs) == "7/2 n log2 n - 3 n + 5"
    bad = [*totals[:-1], totals[-1] + 1]
    assert uf.check_fit(ns, bad, coeffs) == [(32, bad[-1], Fraction(totals[-1]))]
    assert uf.formula((Fraction(-1), Fraction(0), Fraction(0))) == "-n log2 n"
    assert uf.formula((Fraction(0), Fraction(0), Fraction(0))) == "0"
    with pytest.raises(DomainError):
        uf.fit_nlogn([3, 4, 8], [1, 2, 3])  # 3 log2 3 is irrational
    with pytest.raises(DomainError):
        uf.fit_exact([5, 6, 7, 12], [1, 2, 3, 4], uf.BLUESTEIN)  # 5, 6, 7 share m = 16: singular
    with pytest.raises(DomainError):
        uf.fit_exact([2, 4], [1, 2], uf.NLOGN)  # too few sizes
    with pytest.raises(ShapeError):
        uf.check_fit([2, 4], [1], coeffs)


def test_bad_input() -> None:
    with pytest.raises(ShapeError):
        uf.urnn_apply_counts(0)
    with pytest.raises(DomainError):
        uf.urnn_apply_counts(2.5)  # type: ignore[arg-type]
    with pytest.raises(DomainError):
        uf.urnn_apply_counts(4, part="all")  # type: ignore[arg-type]
    with pytest.raises(ShapeError):
        uf.count_dense_apply(4, batch=0)
    with pytest.raises(DomainError):
        uf.nlogn_constant([1], [5])


# --------------------------------------------------------------------------- the benchmark case
def test_bench_case_unitary_fft_rows() -> None:
    """The ``unitary.fft`` case on its quick sizes: each path checked, then one row per (n, B, path)."""
    from orthoverify.bench import run_bench
    from orthoverify.bench.cases_unitary import BATCHES_QUICK, IMPLS, SIZES_QUICK, THRESHOLD

    doc = run_bench(["unitary.fft"], quick=True, budget_s=0.05, repeats=1)
    rows = json.loads(json.dumps(doc))["results"]
    assert {(r["params"]["n"], r["params"]["B"], r["impl"]) for r in rows} == {
        (n, b, i) for n in SIZES_QUICK for b in BATCHES_QUICK for i in IMPLS
    }
    for r in rows:
        assert {"case", "params", "impl", "baseline", "seconds", "baseline_seconds", "ratio"} <= set(r)
        assert r["case"] == "unitary.fft" and r["params"]["dtype"] == "float64"
        assert r["ratio"] == pytest.approx(r["baseline_seconds"] / r["seconds"])
        assert r["extra"]["check_ratio"] <= THRESHOLD
        assert "exponent_all_n" in r["extra"]


def test_bench_dense_w_matches_urnn_matrix() -> None:
    from orthoverify.bench.cases_unitary import THRESHOLD, check_ratio, dense_w, parameters
    from orthoverify.param.unitary import urnn_matrix

    p, _ = parameters(8)
    w = dense_w(p, chunk=3)  # chunks that do not divide n
    ref = urnn_matrix(p)
    assert check_ratio(w, ref.re + 1j * ref.im) <= THRESHOLD
    assert np.allclose(w.conj().T @ w, np.eye(8))
