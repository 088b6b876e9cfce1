"""unitary.modrelu_real and unitary.modrelu_real.corrected: the real-space form of modReLU.

Mhammedi et al. (ICML 2017) Sec. 3, after eq. 4. As printed (1-based i, residues 0..m-1) the
indices k_i = (i + n) mod 2n and k~_i = i mod n fall outside their ranges at i = n and i = 2n: an
exhaustive enumeration for n = 1..N finds the first. Corrected (k_i = ((i + n - 1) mod 2n) + 1,
k~_i = ((i - 1) mod n) + 1): the enumeration also checks that k_i pairs the real and imaginary
parts of one unit, and the real form on (Re z, Im z) and the real RNN of eq. 3 built on it are
compared with the complex modReLU and the complex RNN.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from orthoverify.backends import Backend
from orthoverify.claims._common import FLOAT_HP
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._effort import effort
from orthoverify.claims.unitary._shared import ALL, cases_modrelu, complex_input, sizes, unitary_cases, unitary_input
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure, agreement
from orthoverify.param import unitary as un


def fn_modrelu_indices(ctx: RunContext, *, convention: str) -> Outcome:
    """Every index of the real-space modReLU, for every i = 1..2n and n = 1..N: in range, and
    (for the corrected form) pairing i with the other part of the same complex unit."""
    top = effort(ctx).indices_max_n
    cases = 0
    for n in range(1, top + 1):
        idx = un.modrelu_real_indices(n, convention)  # type: ignore[arg-type]
        kmap = {i: k for i, k, _ in idx}
        for i, k, kt in idx:
            cases += 1
            bad = None
            if not 1 <= k <= 2 * n:
                bad = f"k_{i} = ({i} + {n}) mod {2 * n} = {k} is outside 1..{2 * n}"
            elif not 1 <= kt <= n:
                bad = f"k~_{i} = {i} mod {n} = {kt} is outside 1..{n}"
            elif convention == "corrected":
                unit = (i - 1) % n + 1
                if not (kmap[k] == i and k != i and kt == unit and (k - 1) % n + 1 == unit):
                    bad = f"k_{i} = {k} does not pair the real and imaginary parts of unit {unit}"
            if bad is not None:
                return Outcome(
                    passed=False,
                    cases=cases,
                    failure=({"n": n, "i": i, "convention": convention}, Measure(math.inf, bad)),
                    notes=f"first failure at n = {n}, i = {i}: {bad}",
                )
    return Outcome(passed=True, cases=cases, worst_ratio=0.0, notes=f"all indices of i = 1..2n, n = 1..{top}")


def replay_modrelu_indices(inputs: Mapping[str, Any], b: Backend) -> Measure:
    n, i = int(inputs["n"]), int(inputs["i"])
    conv = str(inputs.get("convention", "printed"))
    _, k, kt = un.modrelu_real_indices(n, conv)[i - 1]  # type: ignore[arg-type]
    ok = 1 <= k <= 2 * n and 1 <= kt <= n
    return Measure(0.0, "in range") if ok else Measure(math.inf, f"k_{i} = {k}, k~_{i} = {kt} (n = {n})")


def q_modrelu_real(b: Backend, case: Case) -> Measure:
    """The real-space form (corrected indices) on (Re z, Im z) against the complex case form."""
    z = complex_input(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    n = z.shape[0]
    real = un.modrelu_real(un.embed_vector(z, backend=b), bias, backend=b, convention="corrected")
    ref = un.embed_vector(un.modrelu(z, bias, backend=b, rule="mhammedi"), backend=b)
    return agreement(b, real, ref, 2 * n)


def q_modrelu_rnn(b: Backend, case: Case) -> Measure:
    """A modReLU uRNN step by step: the complex RNN against eq. 3's real RNN with the real-space form."""
    w = unitary_input(b, case)
    v = complex_input(b, case, "V")
    h0 = complex_input(b, case, "h0")
    xs = b.asarray(case["xs"], name="xs")
    bias = b.asarray(case["bias"], name="bias")
    n = w.shape[0]
    hc = un.complex_rnn(w, v, xs, h0, "modrelu", bias=bias, backend=b)
    hr = un.real_rnn(
        un.embed_matrix(w, backend=b),
        b.concat([v.re, v.im], axis=0),
        xs,
        un.embed_vector(h0, backend=b),
        "modrelu",
        bias=bias,
        backend=b,
    )
    return agreement(b, hr[-1], un.embed_vector(hc[-1], backend=b), 2 * n * int(xs.shape[0]))


def cases_modrelu_rnn(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in sizes(ctx):
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


MODRELU_REAL = Claim(
    id="unitary.modrelu_real",
    paper=PAPER,
    where="Mhammedi et al. Sec. 3, after eq. 4",
    kind="identity",
    statement=(
        "the real-space form of modReLU: [phi(a)]_i = (sqrt(a_i^2 + a_k_i^2) + b_k~_i) / sqrt(a_i^2 + a_k_i^2) a_i if "
        "that is > 0, else 0, with k_i = ((i + n) mod 2n) and k~_i = (i mod n) for all i in {1, ..., 2n}"
    ),
    checks=(
        FunctionCheck(
            "indices_as_printed",
            lambda ctx: fn_modrelu_indices(ctx, convention="printed"),
            ("sympy",),
            "exhaustive",
            "index k_i, k~_i in range",
            replay_fn=replay_modrelu_indices,
            exact=True,
        ),
    ),
    notes=(
        "With i in 1..2n and mod giving residues 0..m-1, k_n = 2n mod 2n = 0 and k~_n = k~_2n = 0 for every n: "
        "outside 1..2n and 1..n. The formulas are right for 0-based indices (i in 0..2n-1), or if 'mod' returns "
        "residues 1..m; the corrected claim states the 1-based form."
    ),
)

MODRELU_REAL_CORRECTED = Claim(
    id="unitary.modrelu_real.corrected",
    paper=PAPER,
    where="Mhammedi et al. Sec. 3, after eq. 4",
    kind="identity",
    corrects="unitary.modrelu_real",
    statement=(
        "with k_i = ((i + n - 1) mod 2n) + 1 and k~_i = ((i - 1) mod n) + 1 (i in 1..2n; equivalently the printed "
        "formulas with 0-based i), phi(Re z, Im z) = (Re modReLU(z), Im modReLU(z)), and the real RNN of eq. 3 "
        "with phi equals the modReLU uRNN"
    ),
    checks=(
        FunctionCheck(
            "indices",
            lambda ctx: fn_modrelu_indices(ctx, convention="corrected"),
            ("sympy",),
            "exhaustive",
            "index k_i, k~_i in range and pairing",
            replay_fn=replay_modrelu_indices,
            exact=True,
        ),
        PropertyCheck(
            "against_complex",
            q_modrelu_real,
            cases_modrelu,
            ALL,
            "||phi(a) - (Re, Im) modReLU(z)|| / (2n eps ||modReLU(z)||)",
        ),
        PropertyCheck(
            "rnn",
            q_modrelu_rnn,
            cases_modrelu_rnn,
            FLOAT_HP,
            "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)",
        ),
    ),
)

CLAIMS: list[Claim] = [MODRELU_REAL, MODRELU_REAL_CORRECTED]
