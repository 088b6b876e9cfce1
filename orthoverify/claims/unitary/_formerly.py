"""This family's former check names, per claim: old name -> name now (renamed checks only; why
they are kept: :mod:`orthoverify.engine.check_names`)."""

from __future__ import annotations

from collections.abc import Mapping

_LEMMA1 = {"spectral": "float", "real_if_paired": "float:paired"}
_BOUND = {"autograd_vs_backward": "custom_backward", "trajectory_urnn": "trajectory"}
_MODRELU_BOUND = {**_BOUND, "hand_built": "witness", "jacobian_eigenvalues": "symbolic"}
_CHAIN = {"exact": "exact_derivative", "float_vs_autograd": "autograd"}
"""Renames a claim and its twin (or the two bound claims) share."""

FORMERLY: Mapping[str, Mapping[str, str]] = {
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
    "unitary.lemma1": {**_LEMMA1, "real_only_if_columns": "converse"},
    "unitary.lemma1.corrected": {**_LEMMA1, "real_only_if_eigenpairs": "converse"},
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
    "unitary.gradient_bound": {**_BOUND, "random_and_structured": "float", "isometry_step": "symbolic"},
    "unitary.gradient_bound_modrelu": {**_MODRELU_BOUND, "random_cases": "float"},
    "unitary.gradient_bound_modrelu.corrected": {**_MODRELU_BOUND, "random_and_structured": "float"},
    "unitary.chain_rule": _CHAIN,
    "unitary.chain_rule.corrected": {**_CHAIN, "central_differences": "finite_differences"},
    "unitary.modrelu": {"both_forms": "all_arithmetics", "boundary_search": "search"},
    "unitary.init_h0": {"expectation": "symbolic", "monte_carlo": "float"},
    "unitary.init_silent": {"identity": "all_arithmetics"},
}
