"""How much work the unitary family's checks do on each profile, beyond the profile's own sizes,
cases and search examples: the one place of the family where effort depends on the profile
(its quick, default or thorough column, see Profile.pick)."""

from __future__ import annotations

from dataclasses import dataclass

from orthoverify.engine.checks import RunContext


@dataclass(frozen=True, kw_only=True)
class CoveragePlan:
    """The Jacobian-rank checks of unitary.coverage and unitary.coverage_threshold."""

    float_max: int  # rank for n = 1..float_max
    float_cases: int  # random points per n
    agree_max: int  # autograd vs analytic for n = 1..agree_max
    cd_sizes: tuple[int, ...]  # analytic vs 50-digit central differences
    kernel_hp: tuple[int, ...]  # symmetry directions at 50 digits
    coverage_hp: tuple[int, ...]  # 50-digit rank, n > 7
    threshold_hp: tuple[int, ...]  # 50-digit rank around the exact threshold
    perm_all: int  # every permutation for n <= perm_all
    perm_sampled: tuple[tuple[int, int], ...]  # (n, random permutations) besides identity and reversal
    haar_sizes: tuple[int, ...]
    haar_targets: int


@dataclass(frozen=True, kw_only=True)
class Effort:
    """Per-profile effort of the unitary checks that enumerate, count or sample beyond the
    profile's sizes."""

    permutations_max_n: int  # building_blocks: every permutation matrix of n = 1..
    indices_max_n: int  # modrelu_real: every index i = 1..2n of n = 1..
    flops_pow2_max_n: int  # composition: flops of W h counted for powers of two up to
    flops_other_max_n: int  # composition: and for other n (Bluestein) up to
    init_h0_draws: int  # init_h0: Monte Carlo draws per n
    chain_exact_n3_t2: bool  # chain_rule.corrected: SymPy's exact derivative also for N = 3, T = 2
    coverage: CoveragePlan


EFFORT = (  # quick, default, thorough
    Effort(
        permutations_max_n=5,
        indices_max_n=16,
        flops_pow2_max_n=256,
        flops_other_max_n=33,
        init_h0_draws=20000,
        chain_exact_n3_t2=False,
        coverage=CoveragePlan(
            float_max=10,
            float_cases=1,
            agree_max=8,
            cd_sizes=(2, 3),
            kernel_hp=(3, 6),
            coverage_hp=(8,),
            threshold_hp=(5, 6),
            perm_all=5,
            perm_sampled=((6, 4),),
            haar_sizes=(2, 3),
            haar_targets=2,
        ),
    ),
    Effort(
        permutations_max_n=6,
        indices_max_n=64,
        flops_pow2_max_n=1024,
        flops_other_max_n=100,
        init_h0_draws=100000,
        chain_exact_n3_t2=True,
        coverage=CoveragePlan(
            float_max=16,
            float_cases=2,
            agree_max=16,
            cd_sizes=(2, 3),
            kernel_hp=(3, 6, 8),
            coverage_hp=(8, 9),
            threshold_hp=(5, 6, 7),
            perm_all=5,
            perm_sampled=((6, 30), (7, 4), (8, 4)),
            haar_sizes=(2, 3, 4, 5),
            haar_targets=3,
        ),
    ),
    Effort(
        permutations_max_n=6,
        indices_max_n=64,
        flops_pow2_max_n=1024,
        flops_other_max_n=100,
        init_h0_draws=100000,
        chain_exact_n3_t2=True,
        coverage=CoveragePlan(
            float_max=20,
            float_cases=4,
            agree_max=20,
            cd_sizes=(2, 3, 4),
            kernel_hp=(3, 6, 8, 9),
            coverage_hp=(8, 9, 10),
            threshold_hp=(4, 5, 6, 7),
            perm_all=6,
            perm_sampled=((7, 20), (8, 20)),
            haar_sizes=(2, 3, 4, 5),
            haar_targets=8,
        ),
    ),
)


def effort(ctx: RunContext) -> Effort:
    """The effort of ctx's profile (its quick, default or thorough column, see Profile.pick)."""
    return ctx.profile.pick(*EFFORT)
