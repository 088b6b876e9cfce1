"""`orthoverify validate`: correct implementations pass, each deliberately broken one is caught by
the check meant for it, targets that raise, hang, return the wrong shape or NaN are recorded
(never crash orthoverify), the built-in adapters run, and every finding replays. The pytest plugin:
tests/system/test_readme.py."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import RESULT_FAMILIES, main
from orthoverify.conformance import ADAPTERS, validate
from orthoverify.engine import write_json
from orthoverify.engine.replay import replay_from_file
from orthoverify.tolerance import THRESHOLD
from tests.upstream import DEFECTS, expected_upstream, fixed_upstream, skip_if_fixed_upstream

REPLAY = {"modules": CLAIM_MODULES, "families": RESULT_FAMILIES}  # what `orthoverify replay` passes

T = "tests.planted.conformance_targets:"


def verdicts(spec: str, kind: str | None = None, **kw: object) -> dict[str, str]:
    r = validate(spec, kind=kind, profile="quick", **kw)  # type: ignore[arg-type]
    return {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in r.claims}


# Correct and broken implementations of every kind, each check's verdict pinned: tests/planted/judge_planted.py
# (run by tests/planted/test_judge_planted.py).


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (T + "raises", "raised: RuntimeError: this target always fails"),
        (T + "wrong_shape", "shape: returned shape (3, 3), expected (2, 2)"),
        (T + "returns_nan", "non-finite"),
        (T + "hangs", "timeout"),
    ],
)
def test_misbehaving_targets_are_recorded_not_raised(spec: str, message: str) -> None:
    r = validate(spec, kind="orthogonal-map", profile="quick", dtypes=["float64"], timeout=0.5)
    output = next(c for c in r.claims if c.claim.id.endswith(".output"))
    assert output.verdict == "refuted"
    assert output.counterexample is not None and message in output.counterexample.value
    assert all(c.verdict != "error" for c in r.claims), [(c.claim.id, c.evidence[0].error) for c in r.claims]


# What each built-in adapter's quick run refutes besides the known upstream defects it shows
# (tests/upstream.py: torch's matrix_exp, its householder parametrisation's int(diag(X)), nested forward
# mode through linalg.solve and householder_product); None: not pinned, a package CI does not install.
# orthoverify's own modules: nothing; a second-order mode a module has no rule for is unsupported.
OWN = (
    "orthoverify-householder",
    "orthoverify-scaled-cayley",
    "orthoverify-svd",
    "orthoverify-urnn",
    "orthoverify-householder-wy",
    "orthoverify-svd-wy",
)
REFUTED: dict[str, set[str] | None] = {
    "torch-orthogonal-householder": set(),
    "torch-orthogonal-cayley": set(),
    "torch-orthogonal-matrix_exp": set(),
    "torch-householder-product": set(),
    "geotorch-so-cayley": set(),
    "geotorch-orthogonal-cayley": set(),
    "geotorch-so-expm": set(),
    "geotorch-orthogonal-expm": set(),
    "pyro-householder-flow": None,
    **{own: set() for own in OWN},
}
SECOND = {"second_ff", "second_fr", "second_rr", "second_ff_float32", "second_fr_float32", "second_rr_float32"}


def _own_householder_declines_subnormal_parameters(by: dict[str, Any]) -> None:
    """orthoverify.nn.HouseholderOrthogonal raises (NonFiniteError) where u'u underflows: at the
    special points that is a refusal, not a defect, so `orthogonal` is verified. Its power-of-two
    scale decision reads a number off a tensor, also under torch.func.jvp (whose wrapped tensors have
    no storage: `jvp` was refuted when it read them through numpy)."""
    assert by["orthogonal"].verdict == "verified"
    assert all("declined" in e.notes for e in by["orthogonal"].evidence)
    assert by["jvp"].verdict == "verified"


def _coverage_names_the_other_component(by: dict[str, Any]) -> None:
    """A map onto SO(n) never reaches the other component of O(n), and the note says so."""
    assert any("Never reached" in e.notes for e in by["coverage"].evidence)


def _first_order_verified(by: dict[str, Any]) -> None:
    assert by["output"].verdict == by["gradient"].verdict == by["determinism"].verdict == "verified"


EXTRA: dict[str, Callable[[dict[str, Any]], None]] = {
    "orthoverify-householder": _own_householder_declines_subnormal_parameters,
    "torch-orthogonal-cayley": _coverage_names_the_other_component,
    "torch-orthogonal-matrix_exp": _coverage_names_the_other_component,
    "geotorch-so-cayley": _first_order_verified,
    "geotorch-so-expm": _first_order_verified,
}


def test_every_built_in_adapter_is_pinned() -> None:
    assert set(REFUTED) == set(ADAPTERS)
    assert {spec for d in DEFECTS for spec in d.shows} <= set(ADAPTERS)  # the upstream table names real adapters


@pytest.mark.parametrize("spec", list(ADAPTERS))
def test_built_in_adapter(spec: str, tmp_path: Path) -> None:
    """One quick validate per adapter (run once, every expectation read from it): no error verdict,
    exactly the known refutations (a known upstream defect that no longer shows is a skip that says
    "fixed upstream"), orthoverify's own modules at most unsupported on second order,
    and every counterexample reproduces through `orthoverify replay` from the written result."""
    requires = ADAPTERS[spec].requires
    if requires is not None:
        pytest.importorskip(requires)
    r = validate(spec, profile="quick")
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    assert all(c.verdict != "error" for c in r.claims), spec
    refuted = {k for k, c in by.items() if c.verdict == "refuted"}
    upstream = expected_upstream(spec)
    if REFUTED[spec] is not None:
        assert refuted - set(upstream) == REFUTED[spec], (spec, refuted)
    if spec in OWN:
        assert {k for k, c in by.items() if c.verdict != "verified"} <= SECOND, spec
    if spec in EXTRA:
        EXTRA[spec](by)
    path = write_json(r, tmp_path / f"{spec}.json")
    for c in r.claims:
        assert (c.counterexample is not None) == (c.verdict in ("refuted", "fragile")), (spec, c.claim.id)
        if c.counterexample is not None:
            assert replay_from_file(path, c.claim.id, target=spec, **REPLAY).reproduced, (spec, c.claim.id)
    skip_if_fixed_upstream(fixed_upstream(spec, {k: c.verdict for k, c in by.items()}))


@pytest.mark.parametrize("spec", [f"torch-orthogonal-{m}" for m in ("householder", "cayley", "matrix_exp")])
def test_an_adapter_whose_first_call_is_a_jvp_answers_it(spec: str) -> None:
    """A process started again after a timeout may first call the adapter under torch.func.jvp:
    building torch's parametrisation there raised (it sets .data). Its jvp equals the jvp of an
    adapter first called plainly (test ratio against n eps)."""
    import torch
    from torch.func import jvp

    x = torch.randn(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    t = torch.randn(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    first = jvp(ADAPTERS[spec].build(), (x,), (t,))[1]
    plain = ADAPTERS[spec].build()
    plain(x)
    ref = jvp(plain, (x,), (t,))[1]
    assert float((first - ref).norm() / (3 * torch.finfo(torch.float64).eps * ref.norm())) < THRESHOLD


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_exit_statuses_json_report_and_replay(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    code, out, _ = run("validate", T + "embed", "--kind", "complex-to-real", "--profile", "quick", "--json", str(good))
    assert code == 0 and "verified" in out
    data = json.loads(good.read_text())
    assert data["validate"]["target"] == T + "embed" and data["validate"]["kind"] == "complex-to-real"
    assert all(c["id"].startswith("conformance.complex-to-real.") for c in data["claims"])
    bad = tmp_path / "bad.json"
    code, out, _ = run(
        "validate",
        T + "embed_wrong_block",
        "--kind",
        "complex-to-real",
        "--profile",
        "quick",
        "--json",
        str(bad),
        "--report",
        str(tmp_path),
    )
    assert code == 1 and "refuted" in out
    assert (tmp_path / "validate-tests.planted.conformance_targets-embed_wrong_block.html").exists()
    for c in json.loads(bad.read_text())["claims"]:
        if c["counterexample"]:
            code, out, _ = run("replay", str(bad), c["id"], "--target", T + "embed_wrong_block")
            assert code == 0 and "reproduced: yes" in out, out
    assert run("validate", "nosuch.module:f", "--kind", "orthogonal-map")[0] == 3
    assert run("validate", "not-an-adapter")[0] == 3
    assert run("validate", T + "embed", "--kind", "no-such-kind")[0] == 2
    assert run("validate", T + "embed", "--kind", "complex-to-real", "--dtype", "float16")[0] == 2


def test_a_check_that_does_not_apply_is_inconclusive_not_failed(tmp_path: Path) -> None:
    """A target without batches: `batch` (and the batch gradient) inconclusive with the reason, the rest
    verified, exit 0."""
    code, out, _ = run(
        "validate", T + "urnn_no_batches", "--kind", "unitary-composition", "--profile", "quick",
        "--dtype", "float64", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 0 and "Not applicable" in out
    by = {c["id"].rsplit(".", 1)[1]: c for c in json.loads((tmp_path / "r.json").read_text())["claims"]}
    assert by["batch"]["verdict"] == "inconclusive"
    assert all(e["cases"] == 0 and "Not applicable" in e["notes"] for e in by["batch"]["evidence"])
    assert by["gradient_batch"]["verdict"] == "inconclusive"
    assert {k for k, c in by.items() if c["verdict"] != "verified"} == {"batch", "gradient_batch"}


def test_forward_mode_is_checked_against_the_reference() -> None:
    """jvp of a target whose forward-mode rule is wrong is refuted; one without a rule is unsupported."""
    from orthoverify.conformance.context import session
    from orthoverify.conformance.derivatives import quantity
    from orthoverify.conformance.search import scan, sized_cases
    from orthoverify.conformance.target import load_target

    q_jvp = quantity("jvp")
    t = load_target(T + "cayley_wrong_jvp", "scaled-cayley")
    ctx = session(t, ("float64",), profile="quick")
    ev = scan(ctx, "jvp", q_jvp, sized_cases(ctx, "jvp", scales=(1.0,), dtypes=("float64",)))
    assert not ev[0].passed and ev[0].counterexample is not None and ev[0].worst_ratio > THRESHOLD
    t2 = load_target(T + "cayley_missing_gradient_term", "scaled-cayley")
    ctx2 = session(t2, ("float64",), profile="quick")
    ev2 = scan(ctx2, "jvp", q_jvp, sized_cases(ctx2, "jvp", scales=(1.0,), dtypes=("float64",)))
    assert ev2[0].cases == 0 and "Unsupported: the target raised" in ev2[0].notes
    assert ev2[0].data["unsupported"].startswith("RuntimeError") and not ev2[0].passed


def test_devices_check_compares_two_devices() -> None:
    """The cpu/cuda agreement check (planned when a GPU is there), exercised cpu against cpu: a
    target whose output depends on the call count is caught."""
    import torch

    from orthoverify.conformance.context import session
    from orthoverify.conformance.planning import plan_checks as _plan
    from orthoverify.conformance.quantities import q_devices
    from orthoverify.conformance.search import scan, sized_cases
    from orthoverify.conformance.target import load_target

    names = [p[0] for p in _plan("householder-product", ("float64",), device="cpu")]
    assert ("devices" in names) == torch.cuda.is_available()
    good = session(load_target(T + "householder", "householder-product"), ("float64",), other_device="cpu")
    assert scan(good, "devices", q_devices, sized_cases(good, "devices", scales=(1.0,)))[0].passed
    bad = session(load_target(T + "householder_noisy", "householder-product"), ("float64",), other_device="cpu")
    ev = scan(bad, "devices", q_devices, sized_cases(bad, "devices", scales=(1.0,)))[0]
    assert not ev.passed and ev.counterexample is not None


@pytest.mark.cuda
def test_devices_check_on_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU (torch.cuda.is_available() is False)")
    v = verdicts(T + "householder", "householder-product", device="cuda")
    assert v["devices"] == "verified" and set(v.values()) == {"verified"}, v


def test_readme_names_every_kind_and_adapter() -> None:
    from orthoverify.conformance import KINDS

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Validating an implementation") :]
    for name in (*KINDS, *ADAPTERS):
        assert f"`{name}`" in section, name


# --------------------------------------------------------------------------- conformance on the engine
def _rows(r: object) -> list[tuple[object, ...]]:
    """Each claim's verdict, counterexample and evidence rows (what a restructure must keep)."""
    from orthoverify.engine.result import to_json

    out = []
    for c in to_json(r)["claims"]:  # type: ignore[arg-type]
        cx = c.get("counterexample")
        rows = [
            tuple(e[k] for k in ("check", "method", "backend", "passed", "refutes", "cases")) for e in c["evidence"]
        ]
        out.append((c["id"], c["verdict"], None if cx is None else (cx["inputs"], cx["value"]), rows))
    return out


@pytest.mark.slow
def test_an_executor_run_and_a_serial_run_give_the_same_verdicts() -> None:
    """With an executor each check is an engine task that rebuilds the family where it runs (the
    target loaded there by name, the output check run first); a serial run shares one session. The
    two give the same verdicts, counterexamples and evidence rows."""
    from concurrent.futures import ThreadPoolExecutor

    spec, kind = T + "householder_wrong_sign", "householder-product"
    serial = validate(spec, kind=kind, profile="quick", dtypes=["float64"], seed=3)
    with ThreadPoolExecutor(max_workers=1) as pool:
        tasks = validate(spec, kind=kind, profile="quick", dtypes=["float64"], seed=3, executor=pool)
    assert serial.executor == "serial" and tasks.executor == "ThreadPoolExecutor"
    assert _rows(tasks) == _rows(serial)
    assert {c.verdict for c in serial.claims} == {"verified", "refuted"}


@pytest.mark.slow
def test_a_finding_is_confirmed_and_replayed_through_the_checks_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every refutation is measured again through TargetCheck.replay before it stands, and
    `orthoverify replay` of the validate result goes through the same method."""
    from orthoverify.conformance.family import TargetCheck

    calls: list[tuple[str, str]] = []
    original = TargetCheck.replay

    def spy(self: TargetCheck, inputs: dict[str, object], b: object, *, recorded: str = "") -> object:
        calls.append((self.name, b.name))  # type: ignore[attr-defined]
        return original(self, inputs, b, recorded=recorded)  # type: ignore[arg-type]

    monkeypatch.setattr(TargetCheck, "replay", spy)
    spec, kind = T + "householder_wrong_sign", "householder-product"
    r = validate(spec, kind=kind, profile="quick", dtypes=["float64"])
    refuted = [c for c in r.claims if c.verdict == "refuted"]
    assert refuted
    for c in refuted:
        assert all(e.data.get("confirmation", "").startswith("measured again") for e in c.evidence if e.counterexample)
    assert {name for name, _ in calls} == {c.claim.checks[0].name for c in refuted}
    calls.clear()
    path = write_json(r, tmp_path / "v.json")
    forward = next(c for c in refuted if c.claim.id.endswith(".forward"))
    rep = replay_from_file(path, forward.claim.id, target=spec, **REPLAY)
    assert rep.reproduced and "reproduced: yes" in rep.lines()
    assert calls == [("forward", "torch-float64"), ("forward", "torch-float64")] or calls == [
        ("forward", "torch-float64")
    ]
    # a correct target does not reproduce it: the replay says so
    assert not replay_from_file(path, forward.claim.id, target=T + "householder", **REPLAY).reproduced
    # the counterexample's quantity says what is measured (the ratio), not the check's name
    cx = next(e.counterexample for e in forward.evidence if e.counterexample)
    assert cx.check == "forward" and cx.quantity.startswith("||f(P) - reference(P)||_F / (n eps kappa")
    assert f"quantity: {cx.quantity}" in rep.lines()
    # a result recorded with the check's name as the quantity (before it said what is measured) replays alike
    old = path.read_text().replace(json.dumps(cx.quantity), json.dumps("forward"))
    assert old != path.read_text()
    (tmp_path / "old.json").write_text(old)
    rep_old = replay_from_file(tmp_path / "old.json", forward.claim.id, target=spec, **REPLAY)
    assert rep_old.reproduced and "quantity: forward" in rep_old.lines()


def test_a_failure_that_does_not_reproduce_is_failed_unconfirmed() -> None:
    """A counterexample that does not fail when measured again is no counterexample: the evidence
    is failed and unconfirmed, and the claim inconclusive (as the engine's high-precision confirmation)."""
    from orthoverify.conformance import open_target
    from orthoverify.conformance.family import Family, FamilyRef
    from orthoverify.engine.model import Counterexample, Evidence, decide

    t = open_target(T + "householder", "householder-product")
    try:
        fam = Family(FamilyRef(t.spec, "householder-product", ("float64",)), t)
        cid = "conformance.householder-product.orthogonal"
        check = fam[cid].checks[0]
        cx = Counterexample(
            {"U": [["1.0", "0.0"], ["0.5", "1.0"]], "dtype": "float64"}, "q", "planted", 16, "orthogonal"
        )
        ev = Evidence(cid, "orthogonal", "search", "torch-float64-cpu", cases=1, counterexample=cx)
        got = check._confirmed(ev)  # type: ignore[attr-defined]
    finally:
        assert t.runner is not None
        t.runner.close()
    assert got.counterexample is None and not got.passed and "unconfirmed" in got.data
    assert "did not reproduce" in got.notes and decide([got]) == "inconclusive"


def test_a_kind_is_a_family_of_engine_claims_over_a_target() -> None:
    """family() gives the kind's claims over the target in plan order, ids conformance.<kind>.<check>,
    each with one engine check (TargetCheck) that replays its own counterexamples."""
    from orthoverify.conformance import load_target
    from orthoverify.conformance.family import TargetCheck, family
    from orthoverify.conformance.planning import plan_checks as _plan
    from orthoverify.engine.checks import Check

    t = load_target(T + "householder", "householder-product")
    claims = family(t, dtypes=("float64",))
    names = [p[0] for p in _plan("householder-product", ("float64",), False, "cpu", t)]
    assert [c.id for c in claims] == [f"conformance.householder-product.{n}" for n in names]
    assert all(len(c.checks) == 1 and isinstance(c.checks[0], TargetCheck) for c in claims)
    assert all(isinstance(c.checks[0], Check) and c.checks[0].records(c.checks[0].name) for c in claims)


def test_a_half_precision_finding_is_confirmed_in_its_own_dtype(tmp_path: Path) -> None:
    """A low_precision counterexample is recorded in float16: it is measured again in float16
    (not in the float32/float64 of the run), confirmed, and replays."""
    spec = "tests.planted.reach_targets:householder_half_documented_only"
    r = validate(spec, kind="householder-product", profile="quick", dtypes=["float64"])
    low = next(c for c in r.claims if c.claim.id.endswith(".low_precision"))
    assert low.verdict == "refuted" and all(c.verdict != "error" for c in r.claims)
    assert low.counterexample is not None and low.counterexample.inputs["dtype"] == "float16"
    assert any(str(e.data.get("confirmation", "")).startswith("measured again") for e in low.evidence)
    rep = replay_from_file(write_json(r, tmp_path / "v.json"), low.claim.id, target=spec, **REPLAY)
    assert rep.reproduced and rep.values[0][0] == "target in float16"


def test_a_finding_of_another_shape_is_located_by_its_settings() -> None:
    """A lifecycle or mode case (scalars, not the kind's parameters) is located by its settings,
    not by a meaningless max|x_ij| and n = 0; a case of the kind's parameters by both."""
    import numpy as np

    from orthoverify.conformance.context import _where
    from orthoverify.conformance.kinds import KINDS

    kind = KINDS["orthogonal-map"]
    step = {"n": np.array([3.0]), "opt": np.array([0.0]), "steps": np.array([5.0]), "seed": np.array([3.0])}
    assert _where(kind, step) == "at n = 3, opt = 0, steps = 5, seed = 3"
    x = {"X": np.array([[0.5, -2.0], [0.0, 1.0]])}
    assert _where(kind, x) == "at max|x_ij| = 2, n = 2"
