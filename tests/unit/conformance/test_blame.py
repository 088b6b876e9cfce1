"""Blame the operation (issue 27): an AD-mode failure of a map whose first-order derivatives pass
is attributed, by measurement, to the one torch operation whose reference formulation makes it
pass (conformance/blame.py, isolation/substitute.py)."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from orthoverify.conformance import blame, causes, checks_train, derivatives, validate
from orthoverify.conformance.kinds import KINDS
from orthoverify.engine.runner import RunResult
from orthoverify.isolation.substitute import SUBSTITUTIONS, make_substituted
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


U = "tests.planted.upstream_targets:"
FLOAT32 = ("gradient_float32", "jvp_float32", "second_ff", "second_ff_float32", "second_fr_float32")


@functools.cache
def _upstream(name: str) -> RunResult:
    return validate(U + name, kind="orthogonal-map", profile="quick", checks=list(FLOAT32))


def _blame(res: RunResult, check: str) -> dict[str, Any]:
    (b,) = [e.data["blame"] for e in _claim(res, check).evidence if "blame" in e.data]
    return dict(b)


@pytest.mark.slow
def test_a_float32_only_defect_of_an_operation_is_blamed_in_float32_with_the_workaround_measured() -> None:
    """upstream_targets.cayley_solve: torch's linalg.solve (planted in the target's process) saves
    bfloat16-rounded LU factors in float32. gradient_float32 fails where float64's gradient and the
    float32 forward pass; re-run with linalg.solve by lu_factor + lu_solve it passes on float32's
    own allowance, so blame names it. second_ff_float32 fails in float64 too (torch's nested
    forward-mode rule): it is not blamed again, but listed under second_ff's finding."""
    res = _upstream("cayley_solve")
    assert {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in res.claims} == dict.fromkeys(FLOAT32, "refuted")
    g = _blame(res, "gradient_float32")
    assert g["dtype"] == "float32" and g["operation"] == "torch.linalg.solve" and "lu_solve" in g["workaround"]
    assert g["ratio_before"] > THRESHOLD >= g["ratio_after"]
    assert all(r > THRESHOLD for op, r in g["ratios_after"].items() if op != "torch.linalg.solve")
    assert g["sibling"]["gradient"] <= THRESHOLD and all(r <= THRESHOLD for r in g["first_order"].values())
    assert "in float32" in g["cause"] and "not at fault" in _claim(res, "gradient_float32").evidence[0].notes
    ff = _blame(res, "second_ff_float32")
    assert ff["follows"] == "second_ff" and ff["sibling"]["second_ff"] > THRESHOLD and "ratios_after" not in ff
    assert _blame(res, "jvp_float32")["follows"] == "gradient_float32"  # measured at its case: it fails there
    got = [(f["check"], f["explains"], f.get("cause", "")) for f in res.meta["validate"]["findings"]]
    assert [(c, e) for c, e, _ in got] == [  # in plan order: the training checks come before second order
        ("gradient_float32", ["jvp_float32", "second_fr_float32"]),
        ("second_ff", ["second_ff_float32"]),
    ]
    assert "backward) in float32" in got[0][2] and "forward-over-forward" in got[1][2]


@pytest.mark.slow
def test_the_measured_workaround_passes_beside_the_same_upstream_defect() -> None:
    """upstream_targets.cayley_lu_solve: the same map on lu_factor + lu_solve, in a process with the
    same planted linalg.solve: every derivative check passes, float32 and float64."""
    res = _upstream("cayley_lu_solve")
    assert {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in res.claims} == dict.fromkeys(FLOAT32, "verified")


@pytest.mark.slow
def test_a_users_own_wrong_float32_rule_is_not_blamed_on_torch() -> None:
    """cayley_grad_through_bfloat16 rounds its own float32 upstream gradient through bfloat16: the
    substitutions are tried (the float64 gradient and float32 forward pass) and none makes it pass,
    so blame is measured, not matched: no operation is named, and the note says so."""
    res = _result("cayley_grad_through_bfloat16", "scaled-cayley", ("gradient_float32",))
    c = _claim(res, "gradient_float32")
    assert c.verdict == "refuted"
    b = _blame(res, "gradient_float32")
    assert "operation" not in b and "not_attributed" in b and b["sibling"]["gradient"] <= THRESHOLD
    assert set(b["ratios_after"]) == set(SUBSTITUTIONS) and all(r > THRESHOLD for r in b["ratios_after"].values())
    assert "No single torch operation explains it" in c.evidence[0].notes
    assert all("cause" not in f for f in res.meta["validate"]["findings"])


def test_every_lower_precision_derivative_check_is_blamed_against_its_float64_sibling() -> None:
    """Each lower-precision derivative check of checks_train (not the batch gradient) is blamed, and its sibling is
    the float64 check of the same mode."""
    kind = KINDS["orthogonal-map"]
    planned = [e.name for stage in (1, 3) for e in checks_train.plan(kind, None, stage=stage)]
    planned += [f"{w}_{d}" for w in ("gradient", "jvp") for d in derivatives.HALF]
    for name in planned:
        if name == "gradient_batch":
            assert name not in blame.BLAMED
            continue
        assert name in blame.BLAMED, name
        base, dtype = blame.split(name)
        assert name == f"{base}_{dtype}" and base in ("gradient", "jvp", *derivatives.SECOND_ORDER)
    assert blame.split("second_ff") == ("second_ff", "float64")


def _blamed_fake(checks: dict[str, dict[str, Any]]) -> Any:
    """A run result whose refuted checks carry the blame data given (only what causes.findings reads)."""
    claims = [
        SimpleNamespace(
            claim=SimpleNamespace(id=f"conformance.k.{check}"),
            verdict="refuted",
            evidence=[SimpleNamespace(backend="torch-float64-cpu", counterexample=object(), data={"blame": b})],
        )
        for check, b in checks.items()
    ]
    return SimpleNamespace(claims=claims)


def test_one_finding_per_measured_cause() -> None:
    """A later check blamed on an operation in a lower precision is a finding of its own; a check
    blame found to follow from another goes under that one's finding; the rest, float64 checks
    whatever their blame, under the first root (as before blame ran in float32)."""
    solve64 = {"operation": "torch.linalg.solve", "cause": "solve, ff"}
    solve32 = {"operation": "torch.linalg.solve", "dtype": "float32", "cause": "solve, float32"}
    got = causes.findings(
        _blamed_fake(
            {
                "second_ff": solve64,
                "second_fr": solve64,
                "second_rr": {"operation": "torch.linalg.inv", "cause": "inv"},  # float64: under the first root
                "gradient_float32": solve32,
                "jvp_float32": {"follows": "gradient_float32"},
                "second_ff_float32": {"follows": "second_ff"},
                "second_rr_float32": {"not_attributed": "none"},
            }
        )
    )
    assert [(f.check, f.explains, f.cause) for f in got] == [
        ("second_ff", ["second_fr", "second_rr", "second_ff_float32", "second_rr_float32"], "solve, ff"),
        ("gradient_float32", ["jvp_float32"], "solve, float32"),
    ]
