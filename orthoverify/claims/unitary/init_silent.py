"""Checked on the modReLU inputs (many units near and on |z| + b = 0), where a silent modReLU
would first stop being the identity."""

from __future__ import annotations

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case
from orthoverify.engine.templates import Agreement, drawn
from orthoverify.param import unitary as un


def silent(b: Backend, case: Case) -> Array:
    """modReLU with zero biases."""
    z = kit.complex_input(b, case, "z")
    return kit.parts(b, un.modrelu(z, b.zeros(z.shape[0]), backend=b))


def identity(b: Backend, case: Case) -> Array:
    return kit.parts(b, kit.complex_input(b, case, "z"))


SILENT = Agreement(silent, identity, "||modReLU_0(z) - z|| / (n eps ||z||)", dim=kit.rows_of("z"))
INPUTS = drawn(lambda ctx, rng, n: ({"z_re": c["z_re"], "z_im": c["z_im"]} for c in kit.modrelu_inputs(ctx, rng, n)))

CLAIMS = kit.claim(
    id="unitary.init_silent",
    place=kit.URNN(section="3.4"),
    expected="verified",
    origin="added",
    summary="zero biases make modReLU the identity",
    kind="identity",
    statement="with biases initialised to 0 the modReLU is silent: modReLU(z) = z for every z != 0 (|z| + 0 >= 0)",
    checks=(SILENT.check("all_arithmetics", INPUTS, ALL),),
    notes="Added: the reason Sec. 3.4 gives for zero biases ('the input of the ReLU is always positive').",
)
