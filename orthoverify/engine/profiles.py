"""Run profiles: how much work a check does (sizes, cases, search effort)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from orthoverify.errors import RegistryError

if TYPE_CHECKING:
    from orthoverify.backends import Backend

T = TypeVar("T")


@dataclass(frozen=True)
class Profile:
    """Effort settings every check reads; bigger profiles only ever add cases."""

    name: str
    sizes: tuple[int, ...]  # n for float checks
    hp_sizes: tuple[int, ...]  # n for high-precision checks
    exact_sizes: tuple[int, ...]  # n for exact (SymPy, rational) checks
    symbolic_sizes: tuple[int, ...]  # n for fully symbolic checks (free symbols)
    cases: int  # random cases per size
    search_examples: int  # Hypothesis examples per search
    timing_repeats: int  # repeats per timing measurement (minimum taken)
    count_max_n: int  # largest n of exhaustive counts over n = 1, 2, ... (parameter counts)
    flop_grid_max_n: int  # largest n of instrumented flop counts over every (n, m < n)
    growth_sizes: tuple[int, ...]  # n of instrumented cost-growth checks (flops of T steps)
    level: int = 1  # 0 quick, 1 default, 2 thorough: the column of a family's effort table (see pick)
    # validate's effort (orthoverify.conformance): a target is judged with the same profiles
    validate_examples: int = 150  # random draws of the orthogonality search over a target
    search_decades: int = 8  # magnitudes 10^-k .. 10^k the search over a target goes out to
    optimisation_steps: int = 200  # L-BFGS steps per Haar target when coverage is reached by optimisation
    optimisation_targets: int = 2  # Haar targets per size and determinant of that optimisation
    lifecycle_steps: int = 10  # optimiser steps of a module's lifecycle scenarios

    def sizes_on(self, b: Backend) -> tuple[int, ...]:
        """The sizes n of a check on ``b``: ``exact_sizes`` in exact arithmetic, ``hp_sizes`` on a
        high-precision backend (each operation costs far more there), else ``sizes``."""
        if b.exact:
            return self.exact_sizes
        return self.hp_sizes if b.method == "high-precision" else self.sizes

    def pick(self, quick: T, default: T, thorough: T) -> T:
        """A family's own effort setting on this profile (say, how many random instances a bespoke
        search draws): the value of this profile's level, so no claim tests a profile's name."""
        return (quick, default, thorough)[max(0, min(2, self.level))]


PROFILES: dict[str, Profile] = {
    "quick": Profile(
        name="quick",
        validate_examples=40,
        search_decades=4,
        optimisation_steps=100,
        optimisation_targets=2,
        lifecycle_steps=5,
        level=0,
        sizes=(1, 2, 3, 4, 7, 16),
        hp_sizes=(2, 3, 5),
        exact_sizes=(1, 2, 3),
        symbolic_sizes=(2, 3),
        cases=2,
        search_examples=40,
        timing_repeats=2,
        count_max_n=12,
        flop_grid_max_n=8,
        growth_sizes=(4, 8, 16),
    ),
    "default": Profile(
        name="default",
        validate_examples=150,
        search_decades=8,
        optimisation_steps=200,
        optimisation_targets=2,
        lifecycle_steps=10,
        level=1,
        sizes=(1, 2, 3, 4, 5, 8, 16, 32, 64),
        hp_sizes=(2, 3, 4, 6, 8),
        exact_sizes=(1, 2, 3, 4),
        symbolic_sizes=(2, 3),
        cases=4,
        search_examples=200,
        timing_repeats=3,
        count_max_n=40,
        flop_grid_max_n=14,
        growth_sizes=(4, 8, 16, 24),
    ),
    "thorough": Profile(
        name="thorough",
        validate_examples=1000,
        search_decades=12,
        optimisation_steps=500,
        optimisation_targets=4,
        lifecycle_steps=25,
        level=2,
        sizes=(1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64, 128, 256),
        hp_sizes=(2, 3, 4, 5, 6, 8, 12, 16),
        exact_sizes=(1, 2, 3, 4, 5),
        symbolic_sizes=(2, 3),
        cases=10,
        search_examples=1000,
        timing_repeats=5,
        count_max_n=40,
        flop_grid_max_n=24,
        growth_sizes=(4, 8, 16, 24),
    ),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (quick, default or thorough)."""
    try:
        return PROFILES[name]
    except KeyError:
        raise RegistryError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
