"""How much work the unitary family's checks do on each profile, beyond the profile's own sizes,
cases and search examples: the one place of the family where effort depends on the profile
(its quick, default or thorough column, see Profile.pick)."""

from __future__ import annotations

from dataclasses import dataclass

from orthoverify.engine.checks import RunContext


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
        5, 16, 256, 33, 20000, False, CoveragePlan(10, 1, 8, (2, 3), (3, 6), (8,), (5, 6), 5, ((6, 4),), (2, 3), 2)
    ),
    Effort(
        6,
        64,
        1024,
        100,
        100000,
        True,
        CoveragePlan(16, 2, 16, (2, 3), (3, 6, 8), (8, 9), (5, 6, 7), 5, ((6, 30), (7, 4), (8, 4)), (2, 3, 4, 5), 3),
    ),
    Effort(
        6,
        64,
        1024,
        100,
        100000,
        True,
        CoveragePlan(
            20, 4, 20, (2, 3, 4), (3, 6, 8, 9), (8, 9, 10), (4, 5, 6, 7), 6, ((7, 20), (8, 20)), (2, 3, 4, 5), 8
        ),
    ),
)


def effort(ctx: RunContext) -> Effort:
    """The effort of ctx's profile (its quick, default or thorough column, see Profile.pick)."""
    return ctx.profile.pick(*EFFORT)
