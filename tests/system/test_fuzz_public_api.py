"""Fuzz of the public API (issue 17): every call with hostile but plausible arguments ends in
a named orthoverify error or a finite (and, where cheaply checkable, correct) result.

Three layers, all on :mod:`tests.system.fuzz_harness`:

* Hypothesis draws a target, one of its mutations and the seed of its valid inputs (the
  project's profiles: derandomised ``ci`` in CI, ``quick`` locally);
* an explicit table of the failures issue 17 reported, so they always run;
* the full sweep (every target x every mutation, ~8000 calls, ~20 s), marked slow.

The harness itself is checked on planted targets: a raw numpy error, a silent NaN and a wrong
(non-orthogonal) result must each be caught, and a correct target must pass.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import orthoverify.param
from orthoverify.errors import DomainError, NonFiniteError
from orthoverify.tolerance import THRESHOLD
from tests.system import fuzz_harness as fh

TARGETS = fh.targets()
CASES = {t.name: [c.mutation for c in fh.cases_of(t)] for t in TARGETS}

# Public callables deliberately not fuzzed directly, by why. Everything else public in
# orthoverify.param.*, nn, testing and samples must have a target (test below).
RECORDS = (
    "cayley.Certificate cayley.ScaledCayleyInverse householder.Algorithm1Result householder.Algorithm1Forward "
    "householder.Algorithm2Result householder_flops.FlopCount householder_flops.SrnnCount "
    "householder_flops.SequenceCount householder_proofs.Typo householder_proofs.ProofLine "
    "householder_proofs.Judgement linear_rnn.Problem linear_rnn.CriticalPoint linear_rnn.GlobalMinimum "
    "svd.HouseholderQR svd.SvdParameters svd.HgradResult svd.SvdLocalResult svd_flops.LocalCount unitary.CArray "
    "unitary.URNNParameters unitary_flops.Basis unitary_flops.ApplyCount unitary_gradients.Unrolled "
    "unitary_rank.RankDecision"
)
KERNELS = (  # take a Backend and arrays that a fuzzed entry point has already validated
    "cayley.skew_ratio cayley.pair_flip householder.wy_t householder.algorithm1_forward "
    "householder.algorithm1_backward linear_rnn.symmetry_ratio linear_rnn.psd_defect linear_rnn.gradient_scale "
    "linear_rnn.hessian_eigenvalues linear_rnn.exact_critical_points_1d unitary.czeros unitary.ceye unitary.ct "
    "unitary.cnorm unitary.unitarity_ratio unitary.separable_activation unitary_gradients.modrelu_twin "
    "unitary_gradients.activation_vjp unitary_gradients.activation_jacobian unitary_gradients.activation_norm "
    "unitary_gradients.gradient_norms unitary_rank.tangent_coordinates unitary_rank.skew_from_coordinates "
    "unitary_rank.singular_values unitary_rank.jacobian_rank unitary_spectral.best_angle"
)
BUILT = (  # take a validated URNNParameters / Unrolled / certificate built by a fuzzed entry point
    "cayley.certify unitary.urnn_factors unitary_rank.flat_parameters unitary_rank.symmetry_directions "
    "unitary_rank.jacobian_analytic unitary_rank.jacobian_autograd unitary_rank.jacobian_central "
    "unitary_rank.urnn_preimage unitary_rank.as_parameters unitary_gradients.forward_from "
    "unitary_gradients.autograd_gradients unitary_gradients.exact_gradients unitary_gradients.gradient_scales "
    "unitary_gradients.chain_rule_product unitary_gradients.chain_rule_products "
    "unitary_gradients.chain_rule_gradients unitary_gradients.chain_rule_gradient"
)
FUNCTIONS = (  # autograd Functions: reached through their fuzzed apply wrappers
    "cayley_torch.ScaledCayleyFunction householder_torch.Algorithm1Function householder_wy.HouseholderWYFunction"
)
TOOLS = (  # the proof audit (takes ProofLine objects) and the flop-count fits (integer tables)
    "householder_proofs.judge householder_proofs.audit householder_proofs.theorem2_reference "
    "householder_proofs.theorem2_proof_lines householder_proofs.appendix_b_reference "
    "householder_proofs.appendix_b_lines "
    "householder_flops.random_inputs householder_flops.count_algorithm1_on householder_flops.count_srnn "
    "householder_flops.count_sequence svd_flops.difference svd_flops.count_hgrad svd_flops.count_svdrnn_local "
    "svd_flops.count_ornn_local unitary_flops.is_power_of_two unitary_flops.urnn_apply_counts "
    "unitary_flops.count_dense_apply unitary_flops.dense_apply_counts unitary_flops.fit_exact unitary_flops.fit_nlogn "
    "unitary_flops.fit_quadratic unitary_flops.check_fit unitary_flops.formula unitary_flops.fit_factors "
    "unitary_flops.nlogn_constant unitary_flops.check_nlogn_bound unitary_flops.dense_over_fft"
)
ANALYSIS = (  # the cayley and svd claims' analysis helpers (moved here from claims/): not a user API
    "cayley_analysis.admissible_signs cayley_analysis.det_sign cayley_analysis.every_scaling "
    "cayley_analysis.log_abs_det cayley_analysis.skew_dimension cayley_analysis.scornn_parameters "
    "cayley_analysis.drift_experiment cayley_analysis.sizes_giving cayley_analysis.init_eigenvalues "
    "cayley_analysis.init_corrected_eigenvalues cayley_analysis.monic cayley_analysis.reflected_matches "
    "cayley_analysis.matching_distance "
    "polynomial_fit.Fit polynomial_fit.fit_polynomial svd_flops.size_grid svd_table3.table3_counts "
    "svd_table3.explain_row svd.unflatten_parameters svd.exact_jacobian svd.stack_padded svd.unstack_padded "
    "svd.svdrnn_parameters svd.svdrnn_weight svd.perturbation_margin"
)
CONFIG = (  # a lookup with no array input: a size and a device in, a block size out (unit-tested)
    "householder_wy.choose_block"
)
EXCUSED = frozenset(" ".join((RECORDS, KERNELS, BUILT, FUNCTIONS, TOOLS, ANALYSIS, CONFIG)).split())


def _public_callables() -> list[str]:
    mods = [f"orthoverify.param.{m.name}" for m in pkgutil.iter_modules(orthoverify.param.__path__)]
    mods += ["orthoverify.nn", "orthoverify.testing", "orthoverify.samples"]
    out = []
    for name in mods:
        if name.rsplit(".", 1)[1].startswith("_"):
            continue
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", None) == name:
                out.append(f"{name.rsplit('.', 1)[1]}.{attr}")
    return out


def test_every_public_callable_is_fuzzed_or_excused() -> None:
    covered = {".".join(t.name.split(".")[:2]).removesuffix("()") for t in TARGETS}
    missing = [c for c in _public_callables() if c not in covered and c not in EXCUSED]
    assert not missing, f"public callables with neither a fuzz target nor a reason: {missing}"
    stale = sorted(EXCUSED - set(_public_callables()))
    assert not stale, f"excused names that no longer exist: {stale}"


VALID_RAISES = {"nn.URNNUnitary.right_inverse", "nn.URNNUnitary.strict.right_inverse"}
"""Targets whose every call raises by design (URNNUnitary has no right_inverse: DomainError)."""


def test_every_valid_call_succeeds() -> None:
    """The harness's own valid calls return a value (else every mutation of them tests nothing)."""
    for t in TARGETS:
        o = fh.run_case(t, "valid")
        assert o.ok, o
        assert bool(o.detail) == (t.name in VALID_RAISES), o


@given(st.sampled_from(TARGETS), st.data(), st.integers(0, 2**16))
def test_fuzz_public_api(target: fh.Target, data: st.DataObject, seed: int) -> None:
    """One target, one of its mutations (or every float input scaled by a random 10^e, e in
    [-320, 307]), valid inputs drawn from ``seed``: a named error or a finite, correct result."""
    if target.scalable and data.draw(st.booleans(), label="random magnitude"):
        mutation = f"scale={10.0 ** data.draw(st.integers(-320, 307), label='log10 scale')!r}"
    else:
        mutation = data.draw(st.sampled_from(CASES[target.name]), label="mutation")
    outcome = fh.run_case(target, mutation, seed)
    assert outcome.ok, f"{outcome.status}: {outcome.case}: {outcome.detail}"


# What issue 17 reported, as (target, mutation, what must come out: "value" a finite correct
# result, "error" a named orthoverify error, "either").
KNOWN_BAD = [
    # tiny magnitudes: NaN before, now a correct result (columns rescaled by powers of two)
    ("householder.reflector_apply", "scale=1e-310", "value"),
    ("householder.algorithm1", "scale=1e-310", "value"),
    ("householder.algorithm1_matlab", "scale=1e-310", "value"),
    ("householder_torch.householder_apply", "scale=1e-310", "value"),
    ("nn.HouseholderOrthogonal.forward", "scale=1e-310", "value"),
    ("nn.HouseholderOrthogonal.forward", "scale=1e-200", "value"),
    # large magnitudes
    ("householder.theorem2_gradients", "scale=1e+160", "value"),
    ("householder.reflector_apply", "scale=1e+300", "value"),
    ("unitary.modrelu", "scale=1e+160", "value"),
    ("unitary.modrelu_relu_form", "scale=1e+300", "value"),
    ("unitary.modrelu_real", "scale=1e+160", "value"),
    ("unitary.polish_unitary", "scale=1e+160", "error"),
    ("unitary.complex_rnn.relu", "scale=1e+160", "error"),
    ("unitary.real_rnn", "scale=1e+160", "error"),
    ("linear_rnn.population_risk", "scale=1e+160", "error"),
    ("linear_rnn.risk_gradient", "scale=1e+160", "error"),
    ("linear_rnn.expected_loss", "scale=1e+300", "error"),
    # NaN in, NaN out
    ("cayley.init_blocks", "0:nan", "error"),
    ("nn.SVDParametrization.forward", "0:nan", "error"),
    # non-orthogonal W without a word (ratios to 1e278 before)
    ("cayley.scaled_cayley.graded", "valid", "either"),
    ("cayley.scaled_cayley.graded.torch", "valid", "either"),
    ("cayley.cayley.graded", "valid", "either"),
    # raw numpy/torch errors
    ("householder.reflection", "0:str", "error"),
    ("householder.reflection", "0:meta", "error"),
    ("householder.reflection", "0:bfloat16", "error"),
    ("householder.reflection", "0:grad_list", "error"),
    ("householder.reflection", "0:ragged", "error"),
    ("cayley.scaled_cayley", "0:bfloat16", "error"),
    ("svd.m_rect", "0.0:meta", "error"),
    ("unitary.fft", "0:grad_list", "error"),
    ("unitary.fft_native", "0:empty", "error"),
    ("svd.hprod", "0:scalar", "error"),
    ("unitary.embed_vector", "0:scalar", "error"),
    ("linear_rnn.classify", "0:str", "error"),
    ("testing.assert_orthogonal", "0:meta", "error"),
    ("samples.rational_vectors", "1:int#1", "error"),  # m > n: looped forever
    ("samples.haar_orthogonal", "1:int#8", "error"),  # n = 10**30
    ("cayley.signs_with_rho", "0:int#8", "error"),
    ("backends.torch-float32.asarray", "scale=1e+300", "error"),
    ("backends.get_backend", "0:str#6", "error"),  # flint-1000000000: took 10 GB before
]


@pytest.mark.parametrize(("name", "mutation", "expect"), KNOWN_BAD, ids=[f"{n}[{m}]" for n, m, _ in KNOWN_BAD])
def test_known_bad_cases(name: str, mutation: str, expect: str) -> None:
    assert mutation in CASES[name], f"{mutation} is not a mutation of {name}"
    outcome = fh.run_case(fh.target(name), mutation)
    assert outcome.ok, f"{outcome.status}: {outcome.case}: {outcome.detail}"
    raised = bool(outcome.detail)
    if expect == "value":
        assert not raised, f"expected a correct result, got {outcome.detail}"
    elif expect == "error":
        assert raised, "expected a named error, got a result"


def test_scaled_cayley_graded_is_orthogonal_or_refused() -> None:
    """Skew A with entries spanning 1e-5 .. 1e155: W orthogonal to ratio <= 30, or DomainError."""
    from orthoverify.param.cayley import scaled_cayley

    rng = np.random.default_rng(7)
    results = Counter()
    for _ in range(60):
        n = int(rng.integers(2, 7))
        a = fh._graded_skew(rng, n)
        d = [1] * n
        try:
            w = scaled_cayley(a, d)
        except DomainError as exc:
            assert "max |a_ij|" in str(exc)
            results["refused"] += 1
            continue
        assert fh.orthogonal_ratio(w) <= THRESHOLD
        results["orthogonal"] += 1
    assert results["orthogonal"] >= 50, results  # refusals are the rare exception


def test_householder_tiny_columns_match_unit_columns() -> None:
    """Reflections are scale invariant: U at 1e-301 gives bit for bit what U at 1 gives (the
    rescaling by powers of two is exact; before, U'U underflowed to 0 and C was NaN)."""
    from orthoverify.param.householder import algorithm1, reflector_apply

    rng = np.random.default_rng(3)
    u, h, g = np.tril(rng.standard_normal((5, 3))), rng.standard_normal(5), rng.standard_normal(5)
    e = np.ldexp(1.0, -1000)  # U' U underflows without rescaling; u * e is exact (normal)
    assert np.array_equal(reflector_apply(u * e, h), reflector_apply(u, h))
    small, unit = algorithm1(u * e, h, g), algorithm1(u, h, g)
    assert np.array_equal(small.c, unit.c) and np.array_equal(small.dl_dh, unit.dl_dh)
    np.testing.assert_array_equal(small.dl_du * e, unit.dl_du)  # dL/dU scales as 1/|U|


def test_overflowing_gradient_is_a_domain_error() -> None:
    """U tiny, h and dL/dC of unit size: dL/dU ~ 1/|U| = 1e310 is beyond float64: named, not Inf."""
    from orthoverify.param.householder import algorithm1

    rng = np.random.default_rng(4)
    u = np.tril(rng.standard_normal((4, 2))) * 1e-310
    with pytest.raises(DomainError, match="overflows"):
        algorithm1(u, rng.standard_normal(4), rng.standard_normal(4))


def test_float32_conversion_out_of_range() -> None:
    from orthoverify.backends import get_backend

    for name in ("numpy-float32", "torch-float32"):
        with pytest.raises(DomainError, match="range"):
            get_backend(name).asarray([1.0, 1e300], name="x")
        get_backend(name).check_array([1.0, 3e38], name="x")  # in range: fine
    with pytest.raises(NonFiniteError):
        get_backend("numpy-float32").check_array([1.0, np.inf], name="x")


# --------------------------------------------------------------------------- planted defects
def _planted() -> list[fh.Target]:
    def raw(x: np.ndarray) -> np.ndarray:
        return np.linalg.inv(np.asarray(x, dtype=float))  # LinAlgError / ValueError unnamed

    def silent_nan(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return x / np.sqrt((x * x).sum())  # 1e-310: 0/0; 1e160: inf/inf

    def not_orthogonal(x: np.ndarray) -> np.ndarray:
        return np.eye(3) + 1e-6

    def good(x: np.ndarray) -> np.ndarray:
        from orthoverify.param.householder import reflection

        return reflection(x)

    make = lambda g: ((g.standard_normal(3),), {})  # noqa: E731
    return [
        fh.Target("planted.raw", raw, make),
        fh.Target("planted.silent_nan", silent_nan, make),
        fh.Target("planted.not_orthogonal", not_orthogonal, make, fh._ortho()),
        fh.Target("planted.good", good, make, fh._ortho()),
    ]


def test_harness_catches_planted_defects() -> None:
    raw, nan, wrong, good = _planted()
    assert fh.run_case(raw, "0:rank_up").status == "raw"
    assert fh.run_case(nan, "scale=1e-310").status == "nan"
    assert fh.run_case(wrong, "valid").status == "wrong"
    assert all(fh.run_case(good, c.mutation).ok for c in fh.cases_of(good))


@pytest.mark.slow
def test_full_sweep() -> None:
    """Every target with every mutation (~8000 calls): no raw error, no silent NaN, no wrong result."""
    outcomes = fh.sweep()
    bad = [o for o in outcomes if not o.ok]
    assert not bad, "\n".join(f"{o.status} {o.case}: {o.detail}" for o in bad[:40])
