"""The spectral form and the real part's 'if' in float; its 'only if' by a witness decided exactly
(printed) or about eigenpairs (corrected): the notes give the reasons."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import FLOAT_HP, exact_backend
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.ratios import Measure, orthogonality, residual, worst
from orthoverify.engine.templates import (
    Agreement,
    Formulation,
    exact_witness,
    inexact_sizes,
    listed,
    sampled,
)
from orthoverify.param import unitary as un
from orthoverify.param.unitary_spectral import unitary_eig


def q_lemma1_spectral(b: Backend, case: Case) -> Measure:
    """Unitary W = V D V* with V unitary and |D_jj| = 1; conversely V D V* is unitary for any
    unitary V and unit-modulus D."""
    w = kit.unitary_input(b, case)
    n = w.shape[0]
    v, d = unitary_eig(w, backend=b)
    rebuilt = v @ un.CArray(b.diag(d.re), b.diag(d.im)) @ un.ct(b, v)
    mods = d.re * d.re + d.im * d.im - b.asarray([1] * n)
    # converse: V and D' = D with the phases of a second sample
    w2 = kit.unitary_input(b, case, "W2")
    back = w2 @ un.phase_diag(b.asarray(case["phi"], name="phi"), backend=b) @ un.ct(b, w2)
    return worst(
        kit.unitarity(b, v),
        kit.cagree(b, rebuilt, w, n),
        residual(b, mods, n),
        kit.unitarity(b, back),
    )


def _second_sample(ctx: RunContext, rng: np.random.Generator, n: int) -> dict[str, Any]:
    """A second Haar unitary W2 and phases phi, for the converse."""
    return {**kit.split_complex(samples.haar_unitary(rng, n), "W2"), "phi": rng.uniform(-np.pi, np.pi, n)}


def _paired(rng: np.random.Generator, n: int) -> Case:
    """A unitary V whose columns come in conjugate pairs (and real columns for a leftover
    eigenvalue +-1), with conjugate-paired unit eigenvalues D: the real orthogonal W of Lemma 1."""
    q = samples.haar_orthogonal(rng, n)
    cols, eig = [], []
    for j in range(0, n - 1, 2):
        a, c = q[:, j], q[:, j + 1]
        v = (a - 1j * c) / np.sqrt(2)
        phi = rng.uniform(0.1, np.pi - 0.1)
        cols += [v, v.conj()]
        eig += [np.exp(1j * phi), np.exp(-1j * phi)]
    if n % 2:
        cols.append(q[:, n - 1].astype(complex))
        eig.append(complex(rng.choice([-1.0, 1.0])))
    return {**kit.split_complex(np.stack(cols, axis=1), "V"), **kit.split_complex(np.array(eig), "D")}


def q_lemma1_real_if(b: Backend, case: Case) -> Measure:
    """V with conjugate-paired columns and conjugate-paired eigenvalues gives a real orthogonal W."""
    v = kit.unitary_input(b, case, "V")
    d = kit.complex_input(b, case, "D")
    n = v.shape[0]
    if not b.exact:
        d = d / b.sqrt(d.re * d.re + d.im * d.im)  # unit modulus at the working precision
    w = v @ un.CArray(b.diag(d.re), b.diag(d.im)) @ un.ct(b, v)
    return worst(residual(b, w.im, n), orthogonality(b, w.re))


def eigenpairs(conjugated: bool) -> Formulation:
    """W conj(V) (or conj(V) conj(D)) for a real orthogonal W (polished in float) and its
    decomposition V D V*."""

    def side(b: Backend, case: Case) -> Array:
        w = kit.unitary_input(b, case)
        v, d = unitary_eig(w, backend=b)
        return kit.parts(b, v.conj() @ un.CArray(b.diag(d.re), b.diag(-d.im)) if conjugated else w @ v.conj())

    return side


CONJUGATE_EIGENPAIRS = Agreement(
    eigenpairs(False), eigenpairs(True), "||W conj(V) - conj(V) conj(D)|| / (n eps)", dim=kit.rows_of("W")
)
HAAR_ORTHOGONAL = sampled(
    inexact_sizes, lambda rng, n: {"W_re": samples.haar_orthogonal(rng, n), "W_im": np.zeros((n, n))}
)


UNPAIRED = listed({"V_re": [["1", "0"], ["0", "0"]], "V_im": [["0", "0"], ["0", "1"]], "D": ["1", "1"]})


def unpaired_column(b: Backend, inputs: Case) -> Measure:
    """Whether V's columns (and D's entries) come in conjugate pairs, exactly; the strings of a
    result file are parsed strictly by the SymPy backend, never evaluated."""
    sy = exact_backend()
    re, im = sy.asarray(inputs["V_re"], name="V_re"), sy.asarray(inputs["V_im"], name="V_im")
    vv = sympy.Matrix(re) + sympy.I * sympy.Matrix(im)
    d = sympy.diag(*sy.asarray(inputs["D"], name="D"))
    n = vv.shape[0]
    w = (vv * d * vv.H).applyfunc(sympy.expand)
    if (vv.H * vv).applyfunc(sympy.expand) != sympy.eye(n) or any(sympy.im(x) != 0 for x in w):
        return Measure(0.0, "not a real orthogonal W = V D V* (no counterexample)")
    cols = [vv[:, j] for j in range(n)]
    for j in range(n):
        conj = cols[j].conjugate()
        if not any(conj == cols[k] and sympy.conjugate(d[j, j]) == d[k, k] for k in range(n)):
            return Measure(math.inf, f"column {j + 1} = {list(cols[j])} has no conjugate column {list(conj)}")
    return Measure(0.0, "columns come in conjugate pairs")


_LEMMA1_SPECTRAL = PropertyCheck(
    "float",
    q_lemma1_spectral,
    kit.unitaries(_second_sample, sizes=inexact_sizes),
    FLOAT_HP,
    "max(||V*V - I||, ||V D V* - W||, max| |D_jj|^2 - 1 |, ||(V' D' V'^*)* (.) - I||) / (n eps)",
)

_LEMMA1_REAL_IF = PropertyCheck(
    "float:paired",
    q_lemma1_real_if,
    sampled(inexact_sizes, _paired),
    FLOAT_HP,
    "max(||Im W||, ||W'W - I||) / (n eps)",
)


def checks(corrected: bool) -> tuple[Check, ...]:
    """The spectral form and the 'if' of the real part for both; the 'only if' read about V's
    columns (printed: a witness) or about W's eigenpairs (corrected)."""
    only_if: Check
    if corrected:
        only_if = CONJUGATE_EIGENPAIRS.check("converse", HAAR_ORTHOGONAL, FLOAT_HP)
    else:
        only_if = exact_witness("converse", unpaired_column, "a column of V without its conjugate", UNPAIRED)
    return (_LEMMA1_SPECTRAL, _LEMMA1_REAL_IF, only_if)


CLAIMS = kit.twins(
    "unitary.lemma1",
    place=kit.URNN(lemma="1"),
    expected="refuted",
    origin="catalogue",
    summary="unitary and real orthogonal matrices by their eigendecomposition",
    corrected_summary="unitary and real orthogonal matrices by their eigenpairs",
    kind="identity",
    printed=(
        "W is unitary iff W = V D V* with V unitary and |D_jj| = 1; W is real orthogonal iff for every eigenvalue "
        "D_jj = lambda_j with eigenvector v_j there is also an eigenvalue lambda_k = conj(lambda_j) with "
        "eigenvector v_k = conj(v_j)"
    ),
    corrected=(
        "W is unitary iff W = V D V* with V unitary and |D_jj| = 1; a unitary W is real (orthogonal) iff for every "
        "eigenpair (lambda, v) of W, (conj(lambda), conj(v)) is an eigenpair of W, equivalently iff it has such a "
        "decomposition whose columns and eigenvalues come in conjugate pairs"
    ),
    checks=checks,
    printed_notes=(
        "Read, as printed, about the decomposition W = V D V* (eigenvalue D_jj, eigenvector v_j the j-th column of "
        "V): the 'if' direction holds, the 'only if' fails, because eigenvectors are fixed only up to phase (and "
        "within repeated eigenspaces): I_2 = V I V* with V = diag(1, i). Read about the eigenpairs of W (any "
        "eigenvector), the lemma holds: see unitary.lemma1.corrected."
    ),
    corrected_notes=(
        "Only if: W v = lambda v with W real gives W conj(v) = conj(lambda) conj(v). If: W and conj(W) agree on the "
        "basis conj(v_j), so W = conj(W). Decompositions are computed by a Hermitian eigensolver on "
        "(W + W*)/2 + c (W - W*)/2i (V unitary by construction, also for repeated eigenvalues)."
    ),
)
