"""svd.lemma1. The stated columns of V(k1) and V(k2) are compared for every pair at once on random
vectors, some zero, on every arithmetic; exactly, the sharp range of the notes (one column more
than stated), on every pair k1 < k2."""

from __future__ import annotations

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT
from orthoverify.claims.svd._shared import claim, random_vector, vectors_case
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.templates import Agreement, Formulation, drawn, float_sizes, repeated
from orthoverify.param import svd as sv


def q_lemma1(b: Backend, case: Case) -> Measure:
    """Columns i <= min(n-k1, n-k2) of V(k1) and V(k2) agree, for every pair k1, k2."""
    vecs = sv.unstack_padded(b.asarray(case["V"], name="V"), 1)
    n = len(vecs)
    vk = {k: sv.m_k(vecs[k - 1 :], n, backend=b) for k in range(1, n + 1)}
    pairs = [(k1, k2, n - k2) for k1 in range(1, n + 1) for k2 in range(k1 + 1, n + 1) if n - k2 > 0]
    return worst(Measure(0.0, error=0.0), *(residual(b, vk[k1][:, :i] - vk[k2][:, :i], n) for k1, k2, i in pairs))


def _leading(k: str) -> Formulation:
    """The first n - max(k1, k2) + 1 columns of V(k) (k = "k1" or "k2"): one more than stated."""

    def columns(b: Backend, case: Case) -> Array:
        vecs = sv.unstack_padded(b.asarray(case["V"], name="V"), 1)
        n = len(vecs)
        return sv.m_k(vecs[int(case[k]) - 1 :], n, backend=b)[:, : n - max(int(case["k1"]), int(case["k2"])) + 1]

    return columns


SHARP = Agreement(_leading("k1"), _leading("k2"), "V(k1)_{:, :i} - V(k2)_{:, :i}, i = n - max(k1, k2) + 1")

cases_sharp = drawn(
    lambda ctx, rng, n: [
        {"V": vmat, "k1": k1, "k2": k2}
        for vmat in [sv.stack_padded([random_vector(ctx, rng, j) for j in range(1, n + 1)], n)]
        for k1 in range(1, n + 1)
        for k2 in range(k1 + 1, n + 1)
    ],
    lambda ctx: [s for s in ctx.profile.exact_sizes if s >= 2],
)

CLAIMS = [
    claim(
        id="svd.lemma1",
        place=Place(lemma="1", section="5"),
        expected="verified",
        origin="catalogue",
        summary="the leading columns of V(k1) and V(k2) agree",
        kind="identity",
        statement=(
            "with V(k) = H_n(v_n)...H_k(v_k): V(k1)_{*,i} = V(k2)_{*,i} for all k1, k2 in [n] and i <= min(n-k1, n-k2)"
        ),
        checks=(
            PropertyCheck(
                "all_arithmetics",
                q_lemma1,
                repeated(
                    lambda ctx: [(n, z) for n in float_sizes(ctx) if n <= 16 for z in (0.0, 0.3)],
                    lambda ctx, rng, nz: {"V": vectors_case(ctx, rng, nz[0], 1, nz[1])},
                ),
                ALL,
                "||V(k1)_{:, :i} - V(k2)_{:, :i}|| / (n eps)",
            ),
            SHARP.check("exhaustive", cases_sharp, EXACT, method="exhaustive"),
        ),
        notes=(
            "True, and not sharp: H_j fixes e_i for i <= n - j, so the columns agree up to n - max(k1, k2) + 1. "
            "Theorem 4's proof needs exactly that extra column (svd.theorem4_proof)."
        ),
    )
]
