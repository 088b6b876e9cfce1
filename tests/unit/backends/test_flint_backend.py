"""The python-flint (Arb ball) backend: the backend protocol, precision isolation, its arb_mat
fast paths against the generic object code and mpmath, the fallback without python-flint, and
the rigorous checks (they prove their bounds on good input and refute bad input)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from orthoverify.backends import flint_available, get_backend, high_precision_backend, infer_backend
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine.model import Counterexample, Evidence, decide
from tests.unit.backends import test_backends as tb

pytestmark = pytest.mark.skipif(not flint_available(), reason="python-flint is not installed")


def _flint() -> Any:
    import flint

    return flint


# ------------------------------------------------------------------ protocol conformance
@pytest.mark.parametrize(
    "test",
    [
        tb.test_solve_and_triangular_solve_agree_with_float64,
        tb.test_structure_helpers,
        tb.test_norm_does_not_overflow_or_underflow,
        tb.test_strings_round_trip_exactly,
        tb.test_check_array_rejects_nan_and_wrong_rank,
    ],
)
@pytest.mark.parametrize("name", ["flint", "flint-100"])
def test_backend_protocol(test: Any, name: str) -> None:
    test(name)


@pytest.mark.parametrize("bad", [np.array([1 + 2j, 3j]), np.array([True, False]), np.array([1.0], dtype=np.float16)])
def test_bad_dtypes_are_refused(bad: np.ndarray) -> None:
    tb.test_bad_dtypes_are_refused("flint", bad)


def test_names_method_and_inference() -> None:
    b = get_backend("flint")
    assert (b.name, b.label, b.digits, b.method, b.family) == ("flint", "flint-50", 50, "high-precision", "flint")
    assert get_backend("flint-80").label == "flint-80"
    assert b.prec == get_backend("mpmath").ctx.prec  # the same binary precision as mpmath
    assert infer_backend(b.asarray([1.0])) is b
    assert infer_backend(get_backend("flint-80").asarray([1.0])).digits == 80
    assert high_precision_backend().family == "flint"
    assert high_precision_backend(100).label == "flint-100"
    with pytest.raises(Exception, match="flint-<digits>"):
        get_backend("flint-x")


# ------------------------------------------------------------------ precision isolation
def test_precision_never_leaks() -> None:
    flint = _flint()
    before = flint.ctx.prec
    b = get_backend("flint-120")
    third = b.scalar("1/3")
    assert flint.ctx.prec == before
    assert float(third.rad()) < 1e-118  # computed at 120 digits although the global is 53 bits
    x = b.asarray([[4.0, 1.0], [2.0, 3.0]])
    for y in (x @ x, b.solve(x, b.asarray([1.0, 2.0])), b.sqrt(x), b.norm(x), third * third + 1, 2 / third):
        assert flint.ctx.prec == before
        assert all(float(v.rad()) < 1e-110 for v in np.asarray(y, dtype=object).reshape(-1))
    # the arithmetic ignores whatever the global precision is
    flint.ctx.prec = 20
    try:
        assert float((third * 3 - 1).rad()) < 1e-110
    finally:
        flint.ctx.prec = before


def test_precision_restored_after_an_error() -> None:
    flint = _flint()
    before = flint.ctx.prec
    b = get_backend("flint")
    with pytest.raises(Exception, match="singular"):
        b.solve(b.asarray([[1.0, 2.0], [2.0, 4.0]]), b.asarray([1.0, 1.0]))
    assert flint.ctx.prec == before


# ------------------------------------------------------------------ fast paths
def _generic_matmul(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=object) @ np.asarray(c, dtype=object)  # NumPy's object loop


@pytest.mark.parametrize("n", [1, 5, 12])
def test_fast_matmul_and_solve_agree_with_generic_and_mpmath(n: int) -> None:
    from orthoverify.backends.object_backend import ObjectBackend

    rng = np.random.default_rng(n)
    a_np, c_np = rng.standard_normal((n, n)) + n * np.eye(n), rng.standard_normal((n, 3))
    b, mp = get_backend("flint"), get_backend("mpmath")
    a, c = b.asarray(a_np), b.asarray(c_np)
    fast = a @ c
    slow = _generic_matmul(a, c)
    assert all(f.overlaps(s) for f, s in zip(fast.reshape(-1), slow.reshape(-1), strict=True))
    ref = mp.asarray(a_np) @ mp.asarray(c_np)
    assert np.max(np.abs(mp.to_numpy(mp.asarray(b.to_strings(fast)) - ref))) < 1e-45 * n
    x_fast = b.solve(a, c)
    x_slow = ObjectBackend.solve(b, a, c)  # the generic elimination on the same balls
    x_ref = mp.solve(mp.asarray(a_np), mp.asarray(c_np))
    assert all(f.overlaps(s) for f, s in zip(x_fast.reshape(-1), x_slow.reshape(-1), strict=True))
    diff = mp.asarray(b.to_strings(x_fast)) - x_ref
    assert float(mp.max_abs(diff)) < 1e-45
    # the exact solution lies in the enclosure: check with SymPy's exact answer for small n
    if n <= 5:
        import sympy

        exact = sympy.Matrix(get_backend("sympy").asarray(a_np).tolist()).LUsolve(
            sympy.Matrix(get_backend("sympy").asarray(c_np).tolist())
        )
        from fractions import Fraction

        from orthoverify.backends.flint_backend import _fraction

        for i in range(n):
            for j in range(3):
                q = sympy.Rational(exact[i, j])
                ball = x_fast[i, j]
                assert _fraction(ball.lower()) <= Fraction(int(q.p), int(q.q)) <= _fraction(ball.upper())
    # vector shapes through the same path
    v = b.asarray(c_np[:, 0])
    assert (a @ v).shape == (n,) and (v @ a).shape == (n,) and np.ndim(v @ v) == 0


def test_vector_dot_and_mixed_operands() -> None:
    b = get_backend("flint")
    v = b.asarray([1.0, 2.0, 3.0])
    assert float((v @ v).mid()) == 14.0
    assert b.to_numpy(2 * v - v / 2).tolist() == [1.5, 3.0, 4.5]
    assert b.to_numpy(np.asarray([[1, 0, 0]], dtype=object) @ v).tolist() == [1.0]


# ------------------------------------------------------------------ fallback without flint
def test_fallback_when_flint_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    from orthoverify.backends import _get_backend, rigorous_backend_names
    from orthoverify.errors import BackendError

    monkeypatch.setitem(sys.modules, "flint", None)  # makes `import flint` raise ImportError
    _get_backend.cache_clear()
    try:
        assert not flint_available()
        assert high_precision_backend().family == "mpmath"
        assert high_precision_backend(80).label == "mpmath-80"
        assert rigorous_backend_names() == ("mpmath",)
        with pytest.raises(BackendError, match=r"pip install 'orthoverify\[flint\]'"):
            get_backend("flint")
    finally:
        _get_backend.cache_clear()


# ------------------------------------------------------------------ rigorous evidence
def _ctx(claim: str, check: str, backend: str) -> Any:
    from orthoverify.engine.checks import RunContext, derive_seed
    from orthoverify.engine.profiles import get_profile

    return RunContext(claim, check, get_backend(backend), get_profile("quick"), derive_seed(0, claim, check))


RIGOROUS = [
    ("householder.orthogonal_when", "rigorous"),
    ("cayley.bijection", "rigorous"),
    ("unitary.composition", "rigorous"),
]


@pytest.mark.parametrize(("claim", "check"), RIGOROUS)
def test_rigorous_checks_prove_their_bounds(claim: str, check: str) -> None:
    from orthoverify.engine import get_registry

    c = get_registry(CLAIM_MODULES)[claim].check(check)
    ev = c.run(_ctx(claim, check, c.backend_names()[0]))  # flint, or flint-D the proof needs
    assert ev.method == "rigorous" and ev.passed and ev.counterexample is None
    assert "proved from Arb enclosures" in ev.notes and "< 1e-40" in ev.notes
    assert ev.worst_ratio is not None and ev.worst_ratio < 1e-40


@pytest.mark.parametrize(("claim", "check"), RIGOROUS)
def test_rigorous_checks_are_skipped_without_flint(claim: str, check: str) -> None:
    from orthoverify.engine import get_registry

    c = get_registry(CLAIM_MODULES)[claim].check(check)
    ev = c.run(_ctx(claim, check, "mpmath"))  # where the check runs when python-flint is missing
    assert not ev.passed and ev.counterexample is None and ev.data.get("skipped")
    assert "orthoverify[flint]" in ev.notes


def test_rigorous_check_fails_on_non_orthogonal_input() -> None:
    """m = n with u_1 = 1/2: W'W - I = diag(0, ..., -3/4), so the proved lower bound is 0.75."""
    import sympy

    from orthoverify import samples
    from orthoverify.claims.householder import orthogonal_when as hc
    from orthoverify.engine.rigorous import rigorous_scan

    ctx = _ctx("householder.orthogonal_when", "rigorous", "flint")
    rng = np.random.default_rng(0)
    bad = {"U": samples.rational_vectors(rng, 4, 3), "u1": np.array([sympy.Rational(1, 2)], dtype=object)}
    good = next(iter(hc.cases_orthogonal_rational(ctx)))
    out = rigorous_scan(ctx, [good, bad], hc.enclose_orthogonal, bound="1e-40", quantity="||W'W - I||_F")
    assert not out.passed and out.failure is not None
    assert "proved >= 7.49e-1 > 1e-40" in out.notes
    # through the check: the proved violation becomes a confirmed counterexample (refuted)
    check = hc.ORTHOGONAL_WHEN.check("rigorous")
    assert check.replay(out.failure[0], get_backend("mpmath")).ratio == pytest.approx(0.75)
    cx, note = check._confirm(ctx.backend, *out.failure)
    assert cx is not None, note


def test_prove_below_three_outcomes() -> None:
    from orthoverify.backends.flint_backend import prove_below

    flint = _flint()
    assert prove_below(flint.arb("1e-50"), "1e-40").status == "proved"
    assert prove_below(flint.arb(1), "1e-40").status == "violated"
    p = prove_below(flint.arb("[1e-40 +/- 1e-45]"), "1e-40")
    assert p.status == "undecided" and "contains 1e-40" in p.text
    # a bound exactly at the threshold is not proved below it
    assert prove_below(flint.arb(1), "1").status == "undecided"


def _ev(method: str, passed: bool, **kw: Any) -> Evidence:
    return Evidence("x.y", "c", method, "b", passed=passed, **kw)  # type: ignore[arg-type]


def test_decide_with_rigorous_evidence() -> None:
    cx = Counterexample({}, "q", "0.75", 50, "c")
    assert decide([_ev("float", True), _ev("rigorous", True)]) == "verified"
    assert decide([_ev("float", True), _ev("rigorous", False, counterexample=cx)]) == "refuted"
    assert decide([_ev("float", True), _ev("rigorous", False, notes="undecided")]) == "inconclusive"
    skipped = _ev("rigorous", False, data={"skipped": "python-flint is not installed"})
    assert decide([_ev("float", True), skipped]) == "verified"  # recorded, decides nothing
    assert decide([skipped]) == "inconclusive"  # never verifies on its own
    assert not skipped.passed
