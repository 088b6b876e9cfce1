"""unitary.modrelu_real and unitary.modrelu_real.corrected: the real-space form of modReLU.

Mhammedi et al. (ICML 2017) Sec. 3, after eq. 4. As printed (1-based i, residues 0..m-1) the
indices k_i = (i + n) mod 2n and k~_i = i mod n fall outside their ranges at i = n and i = 2n: an
exhaustive enumeration of i = 1..2n, n = 1..N (a witness search over the whole domain) finds
them and records the first. Corrected (k_i = ((i + n - 1) mod 2n) + 1,
k~_i = ((i - 1) mod n) + 1): the enumeration also checks that k_i pairs the real and imaginary
parts of one unit, and the real form on (Re z, Im z) and the real RNN of eq. 3 built on it are
compared with the complex modReLU and the complex RNN.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, FLOAT_HP
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._effort import effort
from orthoverify.claims.unitary._shared import (
    cases_modrelu,
    complex_input,
    steps_dim,
    unitary_cases,
    unitary_input,
)
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Agreement, Cases, printed_and_corrected, witness
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def index_violation(b: Backend, case: Case) -> Measure:
    """Index i of the real-space modReLU for n units: k_i and k~_i in range, and (for the corrected
    form) k_i pairing i with the other part of the same complex unit; infinite, naming the broken
    index, when not (the test and the replay)."""
    n, i, conv = int(case["n"]), int(case["i"]), str(case["convention"])
    idx = un.modrelu_real_indices(n, conv)  # type: ignore[arg-type]
    _, k, kt = idx[i - 1]
    if not 1 <= k <= 2 * n:
        return Measure(math.inf, f"k_{i} = ({i} + {n}) mod {2 * n} = {k} is outside 1..{2 * n}")
    if not 1 <= kt <= n:
        return Measure(math.inf, f"k~_{i} = {i} mod {n} = {kt} is outside 1..{n}")
    unit = (i - 1) % n + 1
    if conv == "corrected" and not (idx[k - 1][1] == i and k != i and kt == unit and (k - 1) % n + 1 == unit):
        return Measure(math.inf, f"k_{i} = {k} does not pair the real and imaginary parts of unit {unit}")
    return Measure(0.0, "in range" + (" and paired" if conv == "corrected" else ""), error=0.0)


def every_index(convention: str) -> Cases:
    """Every index i = 1..2n of n = 1..N (N from the profile's effort): the whole domain."""

    def gen(ctx: RunContext) -> Iterator[Case]:
        for n in range(1, effort(ctx).indices_max_n + 1):
            yield from ({"n": n, "i": i, "convention": convention} for i in range(1, 2 * n + 1))

    return gen


def indices_check(name: str, convention: str, quantity_name: str) -> Check:
    """An exhaustive enumeration of the indices under ``convention``."""
    return witness(
        name,
        index_violation,
        backends=("sympy",),
        quantity_name=quantity_name,
        candidates=every_index(convention),
        method="exhaustive",
    )


def real_form(b: Backend, case: Case) -> Array:
    """The real-space form (corrected indices) on (Re z, Im z)."""
    z = complex_input(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    return un.modrelu_real(un.embed_vector(z, backend=b), bias, backend=b, convention="corrected")


def complex_form(b: Backend, case: Case) -> Array:
    """(Re, Im) of the complex modReLU (the case form of Mhammedi et al.)."""
    z = complex_input(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    return un.embed_vector(un.modrelu(z, bias, backend=b, rule="mhammedi"), backend=b)


def _urnn(b: Backend, case: Case) -> tuple[CArray, CArray, CArray, Array, Array]:
    """W, V, h0, the inputs and the biases of a modReLU uRNN case."""
    w = unitary_input(b, case)
    v, h0 = complex_input(b, case, "V"), complex_input(b, case, "h0")
    return w, v, h0, b.asarray(case["xs"], name="xs"), b.asarray(case["bias"], name="bias")


def complex_rnn(b: Backend, case: Case) -> Array:
    """The modReLU uRNN in complex arithmetic, h_T as (Re h_T, Im h_T)."""
    w, v, h0, xs, bias = _urnn(b, case)
    return un.embed_vector(un.complex_rnn(w, v, xs, h0, "modrelu", bias=bias, backend=b)[-1], backend=b)


def real_rnn(b: Backend, case: Case) -> Array:
    """Eq. 3's real RNN with the real-space form (corrected indices): h_hat_T."""
    w, v, h0, xs, bias = _urnn(b, case)
    what, vhat = un.embed_matrix(w, backend=b), b.concat([v.re, v.im], axis=0)
    return un.real_rnn(what, vhat, xs, un.embed_vector(h0, backend=b), "modrelu", bias=bias, backend=b)[-1]


RNN = Agreement(real_rnn, complex_rnn, "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)", dim=steps_dim)


def cases_modrelu_rnn(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        if ctx.backend.exact:
            continue
        steps = 4 if ctx.backend.method == "high-precision" else 10
        for case in unitary_cases(ctx, rng, n, structured=False):
            yield {
                **case,
                "V_re": rng.standard_normal((n, 2)),
                "V_im": rng.standard_normal((n, 2)),
                "h0_re": rng.standard_normal(n),
                "h0_im": rng.standard_normal(n),
                "xs": rng.standard_normal((steps, 2)),
                "bias": rng.standard_normal(n) * 0.5,
            }


AGAINST_COMPLEX = Agreement(real_form, complex_form, "||phi(a) - (Re, Im) modReLU(z)|| / (2n eps ||modReLU(z)||)")


def checks(corrected: bool) -> tuple[Check, ...]:
    """The printed indices leave their range; the corrected ones are enumerated too, and the real
    form they define is compared with the complex modReLU, alone and inside the RNN of eq. 3."""
    if not corrected:
        return (indices_check("exhaustive", "printed", "index k_i, k~_i in range"),)
    return (
        indices_check("exhaustive", "corrected", "index k_i, k~_i in range and pairing"),
        AGAINST_COMPLEX.check("all_arithmetics", cases_modrelu, ALL),
        RNN.check("float", cases_modrelu_rnn, FLOAT_HP),
    )


CLAIMS: list[Claim] = printed_and_corrected(
    "unitary.modrelu_real",
    paper=PAPER,
    place=Place(source="Mhammedi et al.", section="3", equation="4", note="the text after it"),
    expected="refuted",
    origin="catalogue",
    summary="the real-space form of modReLU",
    corrected_summary="the real-space form of modReLU with corrected indices",
    kind="identity",
    printed=(
        "the real-space form of modReLU: [phi(a)]_i = (sqrt(a_i^2 + a_k_i^2) + b_k~_i) / sqrt(a_i^2 + a_k_i^2) a_i if "
        "that is > 0, else 0, with k_i = ((i + n) mod 2n) and k~_i = (i mod n) for all i in {1, ..., 2n}"
    ),
    corrected=(
        "with k_i = ((i + n - 1) mod 2n) + 1 and k~_i = ((i - 1) mod n) + 1 (i in 1..2n; equivalently the printed "
        "formulas with 0-based i), phi(Re z, Im z) = (Re modReLU(z), Im modReLU(z)), and the real RNN of eq. 3 "
        "with phi equals the modReLU uRNN"
    ),
    checks=checks,
    printed_notes=(
        "With i in 1..2n and mod giving residues 0..m-1, k_n = 2n mod 2n = 0 and k~_n = k~_2n = 0 for every n: "
        "outside 1..2n and 1..n. The formulas are right for 0-based indices (i in 0..2n-1), or if 'mod' returns "
        "residues 1..m; the corrected claim states the 1-based form."
    ),
)
