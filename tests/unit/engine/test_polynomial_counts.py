"""engine.polynomial_counts can fail: a table of right stated counts is verified, a wrong
coefficient is refuted (exact and leading-term rows alike) at a witness that replays, and a row
stated only up to its O(n) remainder is judged on its quadratic terms alone."""

from __future__ import annotations

import math

from orthoverify.backends import get_backend
from orthoverify.engine import RunContext, get_profile
from orthoverify.engine.model import Evidence
from orthoverify.engine.polynomial_counts import PolynomialCounts, Row


def _count(counter: str, x: tuple[int, ...]) -> tuple[int, int]:
    """Operations of a length-n dot product or a k x n matrix times a vector (k <= n), counted one by one:
    the flops (multiplications and additions), then the multiplications alone."""
    n, k = (x[0], 1) if counter == "dot" else x
    mults = adds = 0
    for _ in range(k):
        mults += n
        adds += n - 1
    return mults + adds, mults


def _grid(ctx: RunContext, variables: tuple[str, ...]) -> list[tuple[int, ...]]:
    if variables == ("n",):
        return [(n,) for n in range(1, 9)]
    return [(n, k) for n in range(1, 7) for k in range(1, n + 1)]


DOT = Row("dot", "Sec. 1", "a dot product costs 2n - 1", "2*n - 1", ("n",), 0, "dot", 2)
MATVEC = Row("matvec", "Sec. 1", "A h costs 2nk + O(n)", "2*n*k", ("n", "k"), 2, "matvec", 2)


def _run(*rows: Row) -> tuple[Evidence, PolynomialCounts]:
    table = PolynomialCounts(rows, _count, _grid, reported=("multiplications",))
    check = table.check("count", ("sympy",), "stated - counted")
    return check.run(RunContext("t.x", "count", get_backend("sympy"), get_profile("quick"), 0)), table


def test_right_rows_hold_and_a_leading_term_row_ignores_its_remainder() -> None:
    ev, table = _run(DOT, MATVEC)
    assert ev.passed and ev.counterexample is None and ev.cases == 8 + 21
    dot, matvec = ev.data["rows"]
    assert (dot["measured"], dot["multiplications"], dot["holds"]) == ("2*n - 1", "n", "yes")
    assert matvec["measured"] == "2*k*n - k" and matvec["holds"] == "yes"  # the -k is the O(n) left out
    assert matvec["reading"] == "quadratic terms (remainder O(n))"
    assert table.replay({"row": "matvec", "n": "3", "k": "2"}).ratio == 0.0


def test_a_wrong_coefficient_is_refuted_at_a_witness_that_replays() -> None:
    wrong_dot = Row("dot", "Sec. 1", "a dot product costs 3n - 1", "3*n - 1", ("n",), 0, "dot", 2)
    ev, table = _run(wrong_dot)
    assert not ev.passed and ev.counterexample is not None
    assert ev.counterexample.inputs == {"row": "dot", "n": "1"} and ev.counterexample.precision_digits == "exact"
    assert "stated 3*n - 1 = 2, counted 1" in ev.counterexample.value
    assert table.replay({"row": "dot", "n": "4"}).ratio == math.inf
    wrong_lead = Row("matvec", "Sec. 1", "A h costs 3nk + O(n)", "3*n*k", ("n", "k"), 2, "matvec", 2)
    ev, table = _run(wrong_lead)
    assert not ev.passed and ev.counterexample is not None and ev.data["rows"][0]["holds"] == "no"
    assert ev.data["rows"][0]["measured_minus_printed"] == "-k*n"
    assert table.replay({k: str(v) for k, v in ev.counterexample.inputs.items()}).ratio == math.inf
