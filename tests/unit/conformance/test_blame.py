"""Blame the operation (issue 27): an AD-mode failure of a map whose first-order derivatives pass
is attributed, by measurement, to the one torch operation whose reference formulation makes it
pass (conformance/blame.py, conformance/substitute.py)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch

from orthoverify.conformance import validate
from orthoverify.conformance.substitute import SUBSTITUTIONS, make_substituted
from orthoverify.engine.runner import RunResult
from orthoverify.tolerance import THRESHOLD

T = "tests.planted.conformance_targets:"


def _ratio(got: torch.Tensor, ref: torch.Tensor) -> float:
    n = ref.shape[-1]
    return float(torch.linalg.norm(got - ref)) / (n * 2.0**-53 * float(torch.linalg.norm(ref)))


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("torch.linalg.solve", lambda a, b, tau: torch.linalg.solve(a, b)),
        ("torch.linalg.solve", lambda a, b, tau: torch.linalg.solve(a, b[..., 0])),  # B a vector
        ("torch.linalg.solve", lambda a, b, tau: torch.linalg.solve(a, b.mT, left=False)),
        ("torch.linalg.inv", lambda a, b, tau: torch.linalg.inv(a)),
        ("torch.linalg.inv", lambda a, b, tau: a.inverse()),
        ("torch.linalg.householder_product", lambda a, b, tau: torch.linalg.householder_product(b, tau)),
    ],
)
def test_each_reference_formulation_computes_the_same_matrix(op: str, call: Any) -> None:
    """The substituted operation gives the same values (test ratio) as torch's own, batched too."""
    rng = np.random.default_rng(0)
    a = torch.as_tensor(rng.standard_normal((2, 5, 5))) + 5 * torch.eye(5, dtype=torch.float64)
    b = torch.as_tensor(rng.standard_normal((2, 5, 3)))
    tau = torch.as_tensor(rng.uniform(0.5, 1.5, (2, 3)))
    run = make_substituted(lambda: call(a, b, tau))
    plain, swapped = run(), run(substitute=op)
    assert plain.shape == swapped.shape
    assert _ratio(swapped, plain) <= THRESHOLD
    assert op in SUBSTITUTIONS


def test_an_unknown_substitution_is_refused() -> None:
    with pytest.raises(LookupError):
        make_substituted(lambda: None)(substitute="torch.linalg.qr")


@functools.cache
def _result(name: str, kind: str, checks: tuple[str, ...]) -> RunResult:
    return validate(T + name, kind=kind, profile="quick", checks=list(checks))


def _claim(res: RunResult, check: str) -> Any:
    return next(c for c in res.claims if c.claim.id.endswith("." + check))


@pytest.mark.slow
def test_a_solve_based_cayley_map_is_blamed_on_linalg_solve_with_the_workaround_measured() -> None:
    res = _result("cayley_textbook", "orthogonal-map", ("second_ff",))
    c = _claim(res, "second_ff")
    assert c.verdict == "refuted"  # the map as executed is wrong: the finding stays
    blame = next(e.data["blame"] for e in c.evidence if "blame" in e.data)
    assert blame["operation"] == "torch.linalg.solve"
    assert blame["ratio_before"] > THRESHOLD >= blame["ratio_after"]
    assert all(r > THRESHOLD for op, r in blame["ratios_after"].items() if op != "torch.linalg.solve")
    assert all(r <= THRESHOLD for r in blame["first_order"].values())
    assert "lu_solve" in blame["workaround"] and "not at fault" in c.evidence[0].notes
    (finding,) = res.meta["validate"]["findings"]
    assert finding["check"] == "second_ff" and "torch.linalg.solve" in finding["cause"]


@pytest.mark.slow
def test_the_same_map_on_lu_solve_passes_second_ff() -> None:
    assert _claim(_result("cayley_lu", "orthogonal-map", ("second_ff",)), "second_ff").verdict == "verified"


@pytest.mark.slow
def test_a_wrong_forward_mode_rule_of_the_users_own_is_not_blamed_on_torch() -> None:
    """cayley_wrong_jvp's jvp rule has the wrong sign: no substitution fixes it, so no operation is named;
    its second_ff failure follows from a failing jvp, so no substitution is even tried."""
    res = _result("cayley_wrong_jvp", "scaled-cayley", ("jvp", "second_ff"))
    jvp = next(e.data["blame"] for e in _claim(res, "jvp").evidence if "blame" in e.data)
    assert "operation" not in jvp and "not_attributed" in jvp
    ff = next(e.data["blame"] for e in _claim(res, "second_ff").evidence if "blame" in e.data)
    assert "operation" not in ff and "jvp" in ff["not_tried"]
    assert all("cause" not in f for f in res.meta["validate"]["findings"])


@pytest.mark.slow
def test_torch_householder_product_under_nested_forward_mode_is_named_with_the_explicit_product_measured() -> None:
    """The other nested-forward-mode defect of tests/upstream.py: blame names householder_product,
    not solve, for torch's Householder parametrisation (the attribution is measured, not looked up)."""
    res = validate("torch-orthogonal-householder", profile="quick", checks=["second_ff"])
    blame = next(e.data["blame"] for c in res.claims for e in c.evidence if "blame" in e.data)
    assert blame["operation"] == "torch.linalg.householder_product"
    assert blame["ratio_before"] > THRESHOLD >= blame["ratio_after"]
