"""The module's life in training: weight decay, state_dict round trips, dtype casts. Correct
planted modules and orthoverify's own pass; each broken one is caught by the check that names its
defect; torch's Householder parametrisation degenerates under weight decay, and that replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from orthoverify.conformance import _evidence, lifecycle, validate
from orthoverify.conformance import checks as ck
from orthoverify.conformance.adapters import load_target
from orthoverify.engine import write_json
from orthoverify.engine.model import decide
from orthoverify.engine.replay import replay_from_file

R = "tests.reach_targets:"
CHECKS = ("weight_decay", "state_dict", "dtype_cast")


def life(spec: str, kind: str | None = None) -> dict[str, str]:
    t = load_target(spec, kind)
    ctx = ck.Ctx(t, ("float32", "float64"), profile="quick")
    return {
        name: decide(_evidence(ctx, f"conformance.{t.kind.name}.{name}", name, fn))
        for name, _k, _s, fn in lifecycle.plan(t, None)
    }


def test_a_correct_module_passes_every_lifecycle_check() -> None:
    assert life(R + "reflections_module", "orthogonal-map") == dict.fromkeys(CHECKS, "verified")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "caught_by"),
    [
        (R + "reflections_module_integer_signs", "weight_decay"),
        (R + "reflections_module_base_not_saved", "state_dict"),
        (R + "reflections_module_plain_attribute", "dtype_cast"),
    ],
)
def test_each_broken_module_is_caught_by_its_check(spec: str, caught_by: str) -> None:
    v = life(spec, "orthogonal-map")
    assert v[caught_by] == "refuted", v
    assert {k for k, x in v.items() if x != "verified"} == {caught_by}, v  # localised


@pytest.mark.slow
def test_torch_householder_parametrisation_degenerates_under_weight_decay(tmp_path: Path) -> None:
    """torch.nn.utils.parametrizations.orthogonal(orthogonal_map="householder") multiplies by
    int(diag(X)), which starts at +-1: one SGD step with weight decay makes it 0 (zero columns)."""
    r = validate("torch-orthogonal-householder", profile="quick", dtypes=["float32"])
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    wd = by["weight_decay"]
    assert wd.verdict == "refuted" and wd.counterexample is not None
    assert "after step 1 of SGD" in wd.counterexample.value and "zero column" in wd.counterexample.value
    assert by["state_dict"].verdict == by["dtype_cast"].verdict == "verified"
    data = wd.evidence[0].data
    assert data["smallest_failing_n"] == 3 and data["mode"].startswith("optimiser steps with weight decay")
    assert data["replay"].endswith("conformance.orthogonal-map.weight_decay --target torch-orthogonal-householder")
    path = write_json(r, tmp_path / "oh.json")
    assert replay_from_file(
        path, "conformance.orthogonal-map.weight_decay", target="torch-orthogonal-householder"
    ).reproduced


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["orthoverify-householder", "orthoverify-scaled-cayley", "orthoverify-svd", "orthoverify-urnn"]
)
def test_own_modules_pass_every_lifecycle_check(name: str) -> None:
    assert life(name) == dict.fromkeys(CHECKS, "verified")


def test_an_undeclared_cast_that_fails_is_not_applicable() -> None:
    """ScaledCayleyOrthogonal refuses float16 (orthoverify's float32/float64 only): not applicable, not a defect."""
    t = load_target("orthoverify-scaled-cayley")
    ctx = ck.Ctx(t, ("float32",))
    c = lifecycle.q_dtype_cast(
        ctx, {"n": ck.np.array([3.0]), "cast": ck.np.array([2.0]), "seed": ck.np.array([0.0])}, "float32"
    )
    assert ck.math.isnan(c.ratio) and "not declared" in c.display


def test_the_invariant_names_zero_and_repeated_columns() -> None:
    import torch

    from orthoverify.conformance.declare import make_declaration

    d = make_declaration(module=lambda n: torch.nn.Linear(n, n))
    w = torch.eye(3)
    assert lifecycle.invariant(d, w)[0] == 0
    r, text = lifecycle.invariant(d, torch.stack([w[0], w[0], w[2]], 1))
    assert r == float("inf") and "1 pair(s) of repeated columns" in text
    r, text = lifecycle.invariant(d, w * torch.tensor([1.0, 0.0, 1.0]))
    assert r == float("inf") and "1 zero column(s)" in text
    s = make_declaration(module=lambda n: torch.nn.Linear(n, n), sigma=(0.5, 2.0))
    assert lifecycle.invariant(s, 1.5 * w)[0] == 0 and lifecycle.invariant(s, 3 * w)[0] > 30


def test_to_device_runs_cpu_to_cpu_without_a_gpu() -> None:
    """The .to(device) check (planned only with a GPU) exercised with cpu as the other device."""
    import torch

    t = load_target(R + "reflections_module", "orthogonal-map")
    assert ("to_device" in {p[0] for p in lifecycle.plan(t, "cuda")}) is True
    assert lifecycle.plan(load_target("tests.conformance_targets:householder", "householder-product"), "cuda") == []
    ctx = ck.Ctx(t, ("float32",), profile="quick", other_device="cpu")
    ev = lifecycle.check_to_device(ctx)[0]
    assert ev.passed and ev.cases == 2, ev.notes  # quick: n = 3, 6
    assert torch.cuda.is_available() or "to_device" not in {p[0] for p in plan_of(t)}


def plan_of(t: ck.Target) -> list[tuple[str, str, str, object]]:
    from orthoverify.conformance import _plan

    return list(_plan(t.kind.name, ("float32",), False, "cpu", t))
