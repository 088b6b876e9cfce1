"""Second-order derivatives in three modes, torch.func.vmap, half precision and a declared second
entry point: correct planted targets pass, each broken one is caught by the check that names its
defect, torch's householder_product is refuted on forward-over-forward and the finding replays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import RESULT_FAMILIES
from orthoverify.conformance import _evidence, validate
from orthoverify.conformance.context import session
from orthoverify.conformance.derivatives import quantity
from orthoverify.conformance.planning import plan_checks
from orthoverify.conformance.reach import plan
from orthoverify.conformance.search import scan, sized_cases
from orthoverify.conformance.target import load_target
from orthoverify.engine import write_json
from orthoverify.engine.model import decide
from orthoverify.engine.replay import replay_from_file
from orthoverify.tolerance import THRESHOLD
from tests.upstream import fixed_upstream, skip_if_fixed_upstream

REPLAY = {"modules": CLAIM_MODULES, "families": RESULT_FAMILIES}  # what `orthoverify replay` passes

R = "tests.planted.reach_targets:"
T = "tests.planted.conformance_targets:"


def reach_verdicts(spec: str, kind: str | None = None, only: tuple[str, ...] = ()) -> dict[str, str]:
    """The verdicts of the checks of orthoverify.conformance.reach alone (quick profile)."""
    t = load_target(spec, kind)
    ctx = session(t, ("float32", "float64"), profile="quick")
    mine = {e.name for e in plan([], t.kind, t, None)}
    out = {}
    for e in plan_checks(t.kind.name, ("float32", "float64"), t.inverse is not None, "cpu", t):  # blame's quantities
        if e.name in mine and (not only or e.name in only):
            out[e.name] = decide(_evidence(ctx, f"conformance.{t.kind.name}.{e.name}", e.name, e.run))
    return out


SECOND = ("second_ff", "second_fr", "second_rr")


@pytest.mark.parametrize(
    ("spec", "kind"),
    [(T + "householder", "householder-product"), (T + "svd", "svd-parametrisation"), (R + "householder_vmap", None)],
)
def test_correct_targets_pass_every_mode(spec: str, kind: str | None) -> None:
    v = reach_verdicts(spec, kind or "householder-product")
    assert set(SECOND) <= set(v) and set(v.values()) == {"verified"}, v


def test_a_wrong_second_order_rule_is_caught_by_the_second_order_checks() -> None:
    """First-order rules right (gradient and jvp verified), second derivative zero."""
    v = reach_verdicts(R + "householder_flat_second_order", "householder-product", SECOND)
    assert v["second_ff"] == v["second_fr"] == "refuted", v
    assert v["second_rr"] in ("refuted", "unsupported"), v  # torch refuses the detached double backward
    t = load_target(R + "householder_flat_second_order", "householder-product")
    ctx = session(t, ("float64",), profile="quick")
    for check in ("gradient", "jvp"):
        q = quantity(check)
        assert scan(ctx, check, q, sized_cases(ctx, check, scales=(1.0,), dtypes=("float64",)))[0].passed


def test_torch_householder_product_is_refuted_on_forward_over_forward(tmp_path: Path) -> None:
    """A known upstream defect (tests/upstream.py, pytorch/pytorch#196698): nested forward mode
    through householder_product is wrong; the other modes and every first-order check are right.
    The counterexample replays. Once torch fixes it, this test skips with "fixed upstream"."""
    r = validate("torch-householder-product", profile="quick", dtypes=["float64"])
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    skip_if_fixed_upstream(fixed_upstream("torch-householder-product", {k: c.verdict for k, c in by.items()}))
    assert by["second_ff"].verdict == "refuted", by["second_ff"].evidence[0].notes
    assert {k for k, c in by.items() if c.verdict != "verified"} == {"second_ff"}
    ev = by["second_ff"].evidence[0]
    assert ev.worst_ratio is not None and ev.worst_ratio > 1e10
    assert ev.data["mode"].startswith("forward-over-forward") and ev.data["series"]["points"]
    cx = by["second_ff"].counterexample
    assert cx is not None and len(cx.inputs["U"]) == ev.data["smallest_failing_n"] == 2  # the smallest case
    path = write_json(r, tmp_path / "hp.json")
    assert replay_from_file(
        path, "conformance.householder-product.second_ff", target="torch-householder-product", **REPLAY
    ).reproduced


def test_a_mode_without_a_rule_is_unsupported() -> None:
    """An old-style autograd.Function (no setup_context) has no functorch rule: the call raises, so the
    mode is unsupported (not refuted), with the exception's first line."""
    t = load_target(T + "cayley_missing_gradient_term", "scaled-cayley")
    ctx = session(t, ("float64",), profile="quick")
    ev = next(e for e in plan([], t.kind, t, None) if e[0] == "second_ff")[3](ctx)[0]
    assert ev.cases == 0 and not ev.passed and ev.counterexample is None and decide([ev]) == "unsupported"
    assert "setup_context" in ev.data["unsupported"] and "Unsupported" in ev.notes


def test_vmap_mixing_batch_members_is_caught_by_vmap_only() -> None:
    v = reach_verdicts(R + "householder_vmap_mixes_batch", "householder-product")
    assert v["vmap"] == "refuted", v
    assert v["second_rr"] == "verified", v
    assert v["second_ff"] == v["second_fr"] == "unsupported", v  # no forward-mode rule: the call raises


def test_vmap_is_planned_only_where_declared() -> None:
    assert "vmap" not in reach_verdicts(T + "householder", "householder-product", ("vmap",))
    assert reach_verdicts(R + "householder_vmap", "householder-product", ("vmap",)) == {"vmap": "verified"}


def test_half_precision_declared_and_refused_is_a_defect() -> None:
    assert reach_verdicts(R + "householder_half", "householder-product", ("low_precision",)) == {
        "low_precision": "verified"
    }
    v = reach_verdicts(R + "householder_half_documented_only", "householder-product", ("low_precision",))
    assert v == {"low_precision": "refuted"}


def test_half_precision_is_judged_on_its_own_unit_roundoff() -> None:
    from orthoverify.conformance import modes

    t = load_target(R + "householder_half", "householder-product")
    ctx = session(t, ("float64",))
    params = t.kind.draw(np.random.default_rng(0), 4, 1.0)
    for dtype, u in (("float16", 2.0**-11), ("bfloat16", 2.0**-8)):
        c = modes.q_low_precision(ctx, params, dtype)
        assert c.ratio <= THRESHOLD and f"u = {u:.3g}" in c.display, c.display


def test_two_entry_points_that_disagree_are_caught() -> None:
    assert reach_verdicts(R + "flow_matrix", "householder-product", ("entry_points",)) == {"entry_points": "verified"}
    v = reach_verdicts(R + "flow_matrix_transposed_forward", "householder-product", ("entry_points",))
    assert v == {"entry_points": "refuted"}
