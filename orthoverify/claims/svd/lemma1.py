"""svd.lemma1: Lemma 1 (Sec. 5) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: with V(k) = H_n(v_n)...H_k(v_k), the columns i <= min(n - k1, n - k2) of V(k1) and
V(k2) agree.

Compared: the leading columns of V(k1) and V(k2) for every pair k1 < k2; exactly, an agreement
of the two with one column more than stated (which Theorem 4's proof needs).

Evidence: random vectors (some zero) on every arithmetic; the sharp range in exact
arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import random_vector, vectors_case
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.templates import Agreement, Formulation
from orthoverify.param import svd as sv


def q_lemma1(b: Backend, case: Case) -> Measure:
    """Columns i <= min(n-k1, n-k2) of V(k1) and V(k2) agree, for every pair k1, k2."""
    vmat = b.asarray(case["V"], name="V")
    n = vmat.shape[0]
    vecs = sv.unstack_padded(vmat, 1)
    vk = {k: sv.m_k(vecs[k - 1 :], n, backend=b) for k in range(1, n + 1)}
    out = [Measure(0.0, error=0.0)]
    for k1 in range(1, n + 1):
        for k2 in range(k1 + 1, n + 1):
            i = min(n - k1, n - k2)
            if i > 0:
                out.append(residual(b, vk[k1][:, :i] - vk[k2][:, :i], n))
    return worst(*out)


def cases_lemma1(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        if n > 16:
            continue
        for zeros in (0.0, 0.3):
            for _ in range(ctx.profile.cases):
                yield {"V": vectors_case(ctx, rng, n, 1, zeros)}


def _leading(k: str) -> Formulation:
    """The first n - max(k1, k2) + 1 columns of V(k) (k = "k1" or "k2"): one more than stated."""

    def columns(b: Backend, case: Case) -> Array:
        vecs = sv.unstack_padded(b.asarray(case["V"], name="V"), 1)
        n = len(vecs)
        return sv.m_k(vecs[int(case[k]) - 1 :], n, backend=b)[:, : n - max(int(case["k1"]), int(case["k2"])) + 1]

    return columns


SHARP = Agreement(_leading("k1"), _leading("k2"), "V(k1)_{:, :i} - V(k2)_{:, :i}, i = n - max(k1, k2) + 1")


def cases_sharp(ctx: RunContext) -> Iterator[Case]:
    """Every pair k1 < k2 on random rational vectors, one draw per exact size n >= 2."""
    rng = ctx.rng()
    for n in [s for s in ctx.profile.exact_sizes if s >= 2]:
        vmat = sv.stack_padded([random_vector(ctx, rng, j) for j in range(1, n + 1)], n)
        for k1 in range(1, n + 1):
            for k2 in range(k1 + 1, n + 1):
                yield {"V": vmat, "k1": k1, "k2": k2}


LEMMA1 = Claim(
    id="svd.lemma1",
    paper=PAPER,
    place=Place(lemma="1", section="5"),
    expected="verified",
    origin="catalogue",
    summary="the leading columns of V(k1) and V(k2) agree",
    kind="identity",
    statement=(
        "with V(k) = H_n(v_n)...H_k(v_k): V(k1)_{*,i} = V(k2)_{*,i} for all k1, k2 in [n] and i <= min(n-k1, n-k2)"
    ),
    checks=(
        PropertyCheck("all_arithmetics", q_lemma1, cases_lemma1, ALL, "||V(k1)_{:, :i} - V(k2)_{:, :i}|| / (n eps)"),
        SHARP.check("exhaustive", cases_sharp, EXACT, method="exhaustive"),
    ),
    notes=(
        "True, and not sharp: H_j fixes e_i for i <= n - j, so the columns agree up to n - max(k1, k2) + 1. "
        "Theorem 4's proof needs exactly that extra column (svd.theorem4_proof)."
    ),
)


CLAIMS: list[Claim] = [LEMMA1]
