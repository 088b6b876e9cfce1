"""How much work the unitary family's checks do on each profile, beyond the profile's own sizes,
cases and search examples: the one place of the family where effort depends on the profile, one
dataclass with a named field per setting and one instance per profile (see Profile.pick)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from orthoverify.engine.templates import per_profile


@dataclass(frozen=True, kw_only=True)
class Effort:
    """Per-profile effort of the unitary checks that enumerate, count or sample beyond the
    profile's sizes (each field names the claims that read it)."""

    permutations_max_n: int  # building_blocks: every permutation matrix of n = 1..
    indices_max_n: int  # modrelu_real: every index i = 1..2n of n = 1..
    flops_pow2_max_n: int  # composition: flops of W h counted for powers of two up to
    flops_other_max_n: int  # composition: and for other n (Bluestein) up to
    init_h0_draws: int  # init_h0: Monte Carlo draws per n
    chain_exact_n3_t2: bool  # chain_rule.corrected: SymPy's exact derivative also for N = 3, T = 2
    rank_max_n: int  # coverage*: the Jacobian's rank for n = 1..
    rank_points: int  # coverage*: random points per n
    agreement_max_n: int  # coverage: autograd vs analytic Jacobian for n = 1..
    central_difference_sizes: tuple[int, ...]  # coverage: analytic vs 50-digit central differences
    kernel_hp_sizes: tuple[int, ...]  # coverage_threshold: symmetry directions at 50 digits
    coverage_hp_sizes: tuple[int, ...]  # coverage: 50-digit rank, n > 7
    threshold_hp_sizes: tuple[int, ...]  # coverage_threshold: 50-digit rank around the exact threshold
    every_pi_max_n: int  # coverage_threshold: every fixed permutation Pi for n <= this
    sampled_pi: tuple[tuple[int, int], ...]  # coverage_threshold: (n, random Pi besides identity and reversal)
    haar_sizes: tuple[int, ...]  # coverage_threshold: Haar targets reached by Gauss-Newton for these n
    haar_targets: int  # coverage_threshold: targets per n


_DEFAULT = Effort(
    permutations_max_n=6,
    indices_max_n=64,
    flops_pow2_max_n=1024,
    flops_other_max_n=100,
    init_h0_draws=100000,
    chain_exact_n3_t2=True,
    rank_max_n=16,
    rank_points=2,
    agreement_max_n=16,
    central_difference_sizes=(2, 3),
    kernel_hp_sizes=(3, 6, 8),
    coverage_hp_sizes=(8, 9),
    threshold_hp_sizes=(5, 6, 7),
    every_pi_max_n=5,
    sampled_pi=((6, 30), (7, 4), (8, 4)),
    haar_sizes=(2, 3, 4, 5),
    haar_targets=3,
)
effort = per_profile(  # quick and thorough: what they change of default
    quick=replace(
        _DEFAULT,
        permutations_max_n=5,
        indices_max_n=16,
        flops_pow2_max_n=256,
        flops_other_max_n=33,
        init_h0_draws=20000,
        chain_exact_n3_t2=False,
        rank_max_n=10,
        rank_points=1,
        agreement_max_n=8,
        kernel_hp_sizes=(3, 6),
        coverage_hp_sizes=(8,),
        threshold_hp_sizes=(5, 6),
        sampled_pi=((6, 4),),
        haar_sizes=(2, 3),
        haar_targets=2,
    ),
    default=_DEFAULT,
    thorough=replace(
        _DEFAULT,
        rank_max_n=20,
        rank_points=4,
        agreement_max_n=20,
        central_difference_sizes=(2, 3, 4),
        kernel_hp_sizes=(3, 6, 8, 9),
        coverage_hp_sizes=(8, 9, 10),
        threshold_hp_sizes=(4, 5, 6, 7),
        every_pi_max_n=6,
        sampled_pi=((7, 20), (8, 20)),
        haar_targets=8,
    ),
)
