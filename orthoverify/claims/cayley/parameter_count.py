"""The dimension of the skew matrices is an exact rank, so its grid stays small; trainability is the
rank of dW/dA."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.cayley import twins
from orthoverify.claims.cayley._shared import random_signs
from orthoverify.engine.checks import Case, Check, Outcome, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Tallies, Tally, bespoke, count, jacobian_rank, listed
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


def fn_count_jacobian(ctx: RunContext) -> Outcome:
    """The map from A's strict upper triangle to W has full rank n(n-1)/2 at random points (torch
    autograd, float64; singular-value gap): every one of those weights is trainable, no more."""
    import torch

    rng, tb = ctx.rng(), ctx.backend  # torch-float64, on the run's device
    notes, ok = [], True
    for n in (2, 3, 4, 6, 8):
        a = tb.asarray(samples.random_skew(rng, n))
        iu = torch.triu_indices(n, n, 1, device=a.device)
        d = tuple(random_signs(rng, n))

        def f(x: Any, n: int = n, iu: Any = iu, d: tuple[int, ...] = d, b: Backend = tb) -> Any:
            p = b.zeros((n, n)).index_put((iu[0], iu[1]), x)
            return cy.scaled_cayley(p - p.T, d, backend=b).reshape(-1)

        rank, s, tol = jacobian_rank(tb, f, a[iu[0], iu[1]])
        want = n * (n - 1) // 2
        notes.append(f"n={n}: rank {rank} of {want} parameters (s_min/tol = {s[-1] / tol:.2e})")
        ok = ok and rank == want and s[-1] > 100 * tol
    return Outcome(ok, 5, notes="; ".join(notes))


def _checks(corrected: bool) -> tuple[Check, ...]:
    """The count against the dimension for both; as printed also the experiments' totals under
    n(n-1); corrected also the rank of dW/dA."""
    label = "n(n-1)/2" if corrected else "n(n-1)"
    tally = functools.partial(_dimension, corrected)
    how = f"{label} vs dim of skew matrices"
    dimension = count("count", grid=GRID, tally=tally, backends=EXACT, quantity_name=how, stated=label)
    if corrected:
        return dimension, bespoke("jacobian_rank", fn_count_jacobian, ("torch-float64",), "float", "rank of dW/dA")
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
