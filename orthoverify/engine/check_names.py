"""The check names: a fixed vocabulary, and the names results recorded before it.

A check's name says what kind of evidence it is (which template made it, in which arithmetic),
not what the claim is about: the claim's statement and the check's quantity say that. A name is
a word of :data:`VOCABULARY`, or, where one claim has two checks of the same kind, the word and a
short qualifier after a colon (``float:inverse``). The templates give the word by default.

Results written before the vocabulary carry the old names (144 of them for 219 checks).
:data:`RENAMED` maps each claim's old names to the new ones, so that a recorded counterexample
still replays (:func:`current_name`), and each renamed check keeps the seed its old name gave it
(:func:`seed_name`): the same cases, the same evidence, under the new name.
"""

from __future__ import annotations

from collections.abc import Mapping

VOCABULARY: Mapping[str, str] = {
    "symbolic": "identities in free symbols that SymPy reduces to zero",
    "exact": "the statement at exact rational points (SymPy)",
    "float": "test ratios over generated float cases (and their 50-digit re-examination)",
    "float_edge": "test ratios on the inputs the computation is fragile at (near-aligned, extreme magnitudes)",
    "all_arithmetics": "one test ratio over cases in SymPy, at 50 digits and in float",
    "high_precision": "a computation at 50 digits only (a certificate)",
    "search": "a Hypothesis search (or an enumerated hunt) for a breaking case",
    "exhaustive": "every instance of a finite set (signs, permutations, branches, indices)",
    "rigorous": "interval (ball) arithmetic that proves a bound",
    "converse": "the 'only if' direction of a characterisation",
    "witness": "hand-built or enumerated cases that break (or certify) the statement",
    "nonexistence": "a symbolic proof that no solution exists (Groebner basis)",
    "symbolic_derivative": "a gradient formula against SymPy's derivative in free symbols",
    "exact_derivative": "a gradient formula against SymPy's exact derivative at rational points",
    "finite_differences": "a gradient formula against central differences at 50 digits",
    "autograd": "a gradient formula against torch autograd through the definition",
    "custom_backward": "a hand-written backward (torch.autograd.Function) against autograd",
    "search_autograd": "a Hypothesis search for the inputs where a formula and autograd disagree most",
    "count": "stated counts (parameters, flops, rows) against counted ones over a grid",
    "line_by_line": "a transcribed proof judged line by line in exact arithmetic",
    "exact_jacobian_rank": "a Jacobian's rank in exact arithmetic",
    "jacobian_rank": "a Jacobian's numerical rank in float",
    "jacobian_rank_50_digits": "a Jacobian's numerical rank at 50 digits",
    "measured": "a measurement (time, flops, drift over many updates)",
    "trajectory": "a recurrent network run over many steps in float",
}
"""Every check-name word, with what a check of that name measures."""

RENAMED: Mapping[str, Mapping[str, str]] = {
    "householder.reflection": {
        "symbolic_reflection": "symbolic",
        "symbolic_h1_iff": "converse",
        "exact_rational": "exact",
        "float_wide_magnitudes": "float_edge",
        "search_magnitudes": "search",
    },
    "householder.theorem1": {
        "exact_rational_orthogonal": "exact",
        "exhaustive_signed_permutations": "exhaustive",
        "float_structured_and_haar": "float",
        "search_structured": "search",
    },
    "householder.algorithm2": {"exact_rational": "exact", "exhaustive_branch_patterns": "exhaustive"},
    "householder.algorithm2_float": {
        "float_near_aligned": "float_edge",
        "float_generic": "float",
        "search_near_aligned": "search",
    },
    "householder.algorithm2_float.corrected": {
        "float_near_aligned": "float_edge",
        "float_generic": "float",
        "search_near_aligned": "search",
    },
    "householder.two_reflections_2x2": {
        "symbolic_determinant_and_distance": "symbolic",
        "groebner_no_solution": "nonexistence",
        "float_distance": "float",
    },
    "householder.orthogonal_when": {
        "exact_u1_necessary": "converse",
        "float_wide_magnitudes": "float_edge",
        "search_magnitudes": "search",
        "rigorous_rational": "rigorous",
    },
    "householder.parameter_count": {"exhaustive_count": "count", "float_jacobian_rank": "jacobian_rank"},
    "householder.proposition1": {"exact_rational": "exact", "search_magnitudes": "search"},
    "householder.theorem2": {"high_precision_finite_differences": "finite_differences"},
    "householder.theorem2_proof": {"exact_line_by_line": "line_by_line"},
    "householder.theorem2_proof.corrected": {"exact_line_by_line": "line_by_line"},
    "householder.algorithm1": {
        "exact_matlab_listing": "exact",
        "high_precision_finite_differences": "finite_differences",
        "float_vs_definition_and_eq14": "float",
        "float_matlab_listing": "float:listing",
        "autograd_function_batched": "custom_backward",
    },
    "householder.algorithm1_derivation": {"exact_line_by_line": "line_by_line"},
    "householder.algorithm1_derivation.corrected": {"exact_line_by_line": "line_by_line"},
    "householder.flops": {"exhaustive_instrumented_count": "count"},
    "householder.flops.corrected": {"exhaustive_instrumented_count": "count"},
    "householder.complexity": {"exhaustive_flop_growth": "count", "measured_time_growth": "measured"},
    "cayley.bijection": {
        "symbolic_both_ways": "symbolic",
        "exhaustive_signed_permutations": "exhaustive",
        "exact_rational": "exact",
        "float_forward_roundtrip": "float",
        "float_backward_roundtrip": "float:inverse",
        "search_magnitudes": "search",
        "rigorous_rational": "rigorous",
    },
    "cayley.example_2x2": {"exact_value": "exact", "float_and_high_precision": "float"},
    "cayley.theorem3_1": {
        "exhaustive_all_d_high_precision": "exhaustive",
        "exhaustive_all_d_float64": "exhaustive:float64",
        "algorithm_exact": "exact",
        "algorithm_float_up_to_512": "float",
        "certificate_at_50_digits": "high_precision",
        "search_no_d_works": "search",
    },
    "cayley.theorem3_2": {
        "exact_rational": "exact_derivative",
        "autograd_through_solve": "autograd",
        "torch_function_vs_autograd": "custom_backward",
        "high_precision_finite_differences": "finite_differences",
    },
    "cayley.skew_update": {"float_many_steps": "float"},
    "cayley.orthogonality_drift": {"measured_10k_updates": "measured"},
    "cayley.three_layers": {"exact_rational": "exact"},
    "cayley.modrelu_real": {"exact_grid": "exhaustive", "exact_at_zero": "exact"},
    "cayley.init": {
        "symbolic_block_eigenvalues": "symbolic",
        "float_eigenvalues": "float",
        "exhaustive_d_reflection": "exhaustive",
    },
    "cayley.init.corrected": {
        "symbolic_block_eigenvalues": "symbolic",
        "exhaustive_d_corrected": "exhaustive",
        "float_random_d": "float",
    },
    "cayley.parameter_count": {"exact_dimension": "count", "tables_under_n(n-1)": "count:tables"},
    "cayley.parameter_count.corrected": {"exact_dimension": "count", "float_jacobian_rank": "jacobian_rank"},
    "cayley.table_params": {"recount_every_row": "count"},
    "svd.reflector": {"structure": "all_arithmetics"},
    "svd.proposition1": {"exact_all_inputs": "exhaustive", "float_nonsingular": "float"},
    "svd.proposition1.corrected": {"construction": "all_arithmetics"},
    "svd.theorem1": {"construction": "all_arithmetics", "image_orthogonal": "all_arithmetics:image"},
    "svd.theorem2": {"from_svd": "float", "exact_factors": "exact"},
    "svd.dimension": {"float_jacobian_rank": "jacobian_rank"},
    "svd.theorem3": {"construction_every_k": "exhaustive"},
    "svd.theorem3_sharp": {"exact_eigenvalue_one": "witness"},
    "svd.theorem3_proof": {"as_printed": "exhaustive"},
    "svd.theorem3_proof.corrected": {"repaired": "exhaustive"},
    "svd.lemma1": {"every_pair": "all_arithmetics", "exact_sharp_range": "exhaustive"},
    "svd.theorem4": {"from_svd": "float", "exact_factors": "exact"},
    "svd.theorem4_proof": {"as_printed": "line_by_line"},
    "svd.sigma_range": {"range": "float", "tanh_form": "symbolic"},
    "svd.parameter_count": {"inventory_and_algebra": "count"},
    "svd.table3": {"recount_every_row": "count"},
    "svd.table3.corrected": {"one_convention": "count"},
    "svd.hprod": {"exact_including_zero": "exact", "float_nonzero_u": "float"},
    "svd.hprod.corrected": {"guarded": "all_arithmetics"},
    "svd.hgrad": {"central_differences_50_digits": "finite_differences"},
    "svd.algorithm1": {"central_differences_50_digits": "finite_differences"},
    "svd.algorithm1.corrected": {"central_differences_50_digits": "finite_differences"},
    "svd.flops": {"exhaustive_instrumented_count": "count"},
    "svd.flops.corrected": {"exhaustive_instrumented_count": "count"},
    "svd.orthogonal_rnn_omission": {
        "householder_algorithm1_keeps_it": "witness",
        "householder_algorithm1_is_full_gradient": "exact_derivative",
    },
    "svd.claim1": {
        "risk_vs_expectation_exact": "exact",
        "risk_vs_expectation_float": "float",
        "printed_gradient_vs_exact_derivative": "exact_derivative",
        "printed_gradient_vs_autograd": "autograd",
        "printed_gradient_vs_central_differences_50_digits": "finite_differences",
    },
    "svd.claim1.corrected": {
        "risk_vs_expectation_exact": "exact",
        "risk_vs_expectation_float": "float",
        "symbolic_gradient": "symbolic_derivative",
        "gradient_vs_exact_derivative": "exact_derivative",
        "gradient_vs_autograd": "autograd",
        "gradient_vs_central_differences_50_digits": "finite_differences",
    },
    "svd.theorem5": {"critical_point_search_50_digits": "search", "exact_critical_points_n1": "witness"},
    "svd.corollary1": {"pullback_hand_built_n1": "witness", "pullback_search_n2": "search"},
    "unitary.complex_block": {
        "haar_and_structured": "all_arithmetics",
        "homomorphism": "symbolic",
        "block_algebra": "exact",
    },
    "unitary.rnn_equivalence": {"unrolled": "all_arithmetics"},
    "unitary.modrelu_real": {"indices_as_printed": "exhaustive"},
    "unitary.modrelu_real.corrected": {"indices": "exhaustive", "against_complex": "all_arithmetics", "rnn": "float"},
    "unitary.corollary1": {
        "invert_and_rebuild": "float",
        "invert_search": "search",
        "image_unitary": "all_arithmetics",
        "image_unitary_symbolic": "symbolic",
    },
    "unitary.corollary1_proof": {"theta_exists": "witness"},
    "unitary.corollary1_proof.corrected": {"eq17": "all_arithmetics"},
    "unitary.lemma1": {"spectral": "float", "real_if_paired": "float:paired", "real_only_if_columns": "converse"},
    "unitary.lemma1.corrected": {
        "spectral": "float",
        "real_if_paired": "float:paired",
        "real_only_if_eigenpairs": "converse",
    },
    "unitary.building_blocks": {
        "blocks": "all_arithmetics",
        "reflection_symbolic": "symbolic",
        "permutations": "exhaustive",
        "dft_normalisation": "float",
    },
    "unitary.composition": {
        "unitary_and_fft": "float",
        "parameters": "count",
        "flops": "measured",
        "rigorous_unitary": "rigorous",
    },
    "unitary.coverage": {"rank_50_digits": "jacobian_rank_50_digits", "jacobian_agreement": "float"},
    "unitary.coverage_threshold": {
        "rank_50_digits": "jacobian_rank_50_digits",
        "symmetry_kernel": "float",
        "permutations": "exhaustive",
        "haar_targets": "search",
    },
    "unitary.gradient_bound": {
        "random_and_structured": "float",
        "autograd_vs_backward": "custom_backward",
        "trajectory_urnn": "trajectory",
        "isometry_step": "symbolic",
    },
    "unitary.gradient_bound_modrelu": {
        "hand_built": "witness",
        "random_cases": "float",
        "autograd_vs_backward": "custom_backward",
        "trajectory_urnn": "trajectory",
        "jacobian_eigenvalues": "symbolic",
    },
    "unitary.gradient_bound_modrelu.corrected": {
        "hand_built": "witness",
        "random_and_structured": "float",
        "autograd_vs_backward": "custom_backward",
        "trajectory_urnn": "trajectory",
        "jacobian_eigenvalues": "symbolic",
    },
    "unitary.chain_rule": {"exact": "exact_derivative", "float_vs_autograd": "autograd"},
    "unitary.chain_rule.corrected": {
        "exact": "exact_derivative",
        "float_vs_autograd": "autograd",
        "central_differences": "finite_differences",
    },
    "unitary.modrelu": {"both_forms": "all_arithmetics", "boundary_search": "search"},
    "unitary.init_h0": {"expectation": "symbolic", "monte_carlo": "float"},
    "unitary.init_silent": {"identity": "all_arithmetics"},
}
"""Per claim, its checks' names before the vocabulary and their names now (renamed ones only)."""

_SEEDED_AS: Mapping[str, Mapping[str, str]] = {
    claim: {new: old for old, new in names.items()} for claim, names in RENAMED.items()
}


def word(name: str) -> str:
    """The vocabulary word of a check name (the name without its qualifier)."""
    return name.partition(":")[0]


def in_vocabulary(name: str) -> bool:
    """Whether ``name`` is a vocabulary word, or one with a qualifier of lowercase letters and digits."""
    w, colon, qualifier = name.partition(":")
    ok_qualifier = not colon or (qualifier.replace("_", "").isalnum() and qualifier.islower())
    return w in VOCABULARY and ok_qualifier


def current_name(claim: str, recorded: str) -> str:
    """The name now of the check that recorded ``recorded`` for ``claim`` (an old name or a new one)."""
    return RENAMED.get(claim, {}).get(recorded, recorded)


def seed_name(claim: str, check: str) -> str:
    """The name a check's seed is derived from: its old name when it was renamed (so a renamed
    check draws the cases it drew before), else its name."""
    return _SEEDED_AS.get(claim, {}).get(check, check)
