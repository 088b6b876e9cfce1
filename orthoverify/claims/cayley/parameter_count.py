"""cayley.parameter_count and cayley.parameter_count.corrected: a skew-symmetric n x n matrix A gives
n(n-1) trainable weights as printed in Sec. 3.1; corrected, n(n-1)/2 (its strict upper triangle,
as App. D stores them).

Helfrich, Willmott, Ye (ICML 2018) Sec. 3.1, App. D. Compared: each count against the dimension of
the skew-symmetric matrices (exact rank, :mod:`orthoverify.param.cayley_analysis`), and the
experiments' printed totals under the printed count. Evidence: exact for n = 1..8, the tables
recounted, and the rank of dW/dA by torch autograd.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from orthoverify import samples
from orthoverify.backends import Backend, get_backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.cayley import PAPER
from orthoverify.claims.cayley._shared import random_signs
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure, flag
from orthoverify.param import cayley as cy
from orthoverify.param import cayley_analysis as ca


def _count_outcome(formula: Any, label: str) -> Outcome:
    for n in range(1, 9):
        dim = ca.skew_dimension(n)
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
    return flag(formula(n) == ca.skew_dimension(n), f"count {formula(n)} vs dimension {ca.skew_dimension(n)}")


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
        d = tuple(random_signs(rng, n))

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
    hits = [
        r
        for r in ca.SCORNN_CONFIGURATIONS
        if round(ca.scornn_parameters(r, int(r["n"]) * (int(r["n"]) - 1)) / 1000) == r["printed_k"]
    ]
    row = ca.SCORNN_CONFIGURATIONS[2]
    n = int(row["n"])
    value = f"MNIST n=170: {ca.scornn_parameters(row, n * (n - 1)):,} with n(n-1) weights in A, printed ~16k"
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
    total = ca.scornn_parameters(inputs, n * (n - 1))
    return flag(round(total / 1000) == int(inputs["printed_k"]), f"{total:,} vs ~{inputs['printed_k']}k")


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
