"""This family's former check names, per claim: old name -> name now (renamed checks only; why
they are kept: :mod:`orthoverify.engine.check_names`)."""

from __future__ import annotations

from collections.abc import Mapping

_PRINTED: dict[str, Mapping[str, str]] = {
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
    "householder.algorithm1": {
        "exact_matlab_listing": "exact",
        "high_precision_finite_differences": "finite_differences",
        "float_vs_definition_and_eq14": "float",
        "float_matlab_listing": "float:listing",
        "autograd_function_batched": "custom_backward",
    },
    "householder.algorithm1_derivation": {"exact_line_by_line": "line_by_line"},
    "householder.flops": {"exhaustive_instrumented_count": "count"},
    "householder.complexity": {"exhaustive_flop_growth": "count", "measured_time_growth": "measured"},
}
TWINS = tuple(f"householder.{c}" for c in ("algorithm2_float", "theorem2_proof", "algorithm1_derivation", "flops"))
"""Printed claims whose ``.corrected`` twin had the same checks, renamed alike."""
FORMERLY: Mapping[str, Mapping[str, str]] = _PRINTED | {f"{i}.corrected": _PRINTED[i] for i in TWINS}
