"""The printed indices are integers, so the whole domain i = 1..2n, n = 1..N is enumerated exactly
(the first index out of range is the counterexample); the corrected real form is compared with
the complex modReLU, alone and inside eq. 3's RNN, whose moduli it must pair."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, FLOAT_HP
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Agreement, drawn, exact_witness, inexact_sizes
from orthoverify.param import unitary as un


def index_violation(b: Backend, case: Case) -> Measure:
    """Index i of n units: k_i and k~_i in range and, corrected, k_i pairing i with the other part
    of its complex unit; infinite, naming the broken index, when not (the test and the replay)."""
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


def indices(convention: str, quantity_name: str) -> Check:
    """Every index i = 1..2n of n = 1..N (N from the profile's effort) under ``convention``."""

    def every(ctx: RunContext) -> Iterator[Case]:
        for n in range(1, effort(ctx).indices_max_n + 1):
            yield from ({"n": n, "i": i, "convention": convention} for i in range(1, 2 * n + 1))

    return exact_witness("exhaustive", index_violation, quantity_name, every, method="exhaustive")


def real_form(b: Backend, case: Case) -> Array:
    """The real-space form (corrected indices) on (Re z, Im z)."""
    z, bias = kit.complex_input(b, case, "z"), b.asarray(case["bias"], name="bias")
    return un.modrelu_real(un.embed_vector(z, backend=b), bias, backend=b, convention="corrected")


def complex_form(b: Backend, case: Case) -> Array:
    """(Re, Im) of the complex modReLU (the case form of Mhammedi et al.)."""
    z, bias = kit.complex_input(b, case, "z"), b.asarray(case["bias"], name="bias")
    return un.embed_vector(un.modrelu(z, bias, backend=b, rule="mhammedi"), backend=b)


def complex_rnn(b: Backend, case: Case) -> Array:
    """h_T of the modReLU uRNN, as (Re h_T, Im h_T)."""
    w, v, h0, xs = kit.rnn_inputs(b, case)
    h = un.complex_rnn(w, v, xs, h0, "modrelu", bias=b.asarray(case["bias"], name="bias"), backend=b)
    return un.embed_vector(h[-1], backend=b)


def real_rnn(b: Backend, case: Case) -> Array:
    """Eq. 3's real RNN with the real-space form (corrected indices)."""
    return kit.twin_rnn(b, case, "modrelu", b.asarray(case["bias"], name="bias"))


def draw_rnn(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
    """T = 10 (4 at 50 digits), biases N(0, 1/4)."""
    for case in kit.rnn_cases(ctx, rng, n, 4 if ctx.backend.method == "high-precision" else 10):
        yield {**case, "bias": rng.standard_normal(n) * 0.5}


AGAINST_COMPLEX = Agreement(real_form, complex_form, "||phi(a) - (Re, Im) modReLU(z)|| / (2n eps ||modReLU(z)||)")
RNN = Agreement(real_rnn, complex_rnn, "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)", dim=kit.steps_dim)


def checks(corrected: bool) -> tuple[Check, ...]:
    """The indices enumerated; corrected, also the real form against the complex modReLU."""
    if not corrected:
        return (indices("printed", "index k_i, k~_i in range"),)
    return (
        indices("corrected", "index k_i, k~_i in range and pairing"),
        AGAINST_COMPLEX.check("all_arithmetics", kit.cases_modrelu, ALL),
        RNN.check("float", drawn(draw_rnn, inexact_sizes), FLOAT_HP),
    )


CLAIMS = kit.twins(
    "unitary.modrelu_real",
    place=kit.ORNN(section="3", equation="4", note="the text after it"),
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
