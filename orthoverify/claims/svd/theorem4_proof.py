"""svd.theorem4_proof. The printed proof fails on index bookkeeping, not on arithmetic, so its two
steps are audited line by line for every m < n <= 4; the repaired proof is checked exactly on
rational factors."""

from __future__ import annotations

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, norm_scale
from orthoverify.claims.svd._shared import factor_cases, twins
from orthoverify.engine.checks import Case, Check, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, agreement, residual, worst
from orthoverify.engine.templates import Line, audit
from orthoverify.errors import ShapeError
from orthoverify.param import svd as sv


def lines_printed(b: Backend, case: Case) -> list[Line]:
    """App. A.5 as printed, m < n: does H^m_n(u_n) exist in an m x m product; does Lemma 1 as stated
    (k1 = 1, k2 = n - m + 1: columns i <= min(n - 1, m - 1)) give the m columns Sigma V' uses."""
    m, n = int(case["m"]), int(case["n"])
    defined = True
    try:
        sv.reflector(b.asarray([1] * n), m, backend=b)
    except ShapeError:
        defined = False
    lemma_cols = min(n - 1, m - 1)
    return [
        (f"H^m_n(u_n) in the m x m product: u_n has length n = {n}, m = {m}", defined),
        (f"by Lemma 1 (k1 = 1, k2 = n-m+1): columns i <= {lemma_cols} agree, Sigma V' uses {m}", lemma_cols >= m),
    ]


SHAPES = [(m, n) for n in range(2, 5) for m in range(1, n)]
"""Every m < n <= 4."""


def q_theorem4_proof_corrected(b: Backend, case: Case) -> Measure:
    """With H^m_m(u_m)...H^m_1(u_1) and the sharp Lemma 1 (columns i <= m): the full-V parameters
    and the last m of them give the same matrix."""
    u, v, s = (b.asarray(case[k], name=k) for k in ("U", "V", "sigma"))
    (m, n), (us, vs) = (u.shape[0], v.shape[0]), (sv.orthogonal_parameters(x, backend=b) for x in (u, v))
    full = sv.m_rect(us, vs, s, m=m, n=n, backend=b)
    cut = sv.m_rect(us, vs[n - m :], s, m=m, n=n, backend=b)
    return worst(
        residual(b, full - cut, n, norm_scale(b, full)),
        agreement(b, full, u @ sv._sigma_block(b, s, m, n) @ b.transpose(v), n),
    )


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        return (
            PropertyCheck(
                "exact",
                q_theorem4_proof_corrected,
                factor_cases(lambda ctx: SHAPES),
                EXACT,
                "M(all v) - M(last m v), M - U Sigma V'",
            ),
        )
    return (
        audit(
            "line_by_line",
            lines_printed,
            lambda ctx: [{"m": m, "n": n} for m, n in SHAPES],
            quantity_name="printed indices",
            method="exhaustive",
        ),
    )


CLAIMS = twins(
    "svd.theorem4_proof",
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
