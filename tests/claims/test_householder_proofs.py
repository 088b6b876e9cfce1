"""App. A (proof of Thm 2) and App. B of Mhammedi et al. (2017), line by line, against exact references."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import sympy
from sympy import Matrix, Rational

from orthoverify.errors import DomainError, DTypeError, ShapeError, ZeroVectorError
from orthoverify.param.householder import algorithm1, reflector_product, theorem2_gradients
from orthoverify.param.householder_proofs import (
    TYPOS,
    ProofLine,
    appendix_b_lines,
    appendix_b_reference,
    audit,
    judge,
    theorem2_proof_lines,
    theorem2_reference,
)

SHAPES = [(2, 1), (3, 1), (3, 2), (4, 1), (4, 2), (4, 3)]
PROOF_TYPOS = sorted(t for t in TYPOS if t.startswith("proof."))
APPB_TYPOS = sorted(t for t in TYPOS if t.startswith("appb."))


def rmat(rng: random.Random, r: int, c: int, *, eq9: bool = False) -> Matrix:
    """A random r x c rational matrix with nonzero columns (zero above the diagonal with ``eq9``)."""
    while True:
        a = Matrix(r, c, lambda i, j: 0 if eq9 and i < j else Rational(rng.randint(-6, 6), rng.randint(1, 5)))
        if all(not a[:, j].is_zero_matrix for j in range(c)):
            return a


def thm2_case(n: int, m: int, seed: int = 0) -> tuple[Matrix, ...]:
    rng = random.Random(1000 * n + 10 * m + seed)
    return rmat(rng, n, m), rmat(rng, n, 1), rmat(rng, n, 1), rmat(rng, n, m), rmat(rng, n, 1)


def appb_case(n: int, m: int, seed: int = 0) -> tuple[Matrix, ...]:
    rng = random.Random(2000 * n + 10 * m + seed)
    return rmat(rng, n, m, eq9=True), rmat(rng, n, 1), rmat(rng, n, 1)


def failures(lines: list[ProofLine], ref: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in audit(lines, ref).items() if v != "equal"}


# what the paper prints, as determined line by line (see the module docstring of householder_proofs)
def printed_proof_failures(m: int) -> dict[str, str]:
    bad = dict.fromkeys(["proof.tr3", "proof.tr3.dh", "proof.tr3.du", "proof.ubar", "proof.hbar"], "ill-typed")
    if m >= 2:  # C~'h' and C~'h~' are typed (and right) only when C~ is a scalar
        bad |= dict.fromkeys(["proof.tr5", "proof.tr5.du", "proof.tr6", "proof.tr6.du"], "ill-typed")
    return bad


def printed_appb_failures(m: int) -> dict[str, str]:
    bad = {"appb.dldu_col": "wrong"}
    if m >= 2:  # the chains' left-hand sides (and eq. 18's limit) matter only when there are other columns
        bad |= dict.fromkeys(
            ["appb.eq18_b", "appb.eq18", "appb.eq19", "appb.eq22", "appb.eq23", "appb.eq23_b"], "wrong"
        )
    return bad


# failures when every repair but one is applied (m >= 2)
SINGLE_TYPO = {
    "proof.tr3.cbar": {"proof.tr3": "ill-typed", "proof.tr3.dh": "ill-typed"},
    "proof.tr3.htilde_cbar": {"proof.tr3": "ill-typed", "proof.tr3.du": "ill-typed"},
    "proof.tr5.ctilde_h": {"proof.tr5": "ill-typed", "proof.tr5.du": "ill-typed"},
    "proof.tr5.ctilde_htilde": {"proof.tr5": "ill-typed", "proof.tr5.du": "ill-typed"},
    "proof.tr6.ctilde_h": {"proof.tr6": "ill-typed", "proof.tr6.du": "ill-typed"},
    "proof.tr6.bracket": {"proof.tr6": "wrong", "proof.tr6.du": "wrong"},
    "proof.ubar.ctilde_htilde": {"proof.ubar": "ill-typed"},
    "proof.ubar.cbar_htilde": {"proof.ubar": "ill-typed"},
    "proof.hbar.cbar": {"proof.hbar": "ill-typed"},
    "appb.eq18.lhs": {"appb.eq18_b": "wrong", "appb.eq18": "wrong", "appb.eq19": "wrong"},
    "appb.eq18.limits": {"appb.eq18": "wrong"},
    "appb.eq22.lhs": {"appb.eq22": "wrong", "appb.eq23": "wrong", "appb.eq23_b": "wrong"},
    "appb.dldu_col.g": {"appb.dldu_col": "wrong"},
}
HARMLESS_WHEN_M1 = {t for t in TYPOS if t.startswith(("proof.tr5.", "proof.tr6.", "appb.eq18.", "appb.eq22."))}


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: f"n{s[0]}m{s[1]}")
def thm2(request: pytest.FixtureRequest) -> tuple[tuple[Matrix, ...], dict[str, Any]]:
    case = thm2_case(*request.param)
    return case, theorem2_reference(*case)


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: f"n{s[0]}m{s[1]}")
def appb(request: pytest.FixtureRequest) -> tuple[tuple[Matrix, ...], dict[str, Any]]:
    case = appb_case(*request.param)
    return case, appendix_b_reference(*case)


# --------------------------------------------------------------------------- App. A
def test_theorem2_corrected_lines_equal_reference(thm2: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = thm2
    assert failures(theorem2_proof_lines(*case, corrected=True), ref) == {}


def test_theorem2_printed_failures(thm2: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = thm2
    m = case[0].shape[1]
    assert failures(theorem2_proof_lines(*case, corrected=False), ref) == printed_proof_failures(m)


def test_theorem2_each_repair_is_needed(thm2: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = thm2
    m = case[0].shape[1]
    for typo in PROOF_TYPOS:
        lines = theorem2_proof_lines(*case, corrected=False, repairs=set(PROOF_TYPOS) - {typo})
        expected = {} if m == 1 and typo in HARMLESS_WHEN_M1 else SINGLE_TYPO[typo]
        assert failures(lines, ref) == expected, typo


def test_theorem2_eqs_14_15_equal_reference(thm2: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    (u, h, cbar, _, _), ref = thm2
    obj = lambda a: np.array(a.tolist(), dtype=object)  # noqa: E731
    dl_du, dl_dh = theorem2_gradients(obj(u), obj(h).reshape(-1), obj(cbar).reshape(-1), backend="sympy")
    assert Matrix(dl_du.tolist()) == ref["dl_du"]
    assert Matrix(list(dl_dh)) == ref["dl_dh"]


def test_theorem2_reference_is_consistent(thm2: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    (u, h, _, _, _), ref = thm2
    # Lemma 1 for the reference, and the compact WY form of C against the product of reflections
    assert ref["tr_hbar_dh"] + ref["tr_ubar_du"] == ref["tr_cbar_dc"]
    w = Matrix(reflector_product(np.array(u.tolist(), dtype=object), backend="sympy").tolist())
    assert ref["c"] == w * h


def test_ill_typed_lines_raise_shape_error() -> None:
    case = thm2_case(4, 2)
    ref = theorem2_reference(*case)
    j = judge(next(ln for ln in theorem2_proof_lines(*case, corrected=False) if ln.label == "proof.hbar"), ref)
    assert j.verdict == "ill-typed" and j.value is None
    with pytest.raises(sympy.ShapeError):
        next(ln for ln in theorem2_proof_lines(*case, corrected=False) if ln.label == "proof.tr3.dh").evaluate()
    j = judge(
        next(
            ln
            for ln in theorem2_proof_lines(*case, corrected=False, repairs={"proof.tr6.ctilde_h"})
            if ln.label == "proof.tr6"
        ),
        ref,
    )
    assert j.verdict == "wrong" and j.value != j.expected


# --------------------------------------------------------------------------- App. B
def test_appb_corrected_lines_equal_reference(appb: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = appb
    assert failures(appendix_b_lines(*case, corrected=True), ref) == {}


def test_appb_printed_failures(appb: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = appb
    m = case[0].shape[1]
    assert failures(appendix_b_lines(*case, corrected=False), ref) == printed_appb_failures(m)


def test_appb_each_repair_is_needed(appb: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    case, ref = appb
    m = case[0].shape[1]
    for typo in APPB_TYPOS:
        lines = appendix_b_lines(*case, corrected=False, repairs=set(APPB_TYPOS) - {typo})
        expected = {} if m == 1 and typo in HARMLESS_WHEN_M1 else SINGLE_TYPO[typo]
        assert failures(lines, ref) == expected, typo


def test_appb_closing_formula_is_algorithm1(appb: tuple[tuple[Matrix, ...], dict[str, Any]]) -> None:
    (u, h, cbar), ref = appb
    obj = lambda a: np.array(a.tolist(), dtype=object)  # noqa: E731
    res = algorithm1(obj(u), obj(h).reshape(-1), obj(cbar).reshape(-1), backend="sympy")
    closing = next(ln for ln in appendix_b_lines(u, h, cbar, corrected=True) if ln.label == "appb.dldu_col")
    assert closing.evaluate() == Matrix(res.dl_du.tolist()) == ref["dl_du"]
    assert Matrix(list(res.dl_dh)) == ref["dl_dh"] and Matrix(list(res.c)) == ref["wh"]


# --------------------------------------------------------------------------- the typo catalogue
def test_typo_fragments_match_the_printed_text() -> None:
    u, h, cbar, du, dh = thm2_case(4, 2)
    ub, hb, cb = appb_case(4, 2)
    lines = theorem2_proof_lines(u, h, cbar, du, dh, corrected=True) + appendix_b_lines(ub, hb, cb, corrected=True)
    used: set[str] = set()
    for ln in lines:
        for r in ln.repairs:
            assert ln.printed.count(TYPOS[r].printed) == 1, (ln.label, r)
            assert TYPOS[r].printed not in ln.text, (ln.label, r)
        used.update(ln.repairs)
    assert used == set(TYPOS)
    printed = theorem2_proof_lines(u, h, cbar, du, dh, corrected=False) + appendix_b_lines(ub, hb, cb, corrected=False)
    assert all(ln.repairs == () and ln.text == ln.printed for ln in printed)
    assert [ln.label for ln in printed] == [ln.label for ln in lines]
    assert len({ln.label for ln in lines}) == len(lines)


def test_input_validation() -> None:
    u, h, cbar, du, dh = thm2_case(3, 2)
    with pytest.raises(DomainError):
        theorem2_proof_lines(Matrix.eye(3), h, cbar, Matrix.eye(3), dh, corrected=True)
    with pytest.raises(ShapeError):
        theorem2_proof_lines(u, h.T, cbar, du, dh, corrected=True)
    with pytest.raises(ShapeError):
        theorem2_reference(u.tolist(), h, cbar, du, dh)
    with pytest.raises(DTypeError):
        theorem2_reference(u, h * 0.5, cbar, du, dh)
    with pytest.raises(ZeroVectorError):
        theorem2_reference(Matrix.hstack(u[:, 0], Matrix.zeros(3, 1)), h, cbar, du, dh)
    with pytest.raises(DomainError):
        appendix_b_lines(Matrix([[1, 1], [1, 1], [1, 1]]), h, cbar, corrected=True)
    with pytest.raises(ValueError):
        theorem2_proof_lines(u, h, cbar, du, dh, corrected=True, repairs={"proof.hbar.cbar"})
    with pytest.raises(ValueError):
        appendix_b_lines(*appb_case(3, 2), corrected=False, repairs={"proof.hbar.cbar"})
