"""This family's former check names, per claim: old name -> name now (renamed checks only; why
they are kept: :mod:`orthoverify.engine.check_names`)."""

from __future__ import annotations

from collections.abc import Mapping

FORMERLY: Mapping[str, Mapping[str, str]] = {
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
}
