"""With a bias b > 0 modReLU's tangential slope 1 + b/|z| exceeds 1, so hand-built exact cases
(W = 1, h_0 = 2, c = -1, b = 1 doubles the gradient per step) and a search refute the printed
claim; corrected (every b_i <= 0), the hand-built cases sit on the kink and on dead units, where
the slope bound is tight."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import sympy

from orthoverify.claims._common import FLOAT_HP
from orthoverify.claims.unitary import _gradient as gb
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._gradient_cases import cycled
from orthoverify.engine.checks import Case, Check, RunContext, SymbolicCheck
from orthoverify.engine.templates import listed

MODRELU_KINDS = ("complex", "urnn", "real", "complex-per-step", "identity", "structured-unitary")


def _hand(name: str, w: list[list[str]], h0: list[str], c: list[str], bias: str, t_len: int, g: list[str]) -> Case:
    """A hand-built modReLU case (n = 1, twin N = 2) whose moduli stay rational: exact in SymPy."""
    case = {"kind": name, "act": "modrelu", "W": w, "V": [["0"], ["0"]], "xs": [["0"]] * t_len, "h0": h0, "c": c}
    return {**case, "bias": [bias], "g": g}


_ID2 = [["1", "0"], ["0", "1"]]
_ROT = [["3/5", "-4/5"], ["4/5", "3/5"]]  # the twin of W = 3/5 + 4i/5, |W| = 1

MODRELU_GROWTH = _hand("stationary, b = 1", _ID2, ["2", "0"], ["-1", "0"], "1", 10, ["0", "1"])
"""W = 1, h0 = 2, c = -1, b = 1: z_k = 1 and h_k = 2 for every k, the tangential slope is
1 + b/|z| = 2 at every step, so ||dC/dh_0|| = 2^10 ||dC/dh_T|| for g = (0, 1) (i.e. g = i)."""

HAND_PRINTED = (
    _hand("one step, b = 1", _ID2, ["1", "0"], ["0", "0"], "1", 1, ["0", "1"]),
    MODRELU_GROWTH,
    _hand("rotation, b = 1", _ROT, ["3", "4"], ["0", "0"], "1", 3, ["1", "2"]),
)

HAND_CORRECTED = (
    _hand("rotation, b = 0 (identity)", _ROT, ["3", "4"], ["0", "0"], "0", 3, ["1", "2"]),
    _hand("rotation, b = -1", _ROT, ["3", "4"], ["0", "0"], "-1", 3, ["1", "2"]),
    _hand("rotation, b = -5 (kink |z| + b = 0)", _ROT, ["3", "4"], ["0", "0"], "-5", 2, ["1", "2"]),
    _hand("rotation, b = -7 (dead)", _ROT, ["3", "4"], ["0", "0"], "-7", 2, ["1", "2"]),
    _hand("z = 0, b = 0", _ID2, ["0", "0"], ["0", "0"], "0", 2, ["1", "2"]),
    _hand("z = 0, b = -1", _ID2, ["0", "0"], ["0", "0"], "-1", 2, ["1", "2"]),
)


def sym_modrelu_jacobian(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """modReLU on its active branch, f(z) = (|z| + b) z / |z| in real coordinates z = (x, y): SymPy's
    Jacobian J is symmetric, J z = z (eigenvalue 1, radial) and J z_perp = (1 + b/|z|) z_perp
    (tangential, z_perp = (-y, x))."""
    x, y = sympy.symbols("x y", positive=True)
    bias = sympy.Symbol("b", real=True)
    r = sympy.sqrt(x**2 + y**2)
    f = sympy.Matrix([(r + bias) / r * x, (r + bias) / r * y])
    jac = f.jacobian([x, y])
    z, zp = sympy.Matrix([x, y]), sympy.Matrix([-y, x])
    yield "J - J'", jac - jac.T
    yield "J z - z", jac * z - z
    yield "J z_perp - (1 + b/|z|) z_perp", jac * zp - (1 + bias / r) * zp


def checks(corrected: bool) -> tuple[Check, ...]:
    """The same evidence for both: biases of both signs as printed, every b_i <= 0 corrected."""
    modes, small = (("nonpositive", "zero"), False) if corrected else (("mixed", "positive"), True)

    def cases(ctx: RunContext) -> Iterator[Case]:
        return cycled(ctx, MODRELU_KINDS, act="modrelu", modes=modes, small=small)

    return (
        gb.bound_search("modrelu", -2.0, 0.0 if corrected else 2.0),
        gb.bound_check("witness", listed(*(HAND_CORRECTED if corrected else HAND_PRINTED)), ("sympy", "mpmath")),
        gb.bound_check("float", cases, FLOAT_HP if corrected else ("numpy-float64", "torch-float64")),
        gb.autograd_check(cases),
        gb.trajectory_check("modrelu", "nonpositive" if corrected else "positive", 8 if corrected else 4),
        SymbolicCheck("symbolic", sym_modrelu_jacobian, "exact difference"),
    )


CLAIMS = kit.twins(
    "unitary.gradient_bound_modrelu",
    place=kit.URNN(section="1", equation="5", also=(kit.URNN(section="3.2"),)),
    expected="refuted",
    origin="added",
    summary="the gradient bound carries over to modReLU",
    corrected_summary="the gradient bound holds for modReLU with biases <= 0",
    kind="bound",
    printed=(
        "the bound of eq. 5, ||dC/dh_t|| <= ||dC/dh_T|| for all t < T, carries over to the modReLU the uRNN uses "
        "(Sec. 3.2: sigma(z) = ReLU(|z| + b) z / |z| per complex unit, with a learned bias b of either sign)"
    ),
    corrected=(
        "with norm-preserving W_k and modReLU with every bias b_i <= 0, ||dC/dh_t|| <= ||dC/dh_T|| for all t < T"
    ),
    checks=checks,
    printed_notes=(
        "Where |z| + b > 0, modReLU's real 2 x 2 Jacobian is J = I + (b/|z|)(I - uu'), u = z/|z|: symmetric, "
        "eigenvalue 1 along z and 1 + b/|z| across it. With b > 0 the tangential slope exceeds 1, and the step "
        "dC/dh_k = W_k' J_{k+1} dC/dh_{k+1} stretches the tangential part of the gradient by it: W = 1, h_0 = 2, "
        "c = -1, b = 1 keeps z_k = 1 and multiplies ||dC/dh|| by 2 per step (2^T over T steps, exactly), an "
        "exploding gradient eq. 5 says cannot happen. Eq. 4 holds with D_{k+1} = J_{k+1}, but ||J_{k+1}|| = "
        "1 + b/|z| > 1 makes it the useless bound of Sec. 1 ('lambda > 1'). The paper's initialisation b = 0 "
        "(Sec. 3.4) is safe, a learned b > 0 is not. "
    )
    + gb.RATIO_NOTE,
    corrected_notes=(
        "Proof: with b <= 0 and |z| + b > 0, 1 + b/|z| lies in [0, 1), so J = I + (b/|z|)(I - uu') has norm 1; "
        "where |z| + b < 0 (or z = 0 with b < 0) J = 0; at z = 0 with b = 0 modReLU is the identity near 0 "
        "(J = I); at the kink |z| + b = 0 the slope along z is 1/2 (autograd of the ReLU form). So ||J|| <= 1 "
        "everywhere, and ||dC/dh_k|| = ||J_{k+1} dC/dh_{k+1}|| <= ||dC/dh_{k+1}|| for orthogonal W_k. "
    )
    + gb.RATIO_NOTE,
)
