"""The claim templates can fail: each refutes a planted wrong statement (with a counterexample that
replays through the same measure) and verifies a right one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import sympy

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.backends.base import Method
from orthoverify.engine import RunContext, get_profile
from orthoverify.engine.checks import Case, Check
from orthoverify.engine.model import Evidence, Place
from orthoverify.engine.ratios import Measure, flag, residual
from orthoverify.engine.templates import (
    Agreement,
    Derivative,
    Gradient,
    audit,
    chained,
    count,
    drawn,
    exact_sizes,
    exact_witness,
    float_sizes,
    identities,
    inexact_sizes,
    jacobian_rank,
    listed,
    printed_and_corrected,
    repeated,
    sampled,
    witness,
)
from orthoverify.engine.templates_more import symbolic_identities
from orthoverify.tolerance import THRESHOLD


def run(check: Check, backend: str) -> Evidence:
    ctx = RunContext("t.x", check.name, get_backend(backend), get_profile("quick"), 0)
    return check.run(ctx)


def square_plus(b: Backend, case: Case) -> Array:
    x = b.asarray(case["x"], name="x")
    return (x + 1) * (x + 1)


def expanded(b: Backend, case: Case) -> Array:
    x = b.asarray(case["x"], name="x")
    return x * x + 2 * x + 1


def planted_expanded(b: Backend, case: Case) -> Array:
    x = b.asarray(case["x"], name="x")
    return x * x + 1


def cases_x(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in (2, 3):
        yield {"x": rng.standard_normal(n)}


@pytest.mark.parametrize("backend", ["numpy-float64", "sympy"])
def test_agreement_verifies_and_refutes(backend: str) -> None:
    right = Agreement(square_plus, expanded, "ratio")
    wrong = Agreement(square_plus, planted_expanded, "ratio")
    assert run(right.check("c", cases_x, (backend,)), backend).passed
    ev = run(wrong.check("c", cases_x, (backend,)), backend)
    assert not ev.passed and ev.counterexample is not None
    replayed = wrong.check("c", cases_x, (backend,)).replay(ev.counterexample.inputs, get_backend("mpmath"))
    assert replayed.ratio > THRESHOLD


def test_agreement_with_its_own_dimension_factor() -> None:
    """``dim`` replaces n = len(x) in the ratio (scaling it by n / dim) and still refutes the planted
    formulation; without it the ratio is unchanged."""
    b = get_backend("numpy-float64")
    case = {"x": np.array([0.3, -1.7, 2.5])}
    wrong = Agreement(square_plus, planted_expanded, "ratio", dim=lambda c: 12)
    default = Agreement(square_plus, planted_expanded, "ratio").measure(b, case).ratio
    assert wrong.measure(b, case).ratio == pytest.approx(default * 3 / 12)
    ev = run(wrong.check("c", cases_x, ("numpy-float64",)), "numpy-float64")
    assert not ev.passed and ev.counterexample is not None
    right = Agreement(square_plus, expanded, "ratio", dim=lambda c: 12)
    assert run(right.check("c", cases_x, ("numpy-float64",)), "numpy-float64").passed


def test_count_single_and_several_accountings() -> None:
    def grid(ctx: RunContext) -> list[Case]:
        return [{"n": n} for n in range(1, 6)]

    def right(case: Case) -> list[tuple[str, int, int]]:
        n = int(case["n"])
        return [("triangle", n * (n + 1) // 2, sum(range(n + 1)))]

    def wrong(case: Case) -> list[tuple[str, int, int]]:
        n = int(case["n"])
        return [("triangle", n * n, sum(range(n + 1)))]

    assert run(count("c", grid=grid, tally=right, backends=("sympy",), quantity_name="q"), "sympy").passed
    check = count("c", grid=grid, tally=wrong, backends=("sympy",), quantity_name="q")
    ev = run(check, "sympy")
    assert ev.cases == 5 and ev.counterexample is not None and ev.counterexample.precision_digits == "exact"
    assert ev.counterexample.inputs == {"n": "2"}  # n = 1 holds: 1 = 1
    assert "stated 4, counted 3" in ev.counterexample.value
    assert check.replay({"n": "2"}, get_backend("sympy")).ratio == float("inf")
    either = count("c", grid=grid, tally={"a": wrong, "b": right}, backends=("sympy",), quantity_name="q")
    assert run(either, "sympy").passed  # one accounting reproduces every row


def test_audit_names_the_wrong_lines() -> None:
    def lines(b: Backend, case: Case) -> list[tuple[str, bool]]:
        x = int(case["x"])
        return [("line 1: x + x = 2x", x + x == 2 * x), ("line 2: x * x = 2x", x * x == 2 * x)]

    def cases(ctx: RunContext) -> Iterator[Case]:
        yield {"x": 2}  # both lines hold at 2
        yield {"x": 3}

    ev = run(audit("a", lines, cases), "sympy")
    assert ev.counterexample is not None and ev.counterexample.value == "line 2: x * x = 2x"


def test_witness_from_candidates_and_from_a_strategy() -> None:
    def violation(b: Backend, case: Case) -> Measure:
        x = b.asarray(case["x"], name="x")
        return residual(b, b.stack([x * x - x]), 1)  # "x^2 = x": false except at 0 and 1

    def candidates(ctx: RunContext) -> Iterator[Case]:
        yield from ({"x": v} for v in (0.0, 1.0, 2.0))

    ev = run(
        witness("w", violation, backends=("numpy-float64",), quantity_name="q", candidates=candidates), "numpy-float64"
    )
    assert ev.method == "search" and ev.counterexample is not None and ev.counterexample.inputs["x"] == "2"

    def strategy(ctx: RunContext) -> Any:
        from hypothesis import strategies as st

        return st.fixed_dictionaries({"x": st.floats(2, 10)})

    found = run(
        witness("w", violation, backends=("numpy-float64",), quantity_name="q", strategy=strategy), "numpy-float64"
    )
    assert found.counterexample is not None
    with pytest.raises(ValueError):
        witness("w", violation, backends=("numpy-float64",), quantity_name="q")


def test_witness_enumerating_a_whole_domain_is_exhaustive() -> None:
    """A planted wrong statement ("i mod n lies in 1..n" for 1-based i) refuted by an exhaustive
    enumeration, exactly, at its first witness; the right one (residues plus one) verified."""

    def violation(shift: int) -> Any:
        def measure(b: Backend, case: Case) -> Measure:
            n, i = int(case["n"]), int(case["i"])
            k = (i - shift) % n + shift
            return flag(1 <= k <= n, f"k = {k} outside 1..{n}")

        return measure

    def every_index(ctx: RunContext) -> Iterator[Case]:
        yield from ({"n": n, "i": i} for n in range(1, 5) for i in range(1, n + 1))

    def check(shift: int) -> Check:
        return witness(
            "indices",
            violation(shift),
            backends=("sympy",),
            quantity_name="k in range",
            candidates=every_index,
            method="exhaustive",
        )

    wrong, right = run(check(0), "sympy"), run(check(1), "sympy")
    assert wrong.method == "exhaustive" and not wrong.passed and wrong.cases == 10
    assert wrong.counterexample is not None and wrong.counterexample.inputs == {"n": "1", "i": "1"}
    assert wrong.counterexample.precision_digits == "exact"
    assert check(0).replay(wrong.counterexample.inputs, get_backend("sympy")).ratio == float("inf")
    assert right.passed and right.counterexample is None


def test_gradient_references_and_printed_and_corrected() -> None:
    grad = Gradient("q")
    names = [c.name for c in (grad.exact(residual_zero, cases_x), grad.finite_differences(residual_zero, cases_x))]
    assert names == ["exact_derivative", "finite_differences"]
    assert grad.finite_differences(residual_zero, cases_x).backend_names() == (
        "mpmath",
        "numpy-float64",
        "numpy-float32",
    )

    def checks(corrected: bool) -> tuple[Check, ...]:
        return (
            Agreement(square_plus, expanded if corrected else planted_expanded, "q").check("c", cases_x, ("sympy",)),
        )

    printed, corrected = printed_and_corrected(
        "t.claim",
        paper="t",
        place=Place(equation="1"),
        kind="identity",
        printed="P",
        corrected="C",
        checks=checks,
        expected="refuted",
        origin="added",
        summary="p",
        corrected_summary="c",
        notes="shared",
    )
    assert (printed.id, corrected.id, corrected.corrects) == ("t.claim", "t.claim.corrected", "t.claim")
    assert (printed.origin, corrected.origin, printed.expected, corrected.expected) == (
        "added",
        "corrected",
        "refuted",
        "verified",
    )
    assert printed.where == corrected.where == "eq. 1" and (printed.summary, corrected.summary) == ("p", "c")
    assert printed.notes == corrected.notes == "shared"
    assert run(printed.checks[0], "sympy").counterexample is not None
    assert run(corrected.checks[0], "sympy").passed


def residual_zero(b: Backend, case: Case) -> Measure:
    return residual(b, b.asarray(np.zeros(1)), 1)


def test_agreement_divided_by_a_condition_still_refutes() -> None:
    """A conditioning factor scales the float ratio down by exactly that factor; a wrong statement is
    still refuted (its error is O(1), not rounding), and exact arithmetic ignores the factor."""

    def condition(b: Backend, case: Case) -> float:
        return 1.0 + float(np.abs(np.asarray(case["x"], dtype=float)).sum())

    plain = Agreement(square_plus, expanded, "q")
    conditioned = Agreement(square_plus, expanded, "q", condition=condition)
    b = get_backend("numpy-float64")
    case = {"x": np.array([3.0, -7.5, 0.1])}
    assert conditioned.measure(b, case).ratio * condition(b, case) == pytest.approx(plain.measure(b, case).ratio)
    for backend in ("numpy-float64", "sympy"):
        wrong = Agreement(square_plus, planted_expanded, "q", condition=condition).check("c", cases_x, (backend,))
        ev = run(wrong, backend)
        assert not ev.passed and ev.counterexample is not None
        assert run(conditioned.check("c", cases_x, (backend,)), backend).passed


def test_witness_names_its_method() -> None:
    """Enumerated candidates are a search by default, every case there is when ``exhaustive``, and
    the backend's own method (float) for generated samples; each still refutes x^2 = x at 2."""

    def violation(b: Backend, case: Case) -> Measure:
        x = b.asarray(case["x"], name="x")
        return residual(b, b.stack([x * x - x]), 1)

    def candidates(ctx: RunContext) -> Iterator[Case]:
        yield from ({"x": v} for v in (0.0, 1.0, 2.0))

    methods: tuple[tuple[Method | None, str], ...] = (
        ("search", "search"),
        ("exhaustive", "exhaustive"),
        (None, "float"),
    )
    for method, shown in methods:
        check = witness(
            "w", violation, backends=("numpy-float64",), quantity_name="q", candidates=candidates, method=method
        )
        ev = run(check, "numpy-float64")
        assert ev.method == shown and ev.counterexample is not None and ev.counterexample.inputs["x"] == "2"


def test_symbolic_identities_refute_a_planted_side() -> None:
    """Symbolic identities (both sides of each, as an Agreement) verify a true pair and refute a
    planted one with an exact counterexample naming its label."""
    import sympy

    x = sympy.Symbol("x", real=True)

    def sides(n: int) -> list[tuple[str, object, object]]:
        return [(f"n={n}: (x+1)^2", (x + 1) ** 2, x**2 + 2 * x + 1), (f"n={n}: planted", (x + 1) ** 2, x**2 + 1)]

    agreement, cases = identities(sides)
    ev = run(agreement.symbolic("symbolic", cases), "sympy")
    assert not ev.passed and ev.counterexample is not None
    assert ev.counterexample.inputs["identity"] == "n=2: planted"
    right, right_cases = identities(lambda n: sides(n)[:1])
    assert run(right.symbolic("symbolic", right_cases), "sympy").passed


def test_witness_names_how_its_candidates_were_found() -> None:
    """Enumerated candidates that are all there are (exact roots, a whole grid) report that method;
    the violation still decides: a planted wrong statement ("x^2 = x" at x = 2) is refuted exactly,
    a right one (at 0 and 1 only) verified."""

    def violation(b: Backend, case: Case) -> Measure:
        x = b.asarray(case["x"], name="x")
        return residual(b, b.stack([x * x - x]), 1)

    def roots(ctx: RunContext) -> Iterator[Case]:
        yield from ({"x": v} for v in (0, 1))

    def planted(ctx: RunContext) -> Iterator[Case]:
        yield from ({"x": v} for v in (0, 1, 2))

    ok = run(
        witness("w", violation, backends=("sympy",), quantity_name="q", candidates=roots, method="symbolic"), "sympy"
    )
    assert ok.method == "symbolic" and ok.passed and ok.cases == 2
    bad = run(
        witness("w", violation, backends=("sympy",), quantity_name="q", candidates=planted, method="symbolic"), "sympy"
    )
    assert bad.method == "symbolic" and not bad.passed
    assert bad.counterexample is not None and bad.counterexample.inputs["x"] == "2"


def test_gradient_checks_take_their_names_and_arithmetic() -> None:
    """A family may keep its own check names and backends for each reference; the formula still
    decides against the reference: d/dx x^3 planted as 2 x^2 is refuted exactly, 3 x^2 verified."""
    from orthoverify.engine.reference import exact_gradient

    def against_exact(formula: Any) -> Any:
        def q(b: Backend, case: Case) -> Measure:
            x = b.asarray(case["x"], name="x")
            return residual(b, formula(x) - exact_gradient(lambda v: b.sum(v * v * v), x), x.shape[0])

        return q

    grad = Gradient("q")
    fd = grad.finite_differences(residual_zero, cases_x, name="central", backends=("mpmath",))
    auto = grad.autograd(residual_zero, cases_x, backends=("torch-float64",))
    assert (fd.name, fd.backend_names(), auto.backend_names()) == ("central", ("mpmath",), ("torch-float64",))
    assert grad.symbolic(lambda ctx: iter(()), name="symbolic_gradient").name == "symbolic_gradient"
    assert run(grad.exact(against_exact(lambda x: 3 * x * x), cases_x), "sympy").passed
    planted = run(grad.exact(against_exact(lambda x: 2 * x * x), cases_x), "sympy")
    assert not planted.passed and planted.counterexample is not None


def test_audit_over_every_instance_says_exhaustive() -> None:
    """An audit whose cases are every instance the proof covers reports method "exhaustive"; the
    lines still decide: the planted "x * x = 2x" is refuted at x = 3, holds alone at x = 2."""

    def lines(b: Backend, case: Case) -> list[tuple[str, bool]]:
        x = int(case["x"])
        return [("line: x * x = 2x", x * x == 2 * x)]

    def only_two(ctx: RunContext) -> Iterator[Case]:
        yield {"x": 2}

    def two_and_three(ctx: RunContext) -> Iterator[Case]:
        yield from ({"x": x} for x in (2, 3))

    ok = run(audit("a", lines, only_two, method="exhaustive"), "sympy")
    assert ok.method == "exhaustive" and ok.passed
    bad = run(audit("a", lines, two_and_three, method="exhaustive"), "sympy")
    assert bad.method == "exhaustive" and bad.counterexample is not None and bad.counterexample.inputs["x"] == "3"


def cases_rational_xy(ctx: RunContext) -> Iterator[Case]:
    yield {"x": ["1/2", "-2/3", "3"], "y": ["2", "1/5", "-1"]}


def cases_xy(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in (2, 3):
        yield {"x": rng.standard_normal(n), "y": rng.standard_normal(n)}


def products(stated: int, value_off: int = 0, *, relative: bool = False, in_backend: bool = False) -> Derivative:
    """L(x, y) = sum(x^2 y): the gradient is (2xy, x^2), and the formula also returns the forward
    value p = x^2 y. ``stated`` times x^2 is claimed for dL/dy, and p (1 + 1 / value_off) for p
    when ``value_off`` is not 0. Errors are scaled by the size of the terms or, ``relative``, by
    1 + ||reference||; ``in_backend``: p's definition beside 50-digit differences in the backend's
    arithmetic, not at 50 digits."""

    def size(b: Backend, x: Any, key: str = "p") -> float:
        return 1.0 + float(np.linalg.norm(b.to_numpy(x["x"]))) * (1.0 + float(np.linalg.norm(b.to_numpy(x["y"]))))

    def formula(b: Backend, x: Any) -> dict[str, Array]:
        p = x["x"] * x["x"] * x["y"]
        return {"p": p + (p / value_off if value_off else 0), "x": 2 * x["x"] * x["y"], "y": stated * x["x"] * x["x"]}

    return Derivative(
        lambda b, case: {k: b.asarray(case[k], name=k) for k in ("x", "y")},
        lambda b, x: b.sum(x["x"] * x["x"] * x["y"]),
        formula,
        None if relative else size,
        dim=lambda x: x["x"].shape[0],
        values={"p": lambda b, x: x["x"] * x["x"] * x["y"]},
        value_scale=None if relative else size,
        values_in_backend=in_backend,
    )


def closed_forms(b: Backend, x: Any) -> dict[str, Array]:
    return {"p": x["x"] * x["x"] * x["y"], "x": 2 * x["x"] * x["y"], "y": x["x"] * x["x"]}


@pytest.mark.parametrize(
    ("reference", "backend", "in_backend"),
    [
        ("exact", "sympy", False),
        ("finite_differences", "numpy-float64", False),
        ("finite_differences", "numpy-float64", True),
        ("finite_differences", "mpmath", False),
        ("autograd", "torch-float64", False),
        ("autograd", "torch-float32", False),
        ("autograd", "numpy-float64", False),  # off torch: central differences in the backend's precision
        ("against", "numpy-float64", False),
    ],
)
@pytest.mark.parametrize("relative", [False, True], ids=["scaled", "relative"])
def test_a_derivative_derives_its_references_from_the_loss(
    reference: str, backend: str, in_backend: bool, relative: bool
) -> None:
    """Every reference a Derivative derives (SymPy, 50-digit differences, autograd, closed forms)
    verifies the right formula and refutes, with a confirmed counterexample, a planted wrong
    gradient (2 x^2 for x^2) and a planted wrong forward value (p (1 + 10^-3)), whether errors are
    scaled by the size of the terms or relative to the reference; the inputs, loss, formula and the
    value's definition the only things written."""
    cases = cases_rational_xy if backend == "sympy" else cases_xy

    def check(d: Derivative) -> Check:
        measure = d.against(closed_forms) if reference == "against" else getattr(d, reference)
        return Gradient("q").autograd(measure, cases, backends=(backend,))

    assert run(check(products(1, relative=relative, in_backend=in_backend)), backend).passed
    for stated, value_off in ((2, 0), (1, 1000)):
        ev = run(check(products(stated, value_off, relative=relative, in_backend=in_backend)), backend)
        assert not ev.passed and ev.counterexample is not None  # confirmed at high precision (or exact)


def test_a_derivative_derives_its_symbolic_identities_from_the_loss() -> None:
    """Derivative.identities: with inputs in free symbols, the formula minus SymPy's derivative of
    the loss must vanish identically; the right formula passes and the planted one (2 x^2 for
    dL/dy) is refuted, naming the case's label (and the gradient, when named); the forward value p
    is not an identity."""

    def symbols(ctx: RunContext) -> Iterator[Case]:
        for n in (1, 2):
            yield {
                "label": f"n={n}",
                "x": sympy.symbols(f"x0:{n}", real=True),
                "y": sympy.symbols(f"y0:{n}", real=True),
            }

    assert run(Gradient("q").symbolic(products(1).identities(symbols)), "sympy").passed
    ev = run(Gradient("q").symbolic(products(2).identities(symbols)), "sympy")
    assert not ev.passed and ev.counterexample is not None and ev.counterexample.inputs["identity"] == "n=1"
    named = run(Gradient("q").symbolic(products(2).identities(symbols, {"x": "dL/dx", "y": "dL/dy"})), "sympy")
    assert named.counterexample is not None and named.counterexample.inputs["identity"] == "n=1: dL/dy"
    right = run(Gradient("q").symbolic(products(1).identities(symbols, {"x": "dL/dx", "y": "dL/dy"})), "sympy")
    assert right.passed and right.cases == 4 and right.notes.startswith("n=1: dL/dx; n=1: dL/dy; n=2: dL/dx")


def test_an_input_declaration_draws_what_the_hand_written_loop_drew() -> None:
    """sampled(sizes, sample, per_size) is the driver loop claims used to write: one generator
    per check, sizes in order, per_size draws each; the same seed gives the same cases."""

    def by_hand(ctx: RunContext) -> Iterator[Case]:
        rng = ctx.rng()
        for n in ctx.profile.sizes_on(ctx.backend):
            for _ in range(ctx.profile.cases):
                yield {"n": n, "x": rng.standard_normal(n)}

    declared = sampled(float_sizes, lambda rng, n: {"n": n, "x": rng.standard_normal(n)})
    for backend in ("numpy-float64", "mpmath"):
        ctx = RunContext("t.x", "float", get_backend(backend), get_profile("quick"), 7)
        want, got = list(by_hand(ctx)), list(declared(ctx))
        assert [c["n"] for c in got] == [c["n"] for c in want] and len(got) > 1
        assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(want, got, strict=True))
    ctx = RunContext("t.x", "exact", get_backend("sympy"), get_profile("quick"), 7)
    once = sampled(exact_sizes, lambda rng, n: {"n": n}, per_size=lambda ctx: 1)
    assert [c["n"] for c in once(ctx)] == list(ctx.profile.exact_sizes)


# --- claimsU: drawn, inexact_sizes, listed, exact_witness
def test_a_drawn_declaration_draws_what_the_hand_written_loop_drew() -> None:
    """drawn(draw, sizes) is the loop of a family that draws a varying number of cases per size,
    extras interleaved: one generator per check, sizes in order; inexact_sizes draws nothing in
    exact arithmetic (an input family with no exact form)."""

    def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
        for _ in range(n):  # a varying number of cases per size
            yield {"n": n, "x": rng.standard_normal(n), "extra": rng.random()}

    def by_hand(ctx: RunContext) -> Iterator[Case]:
        rng = ctx.rng()
        for n in ctx.profile.sizes_on(ctx.backend):
            for _ in range(n):
                yield {"n": n, "x": rng.standard_normal(n), "extra": rng.random()}

    ctx = RunContext("t.x", "float", get_backend("numpy-float64"), get_profile("quick"), 7)
    want, got = list(by_hand(ctx)), list(drawn(draw)(ctx))
    assert len(got) == len(want) > 1 and [c["n"] for c in got] == [c["n"] for c in want]
    assert all(np.array_equal(a["x"], b["x"]) and a["extra"] == b["extra"] for a, b in zip(want, got, strict=True))
    exact = RunContext("t.x", "exact", get_backend("sympy"), get_profile("quick"), 7)
    assert not list(drawn(draw, inexact_sizes)(exact)) and list(drawn(draw, inexact_sizes)(ctx))


def test_listed_cases_and_an_exact_witness() -> None:
    """listed(*cases) gives the same fixed cases on every call; exact_witness judges them in SymPy
    and records the first failure exactly, or says it enumerated the whole domain."""

    def violation(b: Backend, case: Case) -> Measure:
        x = int(case["x"])
        return flag(x * x == x, f"{x}^2 != {x}")

    cases = listed({"x": "0"}, {"x": "2"}, {"x": "1"})
    ctx = RunContext("t.x", "w", get_backend("sympy"), get_profile("quick"), 0)
    assert list(cases(ctx)) == list(cases(ctx)) == [{"x": "0"}, {"x": "2"}, {"x": "1"}]
    wrong = run(exact_witness("w", violation, "x^2 = x", cases), "sympy")
    assert not wrong.passed and wrong.counterexample is not None and wrong.counterexample.inputs == {"x": "2"}
    assert wrong.counterexample.precision_digits == "exact"
    right = run(exact_witness("w", violation, "x^2 = x", listed({"x": "0"}, {"x": "1"}), method="exhaustive"), "sympy")
    assert right.passed and right.method == "exhaustive" and right.cases == 2


# --- claimsHC: per_profile, by_size, by_shape, signed_permutations, bespoke ---
def _ctx(profile: str = "quick") -> RunContext:
    return RunContext("t.x", "c", get_backend("numpy-float64"), get_profile(profile), 0)


def test_per_profile_picks_the_named_column() -> None:
    from orthoverify.engine.templates import per_profile

    effort = per_profile(quick=1, default=2, thorough=3)
    assert [effort(_ctx(p)) for p in ("quick", "default", "thorough")] == [1, 2, 3]


def test_signed_permutations_are_every_one_up_to_the_size() -> None:
    from orthoverify.engine.templates import signed_permutations

    cases = list(signed_permutations("W")(_ctx()))
    assert len(cases) == 2 + 8 + 48  # 2^n n! for n = 1, 2, 3
    assert all(np.allclose(np.abs(c["W"]) @ np.abs(c["W"]).T, np.eye(len(c["W"]))) for c in cases)
    assert len(list(signed_permutations("Q", lambda ctx: 2)(_ctx()))) == 10


def test_by_size_and_by_shape_draw_named_fields_for_their_sizes() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from orthoverify.engine.templates import by_shape, by_size

    @settings(max_examples=30, database=None)
    @given(by_size(2, 4, lambda n: {"n": st.just(n), "x": st.lists(st.integers(), min_size=n, max_size=n)})(_ctx()))
    def sized(case: dict[str, Any]) -> None:
        assert 2 <= case["n"] <= 4 and len(case["x"]) == case["n"]

    @settings(max_examples=30, database=None)
    @given(by_shape(2, 5, lambda n, m: {"nm": st.just((n, m))})(_ctx()))
    def shaped(case: dict[str, Any]) -> None:
        n, m = case["nm"]
        assert 2 <= n <= 5 and 1 <= m <= n - 1

    sized()
    shaped()


def test_bespoke_decides_by_its_outcome_without_a_threshold() -> None:
    from orthoverify.engine.checks import Outcome
    from orthoverify.engine.templates import bespoke

    check = bespoke("b", lambda ctx: Outcome(False, 1, notes="planted"), ("numpy-float64",), "float", "q")
    assert check.threshold is None
    ev = run(check, "numpy-float64")
    assert not ev.passed and "planted" in ev.notes


# --- claimsS: repeated, chained ---
def test_repeated_draws_what_the_hand_written_loop_drew() -> None:
    """repeated(points, draw, first, last) is the loop with edge cases before and after the repeated
    draws: one generator per check, points in order; a draw may give one case or several, and
    may read the run context (an exact backend gets rationals)."""

    def by_hand(ctx: RunContext) -> Iterator[Case]:
        rng = ctx.rng()
        for n in ctx.profile.sizes_on(ctx.backend):
            yield {"n": n, "x": np.zeros(n)}
            for _ in range(ctx.profile.cases):
                x = rng.standard_normal(n)
                yield {"n": n, "x": x}
                yield {"n": n, "x": -x}
            yield {"n": n, "x": rng.standard_normal(n) * 1e30}

    def pair(ctx: RunContext, rng: np.random.Generator, n: int) -> list[Case]:
        x = rng.standard_normal(n)
        return [{"n": n, "x": x}, {"n": n, "x": -x}]

    declared = repeated(
        float_sizes,
        pair,
        first=lambda ctx, rng, n: {"n": n, "x": np.zeros(n)},
        last=lambda ctx, rng, n: {"n": n, "x": rng.standard_normal(n) * 1e30},
    )
    ctx = RunContext("t.x", "float", get_backend("numpy-float64"), get_profile("quick"), 7)
    want, got = list(by_hand(ctx)), list(declared(ctx))
    assert len(got) == len(want) == len(ctx.profile.sizes) * (2 + 2 * ctx.profile.cases)
    assert all(a["n"] == b["n"] and np.array_equal(a["x"], b["x"]) for a, b in zip(want, got, strict=True))
    exact = RunContext("t.x", "exact", get_backend("sympy"), get_profile("quick"), 7)
    kinds = repeated(exact_sizes, lambda ctx, rng, n: {"exact": ctx.backend.exact}, per_point=lambda ctx: 1)
    assert [c["exact"] for c in kinds(exact)] == [True] * len(exact.profile.exact_sizes)
    both = chained(lambda ctx: [{"n": 0}], kinds)
    assert [c.get("n") for c in both(exact)] == [0] + [None] * len(exact.profile.exact_sizes)


# --- claims2HC ---
def test_jacobian_rank_counts_the_independent_directions_of_a_map() -> None:
    """A full-rank linear map has rank 3 with a wide gap; a planted defect (its third output a sum
    of the first two) loses one direction, and the last singular value sits below tol."""
    b = get_backend("torch-float64")
    a = b.asarray([[2.0, 1.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]])
    x = b.asarray([0.5, -1.0, 2.0])
    rank, s, tol = jacobian_rank(b, lambda v: a @ v, x)
    assert rank == 3 and s[2] > 100 * tol and list(s) == sorted(s, reverse=True)
    planted = b.asarray([[2.0, 1.0, 0.0], [0.0, 1.0, 3.0], [2.0, 2.0, 3.0]])
    rank, s, tol = jacobian_rank(b, lambda v: planted @ v, x)
    assert rank == 2 and s[2] <= tol


# --- claimsSU ---
def test_symbolic_identities_runs_each_size_and_names_the_one_that_fails() -> None:
    """symbolic_identities owns the loop over the profile's symbolic sizes: every size's
    identities are counted, and a planted wrong identity (true only for n = 2) is caught at the
    first other size, its label prefixed with that size."""

    def trace(b: Backend, n: int) -> Iterator[tuple[str, Any]]:
        x = np.array(sympy.symbols(f"x0:{n}", real=True), dtype=object)
        yield "sum - sum", b.sum(x) - sum(x)
        yield "n - 2", b.sum(b.eye(n).reshape(-1)) - 2  # planted: tr I_n = 2 only for n = 2

    right = run(symbolic_identities("s", lambda b, n: list(trace(b, n))[:1], size="k"), "sympy")
    sizes = get_profile("quick").symbolic_sizes
    assert right.passed and right.cases == len(sizes) and right.method == "symbolic"
    wrong = run(symbolic_identities("s", trace, sizes=lambda ctx: (2, 3)), "sympy")
    assert not wrong.passed and wrong.counterexample is not None
    assert wrong.counterexample.inputs["identity"] == "n=3: n - 2" and wrong.cases == 4
