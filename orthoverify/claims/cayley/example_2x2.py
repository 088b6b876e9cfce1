"""The one printed case, exactly (sqrt(199999)) and in float over the inverse map's conditioning."""

from __future__ import annotations

import math

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.cayley import claim
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import listed
from orthoverify.param import cayley as cy


def _example_w(b: Backend, case: Case) -> Array:
    """The printed W for c = case["c"] (-0.99999), parsed by b (strictly, never evaluated)."""
    c = b.asarray([case["c"]], name="c")[0]
    s = b.sqrt(1 - c * c)
    return np.array([[c, -s], [s, c]], dtype=object) if b.exact else b.asarray([[c, -s], [s, c]])


def printed_parameter(b: Backend, case: Case) -> Measure:
    """The printed roundings of W's eigenvalues and Cayley parameter, a_12 exactly sqrt(199999); in
    float, a_12's relative error over (1 + a^2) eps (the inverse map's condition number ~ (1 + a^2)/2)."""
    w = _example_w(b, case)
    a = cy.inverse_cayley(w, backend=b)
    a12, a21 = a[0, 1], a[1, 0]
    root = sympy.sqrt(199999)
    same = not b.exact or (sympy.simplify(a12 - root) == 0 and sympy.simplify(a21 + root) == 0)
    v12 = float(sympy.N(a12, 30)) if b.exact else b.to_float(a12)
    vs = b.to_float(w[1, 0])
    lines = {
        "a_12 rounds to 447.212": abs(v12 - 447.212) <= 0.0005,
        "a_21 = -a_12": b.exact or abs(b.to_float(a21) + v12) <= 1e-9 * v12,
        "imaginary part rounds to 0.00447": abs(vs - 0.00447) <= 0.000005,
        "exact value sqrt(199999)": same,
        "diagonal of A is zero": b.is_zero(a[0, 0]) or abs(b.to_float(a[0, 0])) <= 1e-9 * v12,
    }
    note = f"a_12 = {v12:.10g}, sqrt(1 - 0.99999^2) = {vs:.10g}"
    bad = [k for k, ok in lines.items() if not ok]
    if bad:
        return Measure(math.inf, f"{'; '.join(bad)} ({note})", note, error=math.inf)
    if b.exact:
        return Measure(0.0, note, note, error=0.0)
    err = abs(v12 - math.sqrt(199999)) / math.sqrt(199999)
    return Measure(err / (2 * b.eps * 199999 * 2), note, note)


PRINTED = listed({"c": "-0.99999"})
_FLOAT = "relative error of a_12 / ((1 + a^2) eps)"
CLAIMS: list[Claim] = [
    claim(
        id="cayley.example_2x2",
        place=Place(section="3.1"),
        expected="verified",
        origin="catalogue",
        summary="the 2x2 example's Cayley preimage has an entry of about 447.212",
        statement=(
            "The 2x2 orthogonal W = [[-0.99999, -sqrt(1 - 0.99999^2)], [sqrt(1 - 0.99999^2), -0.99999]], with "
            "eigenvalues about -0.99999 +- 0.00447i, has Cayley parameter A = [[0, 447.212], [-447.212, 0]]"
        ),
        kind="identity",
        checks=(
            PropertyCheck("exact", printed_parameter, PRINTED, EXACT, "a_12 vs printed"),
            PropertyCheck("float", printed_parameter, PRINTED, ("numpy-float64", "mpmath"), _FLOAT),
        ),
        notes=(
            "Exactly, a_12 = sqrt(1 - c^2)/(1 + c) = sqrt((1 - c)/(1 + c)) = sqrt(199999) = 447.21247... for "
            "c = -0.99999: the printed 447.212 is its correct rounding, with the sign layout as printed. The "
            "inverse map's condition number here is (1 + a^2)/2 ~ 1e5, which float64 absorbs easily."
        ),
    )
]
