"""The dimension of the skew matrices is an exact rank, so its grid stays small; trainability is the
rank of dW/dA."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.cayley import twins
from orthoverify.claims.cayley._shared import random_signs, skew_of
from orthoverify.engine.checks import Case, Check
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Tallies, Tally, count, listed
from orthoverify.engine.templates_more import full_rank
from orthoverify.param import cayley as cy
from orthoverify.param import cayley_analysis as ca


def _dimension(corrected: bool, case: Case) -> list[Tally]:
    n = int(case["n"])
    what = f"free entries of a skew-symmetric {n} x {n} A (counted: an exact rank)"
    return [(what, n * (n - 1) // (2 if corrected else 1), ca.skew_dimension(n))]


def _row(row: Mapping[str, Any], case: Case) -> list[Tally]:
    """One printed total against the total with A's n(n-1) weights, in thousands."""
    total = ca.scornn_parameters(row, int(row["n"]) * (int(row["n"]) - 1))
    return [(f"{total:,} parameters, in thousands", int(row["printed_k"]), round(total / 1000))]


GRID = listed(*({"n": n} for n in range(1, 9)))
# Each table row is one way the printed count could be borne out: the count is supported when
# *some* row follows from n(n-1), so that one misprinted total (cf. cayley.table_params) decides nothing.
ROWS = ca.SCORNN_CONFIGURATIONS
TABLE_ROWS: dict[str, Tallies] = {f"{r['row']} n={r['n']}": functools.partial(_row, r) for r in ROWS}


def jacobian_point(b: Backend, rng: np.random.Generator, n: int) -> tuple[Any, Any]:
    """W as a map of P (A = triu(P, 1) - triu(P, 1)': only P's strict upper triangle counts) at a
    random skew A and D; its rank is the number of independent trainable weights."""
    a, d = b.asarray(samples.random_skew(rng, n)), tuple(random_signs(rng, n))
    return (lambda p: cy.scaled_cayley(skew_of(b, p.reshape(n, n)), d, backend=b).reshape(-1)), a.reshape(-1)


def _checks(corrected: bool) -> tuple[Check, ...]:
    """The count against the dimension for both; as printed also the experiments' totals under
    n(n-1); corrected also the rank of dW/dA."""
    label, tally = "n(n-1)/2" if corrected else "n(n-1)", functools.partial(_dimension, corrected)
    how = f"{label} vs dim of skew matrices"
    dimension = count("count", grid=GRID, tally=tally, backends=EXACT, quantity_name=how, stated=label)
    if corrected:
        sizes, rank = (lambda ctx: (2, 3, 4, 6, 8)), lambda n: n * (n - 1) // 2
        return dimension, full_rank("jacobian_rank", sizes, jacobian_point, rank, "rank of dW/dA")
    how, grid = "printed totals under n(n-1)", listed({"weights in A": "n(n-1)"})
    tables = count("count:tables", grid=grid, tally=TABLE_ROWS, backends=EXACT, quantity_name=how, stated="printed")
    return dimension, tables


CLAIMS: list[Claim] = twins(
    "cayley.parameter_count",
    place=Place(section="3.1", appendix="D"),
    expected="refuted",
    origin="catalogue",
    summary="the skew matrix A has n(n-1) trainable weights",
    corrected_summary="the skew matrix A has n(n-1)/2 trainable weights",
    kind="count",
    printed=(
        "Parametrising W through a skew-symmetric n x n matrix A results in n(n-1) trainable weights "
        "(Sec. 3.1; App. D instead speaks of storing the n(n-1)/2 entries of A)"
    ),
    corrected="A skew-symmetric n x n matrix A has n(n-1)/2 trainable weights (its strict upper triangle)",
    checks=_checks,
    printed_notes="The two counts in the paper disagree for every n >= 2; the experiments' totals follow n(n-1)/2.",
)
