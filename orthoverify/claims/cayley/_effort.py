"""How much work the cayley family's checks do on each profile, beyond the profile's own sizes,
cases and search examples: the one place of the family where effort depends on the profile
(its quick, default or thorough column, see Profile.pick)."""

from __future__ import annotations

from dataclasses import dataclass

from orthoverify.engine.checks import RunContext


@dataclass(frozen=True, kw_only=True)
class Effort:
    """Per-profile effort of the cayley checks that enumerate or run experiments beyond the
    profile's sizes."""

    enumeration_max_n: int  # theorem3_1: every D at 50 digits up to this n (float64: 4 more)
    large_sizes: tuple[int, ...]  # theorem3_1: the inverse map in float also at these n
    drift_n: int  # orthogonality_drift: the size of the 10^4-step experiment
    reflection_max_n: int  # init: every D, exact characteristic polynomials, for n = 2..


EFFORT = (  # quick, default, thorough
    Effort(enumeration_max_n=5, large_sizes=(128, 512), drift_n=32, reflection_max_n=4),
    Effort(enumeration_max_n=8, large_sizes=(128, 256, 512), drift_n=64, reflection_max_n=5),
    Effort(enumeration_max_n=10, large_sizes=(128, 256, 512), drift_n=128, reflection_max_n=5),
)


def effort(ctx: RunContext) -> Effort:
    """The effort of ctx's profile."""
    return ctx.profile.pick(*EFFORT)
