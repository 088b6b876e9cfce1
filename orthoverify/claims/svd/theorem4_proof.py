"""svd.theorem4_proof and its correction: the proof of Thm 4 (App. A.5) of svdRNN (Zhang, Lei &
Dhillon, ICML 2018).

Statement as printed: for m < n, W = H^m_n(u_n)...H^m_1(u_1) Sigma H^n_1(v_1)...H^n_n(v_n) =
H^m_n(u_n)...H^m_1(u_1) Sigma H^n_{n-m+1}(v_{n-m+1})...H^n_n(v_n) by Lemma 1. Corrected: the
left product runs H^m_m(u_m)...H^m_1(u_1), and the first m columns of V(1) and V(n-m+1) agree
(the sharp Lemma 1).

Compared: the printed indices against the lengths they need (u_n has length n > m; Lemma 1 as
stated gives m - 1 columns, Sigma V' uses m); exactly, M with all of V's reflections against M
with the last m of them and against U Sigma V'.

Evidence: every m < n <= 4, exactly.
"""

from __future__ import annotations

from collections.abc import Iterator

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, norm_scale
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import factor_cases
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, agreement, residual, worst
from orthoverify.engine.templates import Line, audit, printed_and_corrected
from orthoverify.errors import ShapeError
from orthoverify.param import svd as sv


def lines_printed(b: Backend, case: Case) -> list[Line]:
    """App. A.5 as printed, m < n: its two steps judged. W = H^m_n(u_n)...H^m_1(u_1) Sigma V' needs
    H^m_n(u_n) with u_n of length n in an m x m product; the step to H^n_{n-m+1}(v_{n-m+1})... by
    Lemma 1 (k1 = 1, k2 = n - m + 1) needs the first m columns of V(1) and V(n-m+1) to agree,
    while Lemma 1 as stated gives columns i <= min(n - 1, m - 1)."""
    m, n = int(case["m"]), int(case["n"])
    try:
        sv.reflector(b.asarray([1] * n), m, backend=b)
        defined = True
    except ShapeError:
        defined = False
    lemma_cols = min(n - 1, m - 1)
    return [
        (f"H^m_n(u_n) in the m x m product: u_n has length n = {n}, m = {m}", defined),
        (f"by Lemma 1 (k1 = 1, k2 = n-m+1): columns i <= {lemma_cols} agree, Sigma V' uses {m}", lemma_cols >= m),
    ]


def cases_theorem4_proof(ctx: RunContext) -> Iterator[Case]:
    for n in range(2, 5):
        for m in range(1, n):
            yield {"m": m, "n": n}


def q_theorem4_proof_corrected(b: Backend, case: Case) -> Measure:
    """With H^m_m(u_m)...H^m_1(u_1) and the sharp Lemma 1 (columns i <= m): the full-V parameters
    and the last m of them give the same matrix."""
    u = b.asarray(case["U"], name="U")
    v = b.asarray(case["V"], name="V")
    s = b.asarray(case["sigma"], name="sigma")
    m, n = u.shape[0], v.shape[0]
    us = sv.orthogonal_parameters(u, backend=b)
    vs = sv.orthogonal_parameters(v, backend=b)
    full = sv.m_rect(us, vs, s, m=m, n=n, backend=b)
    cut = sv.m_rect(us, vs[n - m :], s, m=m, n=n, backend=b)
    return worst(
        residual(b, full - cut, n, norm_scale(b, full)),
        agreement(b, full, u @ sv._sigma_block(b, s, m, n) @ b.transpose(v), n),
    )


def cases_theorem4_proof_corrected(ctx: RunContext) -> Iterator[Case]:
    yield from factor_cases(ctx, [(m, n) for n in range(2, 5) for m in range(1, n)])


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        return (
            PropertyCheck(
                "exact",
                q_theorem4_proof_corrected,
                cases_theorem4_proof_corrected,
                EXACT,
                "M(all v) - M(last m v), M - U Sigma V'",
            ),
        )
    return (
        audit(
            "line_by_line", lines_printed, cases_theorem4_proof, quantity_name="printed indices", method="exhaustive"
        ),
    )


CLAIMS: list[Claim] = printed_and_corrected(
    "svd.theorem4_proof",
    paper=PAPER,
    place=Place(appendix="A.5"),
    expected="refuted",
    origin="added",
    summary="Theorem 4's proof as printed",
    corrected_summary="Theorem 4's proof with H^m_m and the sharp Lemma 1",
    kind="identity",
    printed=(
        "for m < n: W = H^m_n(u_n)...H^m_1(u_1) Sigma H^n_1(v_1)...H^n_n(v_n) "
        "= H^m_n(u_n)...H^m_1(u_1) Sigma H^n_{n-m+1}(v_{n-m+1})...H^n_n(v_n) by Lemma 1"
    ),
    corrected=(
        "for m < n: U Sigma V' = H^m_m(u_m)...H^m_1(u_1) Sigma H^n_{n-m+1}(v_{n-m+1})...H^n_n(v_n) with the "
        "vectors of U and V from Theorem 1 (the first m columns of V(1) and V(n-m+1) agree)"
    ),
    checks=checks,
    printed_notes=(
        "The left product must run H^m_m(u_m)...H^m_1(u_1) (u_n has length n > m), and for m > n the printed "
        "H^m_n(u_n)...H^m_{m-n+1} is an empty range when m - n + 1 > n; and Lemma 1 as stated yields columns "
        "i <= m - 1 of V, while Sigma V' uses m. The theorem stands (svd.theorem4); the proof needs the sharp "
        "lemma (svd.lemma1's exact_sharp_range)."
    ),
)
