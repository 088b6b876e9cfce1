"""The measured flop counts of svdRNN's Algorithms 1-3 (orthoverify.param.svd_flops) and the
claims svd.flops / svd.flops.corrected built on them (orthoverify.claims.svd.flops), with the exact
polynomial fits (orthoverify.param.polynomial_fit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sympy

from orthoverify.backends.flops import OpCounts
from orthoverify.claims.svd import flops as cf
from orthoverify.engine import replay_from_file
from orthoverify.errors import DomainError, OrthoverifyError, ReplayError, ShapeError
from orthoverify.param import svd_flops as sf
from orthoverify.param.polynomial_fit import fit_polynomial
from tests.claims.claims_common import quick_run

MODULES = ("orthoverify.claims.svd",)


# =============================================================================== Hprod, Hgrad
@pytest.mark.parametrize("n", [1, 4, 9])
def test_hprod_costs_6k_and_4k_plus_a_constant_with_the_norm(n: int) -> None:
    with_norm = {k: sf.count_hprod(n, k, norm=True) for k in range(1, n + 1)}
    consts = {c.flops - 4 * k for k, c in with_norm.items()}
    assert len(consts) == 1 and 0 <= consts.pop() <= 2  # 4k + a small constant, the same for every k
    for k in range(1, n + 1):
        assert sf.count_hprod(n, k).flops == 6 * k
        assert sf.count_hprod(n, k).neg == 0
        # what the norm costs: one inner product of length k
        assert sf.count_hprod(n, k).flops - with_norm[k].flops == 2 * k - 1


def test_hprod_does_not_depend_on_n_thanks_to_the_structural_padding() -> None:
    assert {sf.count_hprod(n, 3, norm=True) for n in (3, 5, 11)} == {sf.count_hprod(3, 3, norm=True)}


def test_hgrad_counts_are_linear_with_3n_and_n_negations() -> None:
    for n, k in [(1, 1), (5, 2), (8, 8), (9, 4)]:
        plain, norm = sf.count_hgrad(n, k), sf.count_hgrad(n, k, norm=True)
        both = sf.count_hgrad(n, k, norm=True, alpha=True)
        assert plain.flops - norm.flops == 2 * k - 1  # the norm
        assert norm.flops - both.flops == 2 * k  # alpha: a length-k inner product and one product
        assert both.flops - 3 * n - 6 * k == sf.count_hgrad(1, 1, norm=True, alpha=True).flops - 9
        assert plain.neg == norm.neg == both.neg == n  # -(g alpha): one negation per entry
        assert plain.sqrt == 0


def test_counts_are_exact_and_deterministic() -> None:
    a = sf.count_svdrnn_local(6, 3, 2, seed=0)
    b = sf.count_svdrnn_local(6, 3, 2, seed=123)
    assert a.counts == b.counts  # the values do not matter, only the sizes
    assert sf.count_hgrad(7, 3, seed=1) == sf.count_hgrad(7, 3, seed=2)
    assert all(isinstance(v, int) for v in a.counts.values())


def test_batches_are_counted_per_column() -> None:
    one, three = sf.count_hprod(6, 4, norm=True), sf.count_hprod(6, 4, norm=True, batch=3)
    assert three.flops > one.flops
    assert sf.count_hgrad(6, 4, batch=2).neg == 6  # -(G alpha) sums over the batch first: n negations


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: sf.count_hprod(0, 1), ShapeError),
        (lambda: sf.count_hprod(3, 0), DomainError),
        (lambda: sf.count_hprod(3, 4), DomainError),
        (lambda: sf.count_hgrad(3, 2, batch=0), ShapeError),
        (lambda: sf.count_hgrad(True, 1), DomainError),
        (lambda: sf.count_hgrad(3.0, 1), DomainError),  # type: ignore[arg-type]
        (lambda: sf.count_svdrnn_local(3, 4, 0), DomainError),
        (lambda: sf.count_svdrnn_local(3, 0, -1), DomainError),
        (lambda: sf.count_ornn_local(3, 4), DomainError),
        (lambda: sf.count_ornn_local(3, 0), DomainError),
    ],
)
def test_bad_sizes_raise_orthoverify_errors(call: object, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, OrthoverifyError)


# =============================================================================== Algorithm 1
def test_local_split_covers_every_operation() -> None:
    lc = sf.count_svdrnn_local(7, 3, 5)
    assert set(lc.labels()) <= set(sf.FP_LABELS) | set(sf.BP_LABELS) | {sf.NORMS_LABEL}
    assert lc.total() == lc.fp(norms=True) + lc.bp()
    assert lc.inline_norms == OpCounts()
    plain = sf.count_svdrnn_local(7, 3, 5, reuse_norms=False)
    assert plain.norms == OpCounts() and plain.inline_norms.flops > 0
    assert plain.total() == plain.fp() + plain.bp() + plain.inline_norms
    assert plain.fp() == lc.fp() and plain.bp() == lc.bp()  # the norms are all that reuse changes


def test_local_bp_is_its_hgrad_calls_so_the_alpha_composition_is_sound() -> None:
    n, m1, m2 = 6, 4, 2
    lc = sf.count_svdrnn_local(n, m1, m2)
    calls = OpCounts()
    for k in lc.hgrad_lengths():
        calls = calls + sf.count_hgrad(n, k, norm=True)
    assert sf.difference(lc.bp(), lc.select(("bp sigma",))) == calls
    saving = sum(2 * k for k in lc.hgrad_lengths())
    assert lc.alpha_saving().flops == saving
    assert lc.bp_reusing_alpha().flops == lc.bp().flops - saving
    fp = OpCounts()
    for k in [*range(n - m2 + 1, n + 1), *range(n - m1 + 1, n + 1)]:
        fp = fp + sf.count_hprod(n, k, norm=True)
    assert sf.difference(lc.fp(), lc.select(("fp sigma",))) == fp


def test_empty_sides_cost_only_sigma() -> None:
    lc = sf.count_svdrnn_local(5, 0, 0)
    assert lc.fp().flops == 5 and lc.bp().flops == 10 and lc.norms == OpCounts()


# =============================================================================== exact fits
def test_fit_recovers_a_rational_polynomial_and_detects_what_is_not_one() -> None:
    pts = sf.size_grid(sf.NMM, 5)
    vals = [2 * n * a - (3 * b * b) // 1 + n + 7 for n, a, b in pts]
    fit = fit_polynomial(sf.NMM, pts, vals, 3)
    assert fit.exact and fit.fitted_on == 20 and fit.verified_on == len(pts) - 20
    n, m1, m2 = sympy.symbols("n m1 m2")
    assert sympy.expand(fit.expr() - (2 * n * m1 - 3 * m2**2 + n + 7)) == 0
    halves = fit_polynomial(("k",), [(k,) for k in range(1, 6)], [k * (k + 1) // 2 for k in range(1, 6)], 2)
    k = sympy.Symbol("k")
    assert sympy.expand(halves.expr() - (k**2 + k) / 2) == 0
    bad = fit_polynomial(("k",), [(k,) for k in range(1, 7)], [2**k for k in range(1, 7)], 2)
    assert not bad.exact and bad.mismatch is not None
    with pytest.raises(DomainError):
        fit_polynomial(("n", "k"), [(1, 1), (2, 1)], [1, 2], 1)


def test_rows_compare_at_the_stated_order() -> None:
    pts = sf.size_grid(sf.NK, 6)
    ok, exact, slope = (
        cf.PRINTED.evaluate(row, pts)
        for row in cf.rows(
            ("t.a", "x", "Hprod 4k", "4*k", sf.NK, 1, "hprod_norm"),
            ("t.b", "x", "Hprod 4k", "4*k", sf.NK, 0, "hprod_norm"),
            ("t.c", "x", "Hprod 5k", "5*k", sf.NK, 1, "hprod_norm"),
        )
    )
    assert ok.holds is True and str(ok.difference) == "1"
    assert exact.holds is False and exact.witness == (1, 1)
    assert slope.holds is False and str(slope.difference) == "-k"
    (fp,) = cf.rows(("t.d", "x", "FP", "4*n*(m1 + m2) - m1**2 - 2*m2**2", sf.NMM, 2, "svdrnn_fp"))
    quad = cf.PRINTED.evaluate(fp, sf.size_grid(sf.NMM, 5))
    assert quad.holds is False and str(quad.difference) == "-m1**2" and quad.witness == (1, 1, 0)


def test_replay_recounts_along_the_ray_and_rejects_bad_inputs() -> None:
    m = cf.PRINTED.replay({"row": "table1.svdrnn_bp", "n": "1", "m1": "0", "m2": "1"})
    assert m.ratio == float("inf") and "6*s**2 + 7*s" in str(m.value) and "9*s**2/2" in str(m.value)
    held = cf.PRINTED.replay({"row": "table1.svdrnn_fp", "n": "2", "m1": "1", "m2": "2"})
    assert held.ratio == 0.0
    exact = cf.CORRECTED.replay({"row": "hgrad", "n": "4", "k": "2"})
    assert exact.ratio == 0.0 and "counted 33" in str(exact.value)
    with pytest.raises(ReplayError):
        cf.PRINTED.replay({"row": "no.such"})
    with pytest.raises(ReplayError):
        cf.PRINTED.replay({"row": "table1.hprod", "n": "x", "k": "1"})


# =============================================================================== claims
@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("svd", tmp_path_factory)  # the family's quick run, shared with tests/claims


def _claim(path: Path, cid: str) -> dict[str, Any]:
    data = json.loads(path.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == cid]
    return dict(claim)


def test_claims_decide_as_the_counts_say(quick: Path) -> None:
    data = json.loads(quick.read_text())
    assert {c["id"]: c["verdict"] for c in data["claims"] if c["id"].startswith("svd.flops")} == {
        "svd.flops": "refuted",
        "svd.flops.corrected": "verified",
    }
    printed = _claim(quick, "svd.flops")
    (ev,) = printed["evidence"]
    assert ev["error"] is None and ev["method"] == "exhaustive"
    holds = {r["row"]: r["holds"] for r in ev["data"]["rows"]}
    assert holds == {
        "sec42.hprod": "yes",
        "sec42.hgrad": "yes",
        "sec42.hprod_norm": "yes",
        "sec42.hgrad_norm": "yes",
        "sec42.alpha": "yes",
        "table1.hprod": "yes",
        "table1.hgrad": "yes",
        "table1.svdrnn_fp": "yes",
        "table1.svdrnn_bp": "no",
        "table1.ornn_fp": "yes",
        "table1.ornn_bp": "yes",
        "extra.svdrnn_fp_norms": "n/a",
        "extra.svdrnn_bp": "n/a",
        "extra.ornn_fp": "n/a",
    }
    measured = {r["row"]: r["measured"] for r in ev["data"]["rows"]}
    assert measured["table1.svdrnn_bp"] == "-3*m1**2 + 9*m1*n + 5*m1 - 3*m2**2 + 9*m2*n + 5*m2 + 2*n"
    assert measured["extra.ornn_fp"] == "-2*m**2 + 4*m*n + 3*m"
    cx = printed["counterexample"]
    assert cx["precision_digits"] == "exact"
    assert cx["inputs"] == {"row": "table1.svdrnn_bp", "n": "1", "m1": "0", "m2": "1"}
    corrected = _claim(quick, "svd.flops.corrected")
    assert all(r["holds"] == "yes" for r in corrected["evidence"][0]["data"]["rows"])


def test_counterexample_replays(quick: Path) -> None:
    rep = replay_from_file(quick, "svd.flops", modules=MODULES)
    assert rep.reproduced and rep.digits == "exact"
    assert "differ by 3*s**2/2" in str(rep.high_precision.value)
