"""unitary.init_silent (added): with zero biases the modReLU is the identity.

Arjovsky et al. (ICML 2016) Sec. 3.4 gives this as the reason for zero biases ('the input of the
ReLU is always positive'). Compared: modReLU_0(z) with z on the modReLU inputs (float, 50 digits,
exact).
"""

from __future__ import annotations

from collections.abc import Iterator

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._shared import complex_input, modrelu_inputs, parts, rows_of
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Agreement
from orthoverify.param import unitary as un


def silent(b: Backend, case: Case) -> Array:
    """modReLU with zero biases."""
    z = complex_input(b, case, "z")
    return parts(b, un.modrelu(z, b.zeros(z.shape[0]), backend=b))


def identity(b: Backend, case: Case) -> Array:
    return parts(b, complex_input(b, case, "z"))


SILENT = Agreement(silent, identity, "||modReLU_0(z) - z|| / (n eps ||z||)", dim=rows_of("z"))


def cases_silent(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for case in modrelu_inputs(ctx, rng, n):
            yield {"z_re": case["z_re"], "z_im": case["z_im"]}


INIT_SILENT = Claim(
    id="unitary.init_silent",
    paper=PAPER,
    place=Place(source="Arjovsky et al.", section="3.4"),
    expected="verified",
    origin="added",
    summary="zero biases make modReLU the identity",
    kind="identity",
    statement="with biases initialised to 0 the modReLU is silent: modReLU(z) = z for every z != 0 (|z| + 0 >= 0)",
    checks=(SILENT.check("all_arithmetics", cases_silent, ALL),),
    notes="Added: the reason Sec. 3.4 gives for zero biases ('the input of the ReLU is always positive').",
)

CLAIMS: list[Claim] = [INIT_SILENT]
