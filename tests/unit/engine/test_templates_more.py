"""The claimsHC templates (engine/templates_more.py) can fail: each one catches a planted defect."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from orthoverify import samples
from orthoverify.backends import Backend, get_backend
from orthoverify.engine import RunContext, get_profile
from orthoverify.engine.checks import Case, Check, PropertyCheck
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import listed
from orthoverify.engine.templates_more import (
    full_rank,
    growth_slopes,
    guarded,
    least_cpu_times,
    recorded_lines,
    recorded_values,
)
from orthoverify.errors import SingularError
from tests.unit.engine.test_templates import run  # one helper: a check run on the quick profile


def evidence(backend: str, data: dict[str, Any], method: str = "float", check: str = "c") -> Evidence:
    return Evidence(claim="t.x", check=check, method=method, backend=backend, data=data)  # type: ignore[arg-type]


def test_recorded_lines_draw_each_key_of_each_complete_record() -> None:
    """One line per key and backend, dashed where asked; a planted record missing a key (a run that
    stopped early) is left out instead of breaking the figure."""
    series = recorded_lines("step", {"a": "scheme a", "b": "scheme b"}, dashed=("b",))
    rows = [
        evidence("numpy-float64", {"step": [1, 10], "a": [0.1, 0.2], "b": [1.0, 5.0]}),
        evidence("numpy-float32", {"step": [1, 10], "a": [0.3, 0.4]}),  # planted: no "b"
    ]
    got = series(rows)
    assert [(s.label, list(s.x), list(s.y), s.dashed) for s in got] == [
        ("scheme a, numpy-float64", [1, 10], [0.1, 0.2], False),
        ("scheme b, numpy-float64", [1, 10], [1.0, 5.0], True),
    ]


def test_recorded_values_leave_out_searches_and_other_backends() -> None:
    """Each named backend's statistic, one histogram per check; a planted search row (steered
    cases, not a sample) and a backend without a named statistic are not drawn."""
    series = recorded_values({"numpy-float64": "max|a|"})
    stats = {"stats": {"max|a|": [[2, 0.5], [3, 1.0]]}}
    rows = [
        evidence("numpy-float64", stats, check="float"),
        evidence("numpy-float64", stats, method="search", check="search"),
        evidence("numpy-float32", stats, check="float"),
    ]
    got = series(rows)
    assert [(s.label, list(s.y)) for s in got] == [("max|a|: float [numpy-float64]", [0.5, 1.0])]


def test_guarded_judges_a_singular_solve_as_a_failure() -> None:
    """A measure that raises SingularError on a planted singular case measures infinite, valued by
    the guard's text, and the check refutes with that case; other errors still propagate."""

    @guarded(SingularError, "I + W is singular")
    def inverse_residual(b: Backend, case: Case) -> Measure:
        x = float(case["x"])
        if x == -1.0:
            raise SingularError("planted")
        return Measure(0.0, error=0.0)

    cases = listed({"x": 0.5}, {"x": -1.0})
    ev = run(PropertyCheck("c", inverse_residual, cases, ("numpy-float64",), "q"), "numpy-float64")
    assert not ev.passed and ev.counterexample is not None
    assert ev.counterexample.inputs == {"x": "-1"} and ev.counterexample.value == "I + W is singular"
    assert inverse_residual(get_backend("numpy-float64"), {"x": 0.5}).ratio == 0.0

    @guarded(SingularError, "never")
    def broken(b: Backend, case: Case) -> Measure:
        raise ValueError("a bug, not a finding")

    with pytest.raises(ValueError):
        broken(get_backend("numpy-float64"), {})


def linear_point(rows: list[list[float]]) -> Any:
    def point(b: Backend, rng: np.random.Generator, n: int) -> tuple[Any, Any]:
        a = b.asarray(rows)
        return (lambda v: a @ v), b.asarray(rng.standard_normal(3))

    return point


def test_full_rank_refutes_a_map_that_loses_a_direction() -> None:
    """A full-rank linear map passes with the gap recorded; a planted one whose third output is the
    sum of the first two has rank 2 of the stated 3 and fails."""
    sizes = lambda ctx: (3,)  # noqa: E731
    right = full_rank("r", sizes, linear_point([[2, 1, 0], [0, 1, 3], [1, 0, 1]]), lambda n: n, "rank")
    ev = run(right, "torch-float64")
    assert ev.passed and ev.cases == 1 and ev.data["min_margin"] > 100 and check_has_no_threshold(right)
    planted = full_rank("r", sizes, linear_point([[2, 1, 0], [0, 1, 3], [2, 2, 3]]), lambda n: n, "rank")
    ev = run(planted, "torch-float64")
    assert not ev.passed and "rank 2 (expected 3)" in ev.notes


def check_has_no_threshold(check: Check) -> bool:
    return getattr(check, "threshold", 0) is None


def test_least_cpu_times_keeps_each_jobs_least_time_round_robin() -> None:
    """With a planted clock: jobs run in turn each round, and each keeps its least time, so a
    job slowed in one round (load) is not charged for it."""
    now, order = [0.0], []
    costs = {"a": iter([5.0, 1.0, 3.0]), "b": iter([2.0, 2.0, 9.0])}

    def job(key: str) -> Any:
        def run_it() -> None:
            order.append(key)
            now[0] += next(costs[key])

        return run_it

    best = least_cpu_times({"a": job("a"), "b": job("b")}, 3, clock=lambda: now[0])
    assert best == {"a": 1.0, "b": 2.0}
    assert order == ["a", "b"] * 3


def test_structured_orthogonal_samples() -> None:
    """The quarter-turn blocks and the DCT are orthogonal; the blocks have max entry 1 and
    eigenvalues +-i (a trailing 1 when asked for odd n)."""
    for n in (1, 2, 5, 8):
        d = samples.dct_orthogonal(n)
        assert np.linalg.norm(d.T @ d - np.eye(n)) < 10 * n * np.finfo(float).eps
        q = samples.quarter_turns(n, odd_one=True)
        assert np.array_equal(q.T @ q, np.eye(n))
        eigs = np.linalg.eigvals(q)
        assert sum(abs(e - 1) < 1e-12 for e in eigs) == n % 2
        assert all(math.isclose(abs(e), 1.0) for e in eigs)
    assert not samples.quarter_turns(3)[2].any()  # without odd_one the trailing row is zero


def test_haar_of_a_given_determinant() -> None:
    """Both determinants on request, the same draw otherwise; a planted det = 0 is refused."""
    from orthoverify.errors import DomainError

    for det in (1, -1):
        q = samples.haar_orthogonal_det(np.random.default_rng(3), 4, det)
        assert np.isclose(np.linalg.det(q), det) and np.allclose(q.T @ q, np.eye(4))
    plain = samples.haar_orthogonal(np.random.default_rng(3), 4)
    same = samples.haar_orthogonal_det(np.random.default_rng(3), 4, round(np.linalg.det(plain)))
    assert np.array_equal(plain, same)
    with pytest.raises(DomainError):
        samples.haar_orthogonal_det(np.random.default_rng(3), 4, 0)


def test_growth_slopes_tell_linear_from_quadratic() -> None:
    """With a planted clock whose cost is n m t (linear in each) the slopes are 1; a planted
    defect, a job quadratic in n, shows slope 2 along n only. Each point is set up once."""
    now, made = [0.0], []

    def cost(power: int) -> Any:
        def job(n: int, m: int, t: int) -> Any:
            made.append((n, m, t))

            def run_it() -> None:
                now[0] += float(n**power * m * t)

            return run_it

        return job

    base, axes = {"n": 8, "m": 2, "t": 3}, {"n": [4, 8, 16], "m": [1, 2, 4], "t": [3, 6]}
    slopes, best = growth_slopes(base, axes, cost(1), 2, clock=lambda: now[0])
    assert slopes == pytest.approx({"n": 1.0, "m": 1.0, "t": 1.0})
    assert sorted(made) == made and len(made) == len(set(made)) == len(best) == 6
    assert best[(16, 2, 3)] == 16 * 2 * 3
    slopes, _ = growth_slopes(base, axes, cost(2), 2, clock=lambda: now[0])
    assert slopes == pytest.approx({"n": 2.0, "m": 1.0, "t": 1.0})


def test_signed_permutation_matrices_are_every_signed_permutation() -> None:
    """Every drawn matrix is a signed permutation; over n = 2 all eight are drawn."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from orthoverify.strategies import signed_permutation_matrices

    seen: set[bytes] = set()

    @settings(max_examples=200, derandomize=True, database=None)
    @given(st.integers(1, 4).flatmap(signed_permutation_matrices))
    def check(p: np.ndarray) -> None:
        assert np.array_equal(np.abs(p).sum(axis=0), np.ones(len(p))) and np.array_equal(p.T @ p, np.eye(len(p)))
        if len(p) == 2:
            seen.add(p.tobytes())

    check()
    assert len(seen) == 8


def test_random_signed_permutation_is_the_two_draws_in_turn() -> None:
    """The same draws as signs then a permutation (the order claims relied on); a signed permutation."""
    p = samples.random_signed_permutation(np.random.default_rng(5), 6)
    rng = np.random.default_rng(5)
    assert np.array_equal(p, samples.random_signs(rng, 6) @ samples.random_permutation(rng, 6))
    assert np.array_equal(p.T @ p, np.eye(6)) and set(np.abs(p).sum(axis=1)) == {1.0}


def test_sizes_between_reads_the_named_list_or_the_checks_arithmetic() -> None:
    """A range of the profile's sizes: of a named list, or of the check's arithmetic (high
    precision on mpmath, exact on SymPy); a planted empty range gives no sizes."""
    from orthoverify.engine.templates_more import sizes_between

    def ctx(backend: str) -> RunContext:
        return RunContext("t.x", "c", get_backend(backend), get_profile("default"), 0)

    p = get_profile("default")
    assert sizes_between(2, 16)(ctx("numpy-float64")) == [n for n in p.sizes if 2 <= n <= 16]
    assert sizes_between(1, 4)(ctx("mpmath")) == [n for n in p.hp_sizes if n <= 4]
    assert sizes_between(2, 4, "exact_sizes")(ctx("torch-float64")) == [n for n in p.exact_sizes if n >= 2]
    assert sizes_between(2)(ctx("sympy")) == [n for n in p.exact_sizes if n >= 2]
    assert sizes_between(17, 15)(ctx("numpy-float64")) == []
