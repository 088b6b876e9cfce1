"""Cases over magnitudes: a search from magnitude 1 outwards, and a shrinker back towards it.

Floating-point code that is right at ordinary magnitudes can fail near underflow or overflow,
so a search draws at 10^0, then 10^-1, 10^1, 10^-2, ... (:func:`outward`). A failure found far
out is then made as telling as it can be (:func:`shrink`): a smaller case, a magnitude closer to
1 (never deeper into the subnormal or near-overflow range), fewer digits. A case is a mapping of
names to arrays; ``keys`` name the arrays a magnitude applies to (the rest, say a sign vector,
stay as they are).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

Case = Mapping[str, Any]
M = TypeVar("M")
C = TypeVar("C")


def outward(decades: int) -> list[int]:
    """The decimal exponents of a search from magnitude 1 outwards: 0, -1, 1, ..., -decades, decades."""
    return [0] + [e for k in range(1, decades + 1) for e in (-k, k)]


def draws(
    draw: Callable[[np.random.Generator, int, float], C],
    sizes: Sequence[int],
    decades: int,
    count: int,
    rng: np.random.Generator,
) -> Iterator[C]:
    """``count`` cases ``draw(rng, n, 10^e)``: every size n at each magnitude of :func:`outward`
    in turn (cycling when ``count`` is larger), so that a short search stays near magnitude 1."""
    combos = [(e, n) for e in outward(decades) for n in sizes]
    for i in range(count):
        e, n = combos[i % len(combos)]
        yield draw(rng, n, 10.0**e)


def magnitude(case: Case, keys: Iterable[str]) -> float:
    """max |x_ij| over the arrays ``keys`` of ``case`` (values that are no numeric array are skipped):
    the size a maintainer reads."""
    vals = []
    for k in keys:
        try:
            x = np.asarray(case[k], dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if x.size:
            vals.append(float(np.max(np.abs(x))))
    return max(vals, default=0.0)


def distance_from_one(m: float) -> float:
    """|log10 m|: how far a magnitude is from the ordinary 1 (400, beyond any float, for 0)."""
    return abs(math.log10(m)) if m > 0 else 400.0


def rescaled(case: Case, keys: Iterable[str], t: float) -> dict[str, np.ndarray]:
    """``case`` with the arrays ``keys`` multiplied by ``t``."""
    ks = set(keys)
    return {k: np.asarray(v, dtype=np.float64) * t if k in ks else np.asarray(v) for k, v in case.items()}


def rounded_to(case: Case, keys: Iterable[str], digits: int) -> dict[str, np.ndarray]:
    """The arrays ``keys`` rounded to ``digits`` significant digits (odd-symmetric, so skew stays
    skew; nonzero stays nonzero)."""

    def r(x: float) -> float:
        return float(f"{x:.{digits}g}") if x != 0.0 and math.isfinite(x) else x

    ks = set(keys)
    return {
        k: np.vectorize(r, otypes=[np.float64])(np.asarray(v, dtype=np.float64)) if k in ks else np.asarray(v)
        for k, v in case.items()
    }


def shrink(
    case: Case,
    found: M,
    measure: Callable[[Case], M | None],
    failing: Callable[[M], bool],
    keys: Sequence[str],
    *,
    smaller: Iterable[tuple[str, Iterator[Case]]] = (),
    budget: int = 30,
    digits: Sequence[int] = (2, 4),
) -> tuple[Case, M, list[str]]:
    """A more telling failing case near ``case`` (whose measure ``found`` fails): the first of
    ``smaller`` (step name, lazily drawn candidates) whose candidate fails; then the arrays ``keys``
    rescaled to magnitude 1, else bisected in log scale towards it (never further out); then rounded
    to the first of ``digits`` significant digits that still fails. ``measure`` gives a case's
    measure, or None for a case it will not measure (outside the code's domain, say: not counted);
    at most ``budget`` cases are measured. Returns the case, its measure and the steps taken."""
    best, best_m, steps = case, found, []
    calls = 0

    def attempt(p: Case) -> M | None:
        nonlocal calls
        if calls >= budget:
            return None
        got = measure(p)
        if got is None:
            return None
        calls += 1
        return got if failing(got) else None

    for step, candidates in smaller:
        hit = next(((c, got) for c in candidates if (got := attempt(c)) is not None), None)
        if hit is not None:
            best, best_m = hit
            steps.append(step)
            break
    m = magnitude(best, keys)
    if m > 0 and math.isfinite(m) and abs(math.log10(m)) >= 0.25:  # towards magnitude 1, never further out
        base, lm = best, math.log10(m)

        def at(x: float) -> dict[str, np.ndarray]:
            half = 10.0 ** ((x - lm) / 2)  # in two steps: 10^(x - lm) alone overflows from a subnormal base
            return rescaled(rescaled(base, keys, half), keys, half)

        one = at(0.0)
        got = attempt(one)
        if got is not None:
            best, best_m = one, got
            steps.append("rescaled to magnitude 1")
        else:  # bisect log10 of the magnitude between where it fails (far) and 1 (near), where it passes
            far, near, moved = lm, 0.0, False
            for _ in range(8):
                mid = (far + near) / 2
                if abs(far - mid) < 0.25:
                    break
                cand = at(mid)
                got = attempt(cand)
                if got is not None:
                    best, best_m, far, moved = cand, got, mid, True
                else:
                    near = mid
            if moved:
                steps.append("moved towards magnitude 1")
    for d in digits:
        cand = rounded_to(best, keys, d)
        got = attempt(cand)
        if got is not None:
            best, best_m = cand, got
            steps.append(f"rounded to {d} digits")
            break
    return best, best_m, steps


__all__ = ["distance_from_one", "draws", "magnitude", "outward", "rescaled", "rounded_to", "shrink"]
