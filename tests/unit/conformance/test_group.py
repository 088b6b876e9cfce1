"""SO(n) and det (issue 27, conformance/checks_group.py): a map declaring group="SO(n)" gets the det
check, which passes a rotation and refutes an orthogonal map with det -1 that every other check passes;
the declaration's group crosses the process boundary as checked data."""

from __future__ import annotations

import pytest

from orthoverify.conformance import validate
from orthoverify.errors import InputError, OrthoverifyError
from orthoverify.isolation.declare import Declaration, declaration_from_data, make_declaration

T = "tests.planted.conformance_targets:"


def _from_data(data: dict[str, object]) -> Declaration:
    return declaration_from_data(data, lambda i, name: lambda p: None, lambda *a: None, lambda w: None)  # type: ignore[arg-type,return-value]


def test_an_unknown_group_is_refused_by_name() -> None:
    with pytest.raises(OrthoverifyError, match="SU"):
        make_declaration(group="SU(n)")
    with pytest.raises(InputError, match="group"):
        _from_data({"group": "SU(n)"})
    assert make_declaration(group="SO(n)").listing()["group"] == "SO(n)"
    assert _from_data({"group": "SO(n)"}).group == "SO(n)"
    assert "group" not in make_declaration().listing()  # nothing declared: the listing is as before


@pytest.mark.slow
def test_det_refutes_a_declared_rotation_that_returns_det_minus_one_and_passes_a_rotation() -> None:
    bad = validate(T + "cayley_so_reflected", kind="orthogonal-map", profile="quick", checks=["orthogonal", "det"])
    assert {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in bad.claims} == {"orthogonal": "verified", "det": "refuted"}
    good = validate(T + "cayley_so", kind="orthogonal-map", profile="quick", checks=["det"])
    assert [c.verdict for c in good.claims] == ["verified"]


def test_det_is_planned_only_where_so_n_is_declared() -> None:
    plain = validate(T + "cayley_lu", kind="orthogonal-map", profile="quick", checks=["output"])
    assert not any(c.claim.id.endswith(".det") for c in plain.claims)
    with pytest.raises(OrthoverifyError, match="no check det"):
        validate(T + "cayley_lu", kind="orthogonal-map", profile="quick", checks=["det"])


@pytest.mark.slow
def test_coverage_judges_reaching_exactly_the_declared_group() -> None:
    """A Cayley map reaches SO(n) only: declared SO(n) its coverage passes; declared O(n) it is refuted,
    with a det -1 target that L-BFGS does not reach as the counterexample."""
    so = validate(T + "cayley_so", kind="orthogonal-map", profile="quick", checks=["coverage"])
    assert [c.verdict for c in so.claims] == ["verified"]
    on = validate(T + "cayley_claims_o_n", kind="orthogonal-map", profile="quick", checks=["coverage"])
    (claim,) = on.claims
    assert claim.verdict == "refuted" and claim.counterexample is not None
    assert "declared O(n), but no det -1 target is reached" in claim.counterexample.value
