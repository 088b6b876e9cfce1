"""Declarations next to a target: named domains, batches, right_inverse, modes, dtypes, a second
entry point and a module; what they add to the plan and to validate --list's data."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from orthoverify.conformance import KINDS
from orthoverify.conformance.planning import listing
from orthoverify.conformance.planning import plan_checks as _plan
from orthoverify.conformance.target import load_target
from orthoverify.errors import OrthoverifyError
from orthoverify.isolation.adapters import ADAPTERS
from orthoverify.isolation.declare import DOMAINS, declaration_of, declare, make_declaration

R = "tests.planted.reach_targets:"


def test_unknown_names_in_a_declaration_are_refused_by_name() -> None:
    for kw, bad in (
        ({"domain": ["diagonal in {0, 1}"]}, "diagonal in {0, 1}"),
        ({"modes": ["hessian"]}, "hessian"),
        ({"dtypes": ["float8"]}, "float8"),
        ({"lifecycle": ["pickle"]}, "pickle"),
    ):
        with pytest.raises(OrthoverifyError, match=bad.replace("{", r"\{").replace("}", r"\}")):
            make_declaration(**kw)  # type: ignore[arg-type]


def test_named_domains_say_why_a_point_is_outside() -> None:
    inside = {"U": np.array([[1.0, 0.0], [0.5, -1.0]])}
    assert DOMAINS["diagonal in {-1,+1}"](inside) is None
    assert DOMAINS["unit pivot"](inside) == "a pivot x_jj is not 1"
    assert DOMAINS["nonzero pivot"](inside) is None
    assert DOMAINS["columns of norm >= 1"]({"U": np.array([[1.0, 0.1], [0.0, 0.1]])}) == "a column has norm < 1"


def test_a_declared_domain_and_right_inverse_reach_the_loaded_target() -> None:
    def inverse(w: torch.Tensor) -> torch.Tensor:
        return w

    @declare(domain=["unit pivot"], right_inverse=inverse, batches=False)
    def f(u: torch.Tensor) -> torch.Tensor:
        return u

    import sys
    import types

    mod = types.ModuleType("reach_declared_tmp")
    mod.f = f  # type: ignore[attr-defined]
    sys.modules["reach_declared_tmp"] = mod
    try:
        t = load_target("reach_declared_tmp:f", "householder-product")
    finally:
        del sys.modules["reach_declared_tmp"]
    assert t.inverse is inverse and t.domain is not None
    assert t.domain({"U": np.array([[2.0], [1.0]])}) == "a pivot x_jj is not 1"
    assert t.domain({"U": np.array([[1.0], [1.0]])}) is None


def test_declarations_add_checks_to_the_plan() -> None:
    plain = load_target("tests.planted.conformance_targets:householder", "householder-product")
    assert declaration_of(plain) is None
    names = {p[0] for p in _plan("householder-product", ("float64",), True, "cpu", plain)}
    assert {"second_ff", "second_fr", "second_rr"} <= names
    assert not names & {"vmap", "low_precision", "entry_points", "weight_decay", "gradient_bfloat16", "jvp_float16"}
    assert not names & {"second_ff_float32", "second_rr_float32"}  # float32 not asked for
    both = {p[0] for p in _plan("householder-product", ("float32", "float64"), True, "cpu", plain)}
    assert {"second_ff_float32", "second_fr_float32", "second_rr_float32"} <= both
    for spec, added in (
        ("householder_vmap", {"vmap"}),
        ("householder_half", {"low_precision", "gradient_float16", "jvp_float16", "gradient_bfloat16", "jvp_bfloat16"}),
        ("flow_matrix", {"entry_points"}),
    ):
        t = load_target(R + spec, "householder-product")
        assert added <= {p[0] for p in _plan("householder-product", ("float64",), True, "cpu", t)}
    m = load_target(R + "reflections_module", "orthogonal-map")
    assert {"weight_decay", "state_dict", "dtype_cast"} <= {
        p[0] for p in _plan("orthogonal-map", ("float64",), False, "cpu", m)
    }


def test_listing_describes_kinds_checks_adapters_and_declarations() -> None:
    data = listing()
    assert set(data) == {"kinds", "checks", "adapters", "declarations", "domains"}
    assert "torch-householder-product" in data["adapters"] and "pyro-householder-flow" in data["adapters"]
    assert data["adapters"]["torch-orthogonal-householder"]["declaration"]["module"] is True
    assert data["adapters"]["pyro-householder-flow"]["requires"] == "pyro"
    assert {"second_ff", "vmap", "weight_decay", "entry_points"} <= set(data["checks"])
    assert "unit pivot" in data["domains"] and "module" in data["declarations"]
    assert set(ADAPTERS) == set(data["adapters"])


def test_the_recorded_listing_is_what_the_code_computes() -> None:
    """orthoverify/validate_listing.json (what `validate --list` prints, without torch) equals the
    listing computed from the kinds, plans and adapters; the printed text is its rendering."""
    from orthoverify import validate_listing
    from orthoverify.conformance import listing as printed
    from orthoverify.conformance import listing_data

    recorded = json.loads(validate_listing.DATA_FILE.read_text(encoding="utf-8"))
    assert recorded == listing_data(), "stale: run python tools/validate_listing.py"
    assert validate_listing.render(validate_listing.load()) == printed()
    for k in KINDS.values():
        assert recorded["kinds"][k.name]["allowance"] == k.allowance


def test_declared_batches_decide_whether_a_refused_stack_is_a_defect() -> None:
    from orthoverify.conformance import _evidence
    from orthoverify.conformance.context import session
    from orthoverify.engine.model import decide

    def batch(spec: str) -> str:
        t = load_target(R + spec, "householder-product")
        entry = next(e for e in _plan("householder-product", ("float64",), True, "cpu", t) if e[0] == "batch")
        ctx = session(t, ("float64",), profile="quick")
        return decide(_evidence(ctx, "conformance.householder-product.batch", "batch", entry[3]))

    assert batch("householder_batches_declared_refused") == "refuted"
    assert batch("householder_one_at_a_time") == "inconclusive"


@pytest.mark.parametrize(
    ("adapter", "package", "install"),
    [("pyro-householder-flow", "pyro", "pyro-ppl"), ("geotorch-orthogonal-expm", "geotorch", "geotorch")],
)
def test_a_missing_library_is_a_load_error_naming_the_install(
    adapter: str, package: str, install: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from orthoverify.isolation.calls import TargetLoadError

    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)  # import package raises ImportError
    with pytest.raises(TargetLoadError, match=f"pip install .*{install}"):
        load_target(adapter)


def test_a_declaration_on_a_module_class_reaches_its_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    """validate constructs a torch.nn.Module class with no arguments: its declaration still counts."""
    import sys
    import types

    @declare(modes=["vmap"], batches=False)
    class Flip(torch.nn.Module):
        def forward(self, u: torch.Tensor) -> torch.Tensor:
            return -torch.eye(u.shape[-2], dtype=u.dtype)

    mod = types.ModuleType("reach_class_tmp")
    mod.Flip = Flip  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reach_class_tmp", mod)
    t = load_target("reach_class_tmp:Flip", "householder-product")
    d = declaration_of(t)
    assert isinstance(t.fn, Flip) and d is not None and d.modes == ("vmap",) and d.batches is False
