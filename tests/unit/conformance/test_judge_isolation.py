"""A target can neither crash nor forge the verdict: it runs in a process of its own, gets copies
of its inputs, and its faults (exits, segfaults, hangs, patches, floods, chdir, overwritten
inputs, nondeterminism, a dtype it cannot handle) become findings that say so, never `error`;
a JSON result is always written."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import torch

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import RESULT_FAMILIES, main
from orthoverify.conformance import validate
from orthoverify.engine import write_json
from orthoverify.engine.replay import replay_from_file
from orthoverify.isolation.isolate import ProcessRunner
from orthoverify.isolation.runner import Reply, decode, encode
from orthoverify.isolation.wire import op_forward
from tests.planted.judge_planted import result, verdicts

REPLAY = {"modules": CLAIM_MODULES, "families": RESULT_FAMILIES}  # what `orthoverify replay` passes

T = "tests.planted.conformance_targets:"


def planted(name: str) -> dict[str, Any]:
    return {c.claim.id.rsplit(".", 1)[1]: c for c in result(name).claims}


def claims(spec: str, kind: str = "orthogonal-map", **kw: object) -> dict[str, object]:
    opts: dict[str, object] = {"profile": "quick", "dtypes": ["float64"], **kw}
    r = validate(spec, kind=kind, **opts)  # type: ignore[arg-type]
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    assert all(c.verdict != "error" for c in r.claims), {k: c.evidence[0].error for k, c in by.items()}  # type: ignore[attr-defined]
    return by


def test_the_wire_format_round_trips_without_pickle() -> None:
    import torch

    xs = [torch.randn(3, 3), None, torch.randn(2, dtype=torch.complex128), torch.arange(4), torch.ones(2).bfloat16()]
    header, back, _devices = decode(encode({"op": "x", "kw": {"a": [1, 2]}}, xs))
    assert header["kw"] == {"a": [1, 2]} and back[1] is None
    for a, b in zip(xs, back, strict=True):
        if a is not None:
            assert b is not None and a.dtype == b.dtype and torch.equal(a, b)
    with pytest.raises(ValueError):
        decode(encode({}, [torch.ones(1)])[:-3])


def test_an_output_is_read_through_torch_tensors_own_methods() -> None:
    """A subclass whose detach()/to()/numpy()/__torch_function__ lie is read as its storage; one
    with its own __torch_dispatch__ cannot be read and is refused; a non-tensor is refused."""
    import numpy as np
    import torch

    from orthoverify.isolation.wire import WireError, make_codec

    class Liar(torch.Tensor):
        def detach(self) -> Any:  # type: ignore[override]
            return self

        def numpy(self, *a: Any, **k: Any) -> Any:  # type: ignore[override]
            return np.eye(2)

        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return torch.eye(2)

    class Dispatching(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return torch.eye(2)

    encode_, decode_, raw = make_codec()
    true = 2 * torch.eye(2, dtype=torch.float64)
    _header, (back,), _devices = decode_(encode_({}, [raw(true.as_subclass(Liar))]))
    assert back is not None and type(back) is torch.Tensor and torch.equal(back, true)
    with pytest.raises(WireError, match="__torch_dispatch__"):
        raw(true.as_subclass(Dispatching))
    with pytest.raises(WireError, match=r"not a torch\.Tensor"):
        raw([[2.0, 0.0], [0.0, 2.0]])


def test_the_programs_operations_are_bound_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the target's process serves with is captured when it is built (before the target is
    imported): rebinding torch.Tensor's methods or torch.func afterwards changes nothing it reads,
    and the arguments come back as the call left them for the verifier to compare."""
    import numpy as np
    import torch

    from orthoverify.conformance.kinds import KINDS
    from orthoverify.isolation import program

    execute = program.make_executor()
    real = torch.Tensor.numpy
    monkeypatch.setattr(torch.Tensor, "numpy", lambda self, *a, **k: real(self, *a, **k) / 2)
    monkeypatch.setattr(torch.Tensor, "detach", lambda self: torch.zeros_like(self))
    monkeypatch.setattr(program, "make_codec", lambda: None)

    def f(u: torch.Tensor) -> torch.Tensor:
        out = 2 * u
        u.zero_()
        return out

    subject = program.Subject(f, KINDS["householder-product"].view)
    u = torch.ones(2, 2, dtype=torch.float64)
    res, items = execute(subject, "forward", [u], {})
    assert res["n_out"] == 1 and "error" not in res
    out_meta, out_bytes = items[0]
    after_meta, after_bytes = items[1]
    assert np.array_equal(np.frombuffer(out_bytes, dtype=np.float64), np.full(4, 2.0))
    assert np.array_equal(np.frombuffer(after_bytes, dtype=np.float64), np.zeros(4))
    assert out_meta["shape"] == after_meta["shape"] == [2, 2]


@pytest.mark.parametrize(("name", "says"), [("segfaults", "SIGSEGV")])
def test_a_target_that_kills_its_process_is_refuted_with_the_exit_status(name: str, says: str, tmp_path: Path) -> None:
    """(exits, os._exit(7), is in the planted suite; here through the command line, JSON written.)"""
    assert "exit status 7" in str(planted("exits")["output"].counterexample.value)
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "r.json"
    code = main(
        ["validate", T + name, "--kind", "orthogonal-map", "--profile", "quick", "--dtype", "float64",
         "--json", str(path)],
        out=out, err=err,
    )  # fmt: skip
    assert code == 1 and path.exists(), out.getvalue() + err.getvalue()
    data = json.loads(path.read_text())
    output = next(c for c in data["claims"] if c["id"].endswith(".output"))
    assert output["verdict"] == "refuted" and says in output["counterexample"]["value"]
    assert all(c["verdict"] != "error" for c in data["claims"])
    # one cause, one finding: what needs the output is not run, never verified or refuted
    for c in data["claims"]:
        if not c["id"].endswith((".output", ".side_effects")):
            assert c["verdict"] == "inconclusive", (c["id"], c["verdict"])


def test_a_target_that_patches_numpy_cannot_forge_orthogonality() -> None:
    assert verdicts("forges_norm")["orthogonal"] == "refuted"
    import numpy as np

    assert float(np.linalg.norm(np.eye(2))) > 0  # and this process's numpy is untouched


def test_side_effects_are_findings(tmp_path: Path) -> None:
    by = planted("overwrites_input")
    assert by["side_effects"].verdict == "refuted"
    assert "mutates its input" in by["side_effects"].evidence[0].notes
    assert by["forward"].verdict == "verified"  # it computes the right matrix, on its copy
    by = planted("changes_directory")
    assert "working directory" in by["side_effects"].evidence[0].notes
    assert by["side_effects"].verdict == "refuted" and by["orthogonal"].verdict == "verified"
    path = write_json(result("changes_directory"), tmp_path / "c.json")
    side_effects = "conformance.orthogonal-map.side_effects"
    assert replay_from_file(path, side_effects, target=T + "changes_directory", **REPLAY).reproduced


def test_a_flood_of_output_is_captured_and_truncated(capfd: pytest.CaptureFixture[str]) -> None:
    r = result("floods")
    seen = r.meta["validate"]["target_output"]
    assert seen["bytes"] > 1 << 20 and len(seen["head"]) <= 500
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    assert by["side_effects"].verdict == "refuted" and "floods" in by["side_effects"].evidence[0].notes
    assert by["orthogonal"].verdict == "verified"
    assert len(capfd.readouterr().out) < 10_000  # nothing of it reached this process's stdout


def test_nondeterminism_drifting_beyond_rounding_is_a_refuted_determinism_not_an_error() -> None:
    v = verdicts("cayley_drifts_on_repeat")
    assert v["determinism"] == "refuted" and v["orthogonal"] == "verified" and "error" not in v.values()


def test_after_a_timeout_later_calls_still_reach_the_target() -> None:
    by = claims(T + "hangs_when_large", timeout=2.0)
    assert by["orthogonal"].verdict == "refuted"  # type: ignore[attr-defined]
    assert "timeout" in by["orthogonal"].counterexample.value  # type: ignore[attr-defined]
    for later in ("gradient", "batch", "determinism", "bad_input"):  # the process was restarted
        c = by[later]
        assert c.verdict == "verified" and c.evidence[0].cases > 0, later  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_first_call_s_one_time_cost_is_not_charged_to_the_timeout() -> None:
    """The first jvp of a process takes twice the timeout, later ones none: its one-time cost is
    not a finding (the warm-up allowance). A jvp that slow on every call is still a timeout."""
    by = claims(T + "cayley_slow_first_jvp", timeout=2.0)
    assert by["jvp"].verdict == "verified" and by["jvp"].evidence[0].cases > 0  # type: ignore[attr-defined]
    slow = claims(T + "cayley_slow_jvp", timeout=2.0)
    assert slow["jvp"].verdict == "refuted"  # type: ignore[attr-defined]
    assert "timeout" in slow["jvp"].counterexample.value  # type: ignore[attr-defined]
    assert slow["gradient"].verdict == "verified"  # type: ignore[attr-defined]


def test_a_target_that_hangs_everywhere_verifies_nothing() -> None:
    by = claims(T + "hangs", timeout=0.5)
    assert by["output"].verdict == "refuted"  # type: ignore[attr-defined]
    assert all(c.verdict != "verified" for c in by.values()), {k: c.verdict for k, c in by.items()}  # type: ignore[attr-defined]


def test_a_dtype_the_target_cannot_handle_is_one_finding() -> None:
    by = planted("fails_in_float64")
    assert by["output"].verdict == "refuted"
    refuted = [k for k, c in by.items() if c.verdict == "refuted"]
    assert refuted == ["output"], refuted
    orth = {e.backend: e for e in by["orthogonal"].evidence}
    assert orth["torch-float32-cpu"].passed and orth["torch-float32-cpu"].cases > 0
    assert "Not run" in orth["torch-float64-cpu"].notes and not orth["torch-float64-cpu"].passed


def test_the_program_serves_the_declared_operations_and_the_runner_refuses_others() -> None:
    """One table of operations: the target's process serves exactly what wire.OPERATIONS declares,
    and a request it does not declare is the verifier's own error (ValueError), never sent."""
    from orthoverify.isolation import program
    from orthoverify.isolation.wire import OPERATIONS, check_request, op_domain, op_reach

    assert program.make_ops().keys() == OPERATIONS.keys()
    check_request(op_reach, {"steps": 3})
    check_request(op_domain, {"keys": ["A"], "index": 0})
    for op, kw in [("forwards", {}), (op_reach, {"steps": 1.5}), (op_reach, {"step": 3}), (op_domain, {"keys": "A"})]:
        with pytest.raises(ValueError):
            check_request(op, kw)


MEASURING = (
    "orthoverify.engine",
    "orthoverify.claims",
    "orthoverify.conformance",
    "orthoverify.report",
    "orthoverify.bench",
    "orthoverify.cli",
    "orthoverify.pytest_plugin",
)
"""The measuring layers, which orthoverify/isolation may not import (pyproject.toml's contract)."""

SEES = (
    "import sys\n"
    "import torch\n"
    "{extra}\n"
    "def f(x):\n"
    "    loaded = sorted(m for m in sys.modules if m.startswith({measuring!r}))\n"
    "    if loaded:\n"
    "        raise RuntimeError(f'measuring modules in the target process: {{loaded[:4]}}')\n"
    "    return torch.eye(x.shape[-1], dtype=x.dtype)\n"
)


@pytest.mark.parametrize("extra", ["", "import orthoverify.conformance.declare"], ids=["bare", "planted"])
def test_the_target_process_loads_no_measuring_code(
    extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At run time as in the import contract: the target's process (forkserver preloads included)
    holds isolation's program, and no module of a measuring layer, before the target imports one.
    Planted: a target that imports conformance's ``declare`` itself is seen to load them."""
    name = f"sees_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(SEES.format(extra=extra, measuring=MEASURING), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    runner = ProcessRunner(f"{name}:f", "orthogonal-map")
    runner.start()
    try:
        res = runner.request(op_forward, [torch.zeros(3, 3, dtype=torch.float64)], {}, 60.0, "cpu")
    finally:
        runner.close()
    if extra:
        assert not isinstance(res, Reply) and "orthoverify.conformance" in res.message, res
    else:
        assert isinstance(res, Reply), res
