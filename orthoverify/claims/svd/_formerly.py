"""This family's former check names, per claim: old name -> name now (renamed checks only; why
they are kept: :mod:`orthoverify.engine.check_names`)."""

from __future__ import annotations

from collections.abc import Mapping

FORMERLY: Mapping[str, Mapping[str, str]] = {
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
}
