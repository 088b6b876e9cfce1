"""cayley.example_2x2: the printed 2x2 example, an orthogonal W with eigenvalues near -1 whose
Cayley parameter is A = [[0, 447.212], [-447.212, 0]].

Helfrich, Willmott, Ye (ICML 2018) Sec. 3.1. Compared: the printed a_12 and eigenvalues against
the inverse Cayley map of the printed W. Evidence: the exact value sqrt(199999) in SymPy, and the
same computation in float64 and at 50 digits, judged by the inverse map's condition number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.cayley import PAPER
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure, flag
from orthoverify.param import cayley as cy


def _example_w(b: Backend) -> Array:
    c = b.scalar("-0.99999") if not b.exact else sympy.Rational(-99999, 100000)
    s = b.sqrt(1 - c * c)
    return b.asarray([[c, -s], [s, c]]) if not b.exact else np.array([[c, -s], [s, c]], dtype=object)


def fn_example_2x2(ctx: RunContext) -> Outcome:
    """The printed W (entries -0.99999 and sqrt(1 - 0.99999^2)) and its Cayley parameter:
    eigenvalues -0.99999 +- sqrt(1 - 0.99999^2) i = -0.99999 +- 0.00447... i, and
    a_12 = sqrt(1 - c^2) / (1 + c) = sqrt(199999) = 447.2124..., which must round to the
    printed 447.212 (and a_21 = -a_12)."""
    b = ctx.backend
    w = _example_w(b)
    a = cy.inverse_cayley(w, backend=b)
    a12, a21 = a[0, 1], a[1, 0]
    s = w[1, 0]
    if b.exact:
        exact12 = sympy.sqrt(199999)
        same = sympy.simplify(a12 - exact12) == 0 and sympy.simplify(a21 + exact12) == 0
        v12 = float(sympy.N(a12, 30))
    else:
        same = True
        v12 = b.to_float(a12)
    vs = b.to_float(s)
    checks = {
        "a_12 rounds to 447.212": abs(v12 - 447.212) <= 0.0005,
        "a_21 = -a_12": b.exact or abs(b.to_float(a21) + v12) <= 1e-9 * v12,
        "imaginary part rounds to 0.00447": abs(vs - 0.00447) <= 0.000005,
        "exact value sqrt(199999)": same,
        "diagonal of A is zero": b.is_zero(a[0, 0]) or abs(b.to_float(a[0, 0])) <= 1e-9 * v12,
    }
    bad = [k for k, ok in checks.items() if not ok]
    note = f"a_12 = {v12:.10g}, sqrt(1 - 0.99999^2) = {vs:.10g}"
    if bad:
        return Outcome(
            False, 1, failure=({"c": "-0.99999"}, Measure(math.inf, f"{'; '.join(bad)} ({note})")), notes=note
        )
    ratio = None
    if not b.exact:
        err = abs(v12 - math.sqrt(199999)) / math.sqrt(199999)
        ratio = err / (2 * b.eps * 199999 * 2)  # the inverse map's condition number ~ (1 + a^2)/2
    return Outcome(True, 1, worst_ratio=ratio, notes=note)


def replay_example(inputs: Mapping[str, Any], b: Backend) -> Measure:
    w = _example_w(b)
    a = cy.inverse_cayley(w, backend=b)
    v = float(sympy.N(a[0, 1], 20)) if b.exact else b.to_float(a[0, 1])
    return flag(abs(v - 447.212) <= 0.0005, f"a_12 = {v}")


EXAMPLE_2X2 = Claim(
    id="cayley.example_2x2",
    paper=PAPER,
    where="Sec. 3.1",
    statement=(
        "The 2x2 orthogonal W = [[-0.99999, -sqrt(1 - 0.99999^2)], [sqrt(1 - 0.99999^2), -0.99999]], with "
        "eigenvalues about -0.99999 +- 0.00447i, has Cayley parameter A = [[0, 447.212], [-447.212, 0]]"
    ),
    kind="identity",
    checks=(
        FunctionCheck(
            "exact_value",
            fn_example_2x2,
            EXACT,
            "symbolic",
            "a_12 vs printed",
            threshold=None,
            replay_fn=replay_example,
        ),
        FunctionCheck(
            "float_and_high_precision",
            fn_example_2x2,
            ("numpy-float64", "mpmath"),
            "float",
            "relative error of a_12 / ((1 + a^2) eps)",
            replay_fn=replay_example,
        ),
    ),
    notes=(
        "Exactly, a_12 = sqrt(1 - c^2)/(1 + c) = sqrt((1 - c)/(1 + c)) = sqrt(199999) = 447.21247... for "
        "c = -0.99999: the printed 447.212 is its correct rounding, with the sign layout as printed. The "
        "inverse map's condition number here is (1 + a^2)/2 ~ 1e5, which float64 absorbs easily."
    ),
)


CLAIMS: list[Claim] = [EXAMPLE_2X2]
