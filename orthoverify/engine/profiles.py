"""Run profiles: how much work a check does (sizes, cases, search effort)."""

from __future__ import annotations

from dataclasses import dataclass

from orthoverify.errors import RegistryError


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


PROFILES: dict[str, Profile] = {
    "quick": Profile(
        name="quick",
        sizes=(1, 2, 3, 4, 7, 16),
        hp_sizes=(2, 3, 5),
        exact_sizes=(1, 2, 3),
        symbolic_sizes=(2, 3),
        cases=2,
        search_examples=40,
        timing_repeats=2,
    ),
    "default": Profile(
        name="default",
        sizes=(1, 2, 3, 4, 5, 8, 16, 32, 64),
        hp_sizes=(2, 3, 4, 6, 8),
        exact_sizes=(1, 2, 3, 4),
        symbolic_sizes=(2, 3),
        cases=4,
        search_examples=200,
        timing_repeats=3,
    ),
    "thorough": Profile(
        name="thorough",
        sizes=(1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64, 128, 256),
        hp_sizes=(2, 3, 4, 5, 6, 8, 12, 16),
        exact_sizes=(1, 2, 3, 4, 5),
        symbolic_sizes=(2, 3),
        cases=10,
        search_examples=1000,
        timing_repeats=5,
    ),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (quick, default or thorough)."""
    try:
        return PROFILES[name]
    except KeyError:
        raise RegistryError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
