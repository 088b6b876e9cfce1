"""Both boundary rules of the case form against the ReLU form, on inputs crowded near and on
|z| + b = 0 (exactly there on Pythagorean moduli), where the two forms could differ, and a search
steering |z| + b towards 0 from both sides."""

from __future__ import annotations

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case
from orthoverify.engine.templates import Agreement
from orthoverify.param import unitary as un


def case_forms(b: Backend, case: Case) -> tuple[Array, Array]:
    """The case definition under both boundary rules: >= of Arjovsky et al., > of Mhammedi et al. eq. 4."""
    z = kit.complex_input(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    return (
        kit.parts(b, un.modrelu(z, bias, backend=b, rule="arjovsky")),
        kit.parts(b, un.modrelu(z, bias, backend=b, rule="mhammedi")),
    )


def relu_form(b: Backend, case: Case) -> tuple[Array, Array]:
    """ReLU(|z| + b) z / |z|, once for each boundary rule."""
    z = kit.complex_input(b, case, "z")
    f = kit.parts(b, un.modrelu_relu_form(z, b.asarray(case["bias"], name="bias"), backend=b))
    return f, f


MODRELU_FORMS = Agreement(
    case_forms, relu_form, "||case form - ReLU form|| / (n eps ||ReLU form||)", dim=kit.rows_of("z")
)


CLAIMS = kit.claim(
    id="unitary.modrelu",
    place=kit.URNN(section="3.2", also=(kit.ORNN(equation="4"),)),
    expected="verified",
    origin="catalogue",
    summary="modReLU's case form equals ReLU(|z| + b) z/|z|",
    kind="identity",
    statement=(
        "modReLU(z) = (|z| + b) z/|z| if |z| + b >= 0, else 0, equals ReLU(|z| + b) z/|z| "
        "(Mhammedi et al. eq. 4 writes > 0 for the first case)"
    ),
    checks=(
        MODRELU_FORMS.check("all_arithmetics", kit.cases_modrelu, ALL),
        MODRELU_FORMS.search("search", kit.modrelu_strategy, ("numpy-float64", "torch-float32")),
    ),
    notes=(
        "Both forms divide by |z|: at z = 0 they are undefined when b > 0 (no limit: the value's direction is z's), "
        "and orthoverify raises DomainError there; for b <= 0 both give 0. On |z| + b = 0 the two boundary rules "
        "agree (the value is 0 either way). The search steers |z| + b towards 0 from both sides."
    ),
)
