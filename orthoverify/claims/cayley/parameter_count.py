"""cayley.parameter_count and its correction: how many weights A has.

Statement (Sec. 3.1, and App. D): parametrising W through a skew-symmetric n x n matrix A results
in n(n-1) trainable weights (App. D instead speaks of storing the n(n-1)/2 entries of A).
Corrected: n(n-1)/2, the strict upper triangle.

Compared: each count against the dimension of the skew-symmetric matrices (the exact rank of the
linear conditions a_ij + a_ji = 0); the experiments' printed totals under n(n-1); the rank of the
map from A's strict upper triangle to W.

Evidence: n = 1..8 exactly; the eight printed totals of the experiments; the Jacobian's rank by
torch autograd in float64 with a singular-value gap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Backend, get_backend
from orthoverify.claims._common import (
    EXACT,
)
from orthoverify.claims.cayley import PAPER
from orthoverify.claims.cayley._shared import (
    signs_case,
    table_rows,
    table_total,
)
from orthoverify.engine.checks import (
    FunctionCheck,
    Outcome,
    RunContext,
)
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure
from orthoverify.engine.ratios import flag as _flag
from orthoverify.param import cayley as cy


def _skew_dimension(n: int) -> int:
    """dim{A : A' = -A} = n^2 - rank of the n^2 linear conditions a_ij + a_ji = 0 (exact)."""
    rows = []
    for i in range(n):
        for j in range(n):
            r = [0] * (n * n)
            r[i * n + j] += 1
            r[j * n + i] += 1
            rows.append(r)
    return n * n - int(sympy.Matrix(rows).rank())


def _count_outcome(formula: Any, label: str) -> Outcome:
    for n in range(1, 9):
        dim = _skew_dimension(n)
        if formula(n) != dim:
            value = f"{label} = {formula(n)} for n = {n}, but skew-symmetric n x n matrices have {dim} free entries"
            return Outcome(False, n, failure=({"n": n}, Measure(math.inf, value, error=math.inf)))
    return Outcome(True, 8, notes=f"{label} = dim of the skew-symmetric matrices for n = 1..8 (exact rank)")


def fn_count_printed(ctx: RunContext) -> Outcome:
    return _count_outcome(lambda n: n * (n - 1), "n(n-1)")


def fn_count_corrected(ctx: RunContext) -> Outcome:
    return _count_outcome(lambda n: n * (n - 1) // 2, "n(n-1)/2")


def _replay_count(inputs: Mapping[str, Any], formula: Any) -> Measure:
    n = int(inputs["n"])
    return _flag(formula(n) == _skew_dimension(n), f"count {formula(n)} vs dimension {_skew_dimension(n)}")


def replay_count_printed(inputs: Mapping[str, Any], b: Backend) -> Measure:
    return _replay_count(inputs, lambda n: n * (n - 1))


def replay_count_corrected(inputs: Mapping[str, Any], b: Backend) -> Measure:
    return _replay_count(inputs, lambda n: n * (n - 1) // 2)


def fn_count_jacobian(ctx: RunContext) -> Outcome:
    """The map from A's strict upper triangle to W has full rank n(n-1)/2 at random points (torch
    autograd, float64; singular-value gap): every one of those weights is trainable, no more."""
    import torch

    rng = ctx.rng()
    tb = get_backend("torch-float64")
    notes = []
    ok = True
    for n in (2, 3, 4, 6, 8):
        a = torch.tensor(samples.random_skew(rng, n), dtype=torch.float64)
        iu = torch.triu_indices(n, n, 1)
        d = tuple(signs_case(rng, n))

        def f(x: Any, n: int = n, iu: Any = iu, d: tuple[int, ...] = d, b: Backend = tb) -> Any:
            p = torch.zeros(n, n, dtype=torch.float64).index_put((iu[0], iu[1]), x)
            return cy.scaled_cayley(p - p.T, d, backend=b).reshape(-1)

        jac = torch.autograd.functional.jacobian(f, a[iu[0], iu[1]])
        s = torch.linalg.svdvals(jac).numpy()
        want = n * (n - 1) // 2
        tol = s[0] * max(jac.shape) * np.finfo(np.float64).eps
        rank = int(np.sum(s > tol))
        notes.append(f"n={n}: rank {rank} of {want} parameters (s_min/tol = {s[-1] / tol:.2e})")
        ok = ok and rank == want and s[-1] > 100 * tol
    return Outcome(ok, 5, notes="; ".join(notes))


def fn_tables_under_printed_count(ctx: RunContext) -> Outcome:
    """With A counted as n(n-1) weights (Sec. 3.1), how many printed totals would follow."""
    hits = [r for r in table_rows() if round(table_total(r, int(r["n"]) * (int(r["n"]) - 1)) / 1000) == r["printed_k"]]
    row = table_rows()[2]
    n = int(row["n"])
    value = f"MNIST n=170: {table_total(row, n * (n - 1)):,} with n(n-1) weights in A, printed ~16k"
    if hits:
        return Outcome(True, 8, notes=f"{len(hits)} of 8 rows follow from n(n-1)")
    return Outcome(
        False,
        8,
        failure=({"row": row["row"], "n": n, "m": row["m"], "p": row["p"], "printed_k": 16}, Measure(math.inf, value)),
        notes="0 of 8 printed totals follow from n(n-1); see cayley.table_params for n(n-1)/2",
    )


def replay_tables_printed(inputs: Mapping[str, Any], b: Backend) -> Measure:
    n = int(inputs["n"])
    total = table_total(inputs, n * (n - 1))
    return _flag(round(total / 1000) == int(inputs["printed_k"]), f"{total:,} vs ~{inputs['printed_k']}k")


PARAMETER_COUNT = Claim(
    id="cayley.parameter_count",
    paper=PAPER,
    where="Sec. 3.1 (and App. D)",
    statement=(
        "Parametrising W through a skew-symmetric n x n matrix A results in n(n-1) trainable weights "
        "(Sec. 3.1; App. D instead speaks of storing the n(n-1)/2 entries of A)"
    ),
    kind="count",
    checks=(
        FunctionCheck(
            "exact_dimension",
            fn_count_printed,
            EXACT,
            "exhaustive",
            "n(n-1) vs dim of skew matrices",
            threshold=None,
            replay_fn=replay_count_printed,
            exact=True,
        ),
        FunctionCheck(
            "tables_under_n(n-1)",
            fn_tables_under_printed_count,
            EXACT,
            "exhaustive",
            "printed totals under n(n-1)",
            threshold=None,
            replay_fn=replay_tables_printed,
            exact=True,
        ),
    ),
    notes="The two counts in the paper disagree for every n >= 2; the experiments' totals follow n(n-1)/2.",
)


PARAMETER_COUNT_CORRECTED = Claim(
    id="cayley.parameter_count.corrected",
    paper=PAPER,
    where="Sec. 3.1, App. D",
    statement="A skew-symmetric n x n matrix A has n(n-1)/2 trainable weights (its strict upper triangle)",
    kind="count",
    checks=(
        FunctionCheck(
            "exact_dimension",
            fn_count_corrected,
            EXACT,
            "exhaustive",
            "n(n-1)/2 vs dim of skew matrices",
            threshold=None,
            replay_fn=replay_count_corrected,
            exact=True,
        ),
        FunctionCheck(
            "float_jacobian_rank", fn_count_jacobian, ("torch-float64",), "float", "rank of dW/dA", threshold=None
        ),
    ),
    corrects="cayley.parameter_count",
)


CLAIMS: list[Claim] = [PARAMETER_COUNT, PARAMETER_COUNT_CORRECTED]
