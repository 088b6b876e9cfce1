"""A declaration is read where the target lives: the verifier never imports a target named by a
string; it gets the declaration as plain data, checks every field as untrusted input, and reaches
the declaration's code (domain predicates, a second entry point, a module factory) only through the
target's process."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orthoverify.conformance import run_one_check, validate
from orthoverify.engine.model import decide
from orthoverify.errors import InputError, OrthoverifyError
from orthoverify.isolation.calls import TargetLoadError
from orthoverify.isolation.declare import InTargetProcess, declaration_from_data

KIND = "householder-product"
CLAIM = f"conformance.{KIND}."

TARGET = '''
import os

from orthoverify.conformance.declare import declare
from tests.planted.conformance_targets import householder

MARK = {mark!r}
with open(MARK, "a") as fh:
    fh.write(f"import {{os.getpid()}}\\n")


def bounded(p):
    """Inside: every entry at most 1e6 (each call leaves its pid in the marker)."""
    with open(MARK, "a") as fh:
        fh.write(f"predicate {{os.getpid()}}\\n")
    return None if abs(next(iter(p.values()))).max() <= 1e6 else "an entry above 1e6"


@declare(domain=["nonzero pivot", bounded], also=householder, also_name="again", batches=False)
def f(u):
    return householder(u)


@declare(also=lambda u: householder(u).transpose(-1, -2), also_name="transposed")
def g(u):
    return householder(u)


def broken(p):
    raise RuntimeError("the predicate itself fails")


@declare(domain=[broken])
def h(u):
    return householder(u)
'''


@pytest.fixture
def target_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A user's module in a temporary directory (a fresh name per test) whose import and domain
    predicate write their pid to a marker file."""
    name = f"reach_isolated_{tmp_path.name.replace('-', '_')}"
    mark = tmp_path / "mark.txt"
    (tmp_path / f"{name}.py").write_text(TARGET.format(mark=str(mark)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, mark
    assert name not in sys.modules, "the verifier imported the target"


def pids(mark: Path, what: str) -> set[int]:
    lines = mark.read_text(encoding="utf-8").split() if mark.exists() else []
    return {int(p) for w, p in zip(lines[::2], lines[1::2], strict=True) if w == what}


def test_declared_checks_run_without_the_verifier_importing_the_target(target_module: tuple[str, Path]) -> None:
    name, mark = target_module
    fwd = run_one_check(f"{name}:f", KIND, "forward", ("float64",), "cpu", "quick", 0, 60.0)
    assert decide(fwd) == "verified"
    assert any("outside the target's declared domain" in e.notes for e in fwd)  # the predicate ran
    ep = run_one_check(f"{name}:f", KIND, "entry_points", ("float64",), "cpu", "quick", 0, 60.0)
    assert decide(ep) == "verified"
    assert name not in sys.modules
    imported, predicate = pids(mark, "import"), pids(mark, "predicate")
    assert imported and predicate and os.getpid() not in imported | predicate


@pytest.mark.slow
def test_validate_by_name_never_imports_the_target_and_records_its_declaration(
    target_module: tuple[str, Path],
) -> None:
    """The whole quick run (about 7 s): the declaration counts (batch not applicable, the second
    entry point verified), and only the target's process imported the module or ran its predicate;
    a second entry point that disagrees is refuted through that process."""
    name, mark = target_module
    r = validate(f"{name}:f", kind=KIND, profile="quick", dtypes=["float64"])
    v = {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in r.claims}
    assert v["batch"] == "inconclusive" and v["entry_points"] == "verified", v
    assert {k for k, x in v.items() if x != "verified"} == {"batch"}, v
    d = r.meta["validate"]["declaration"]
    assert d["domain"] == ["nonzero pivot", "bounded"] and d["second_entry_point"] == "again"
    assert name not in sys.modules
    assert os.getpid() not in pids(mark, "import") | pids(mark, "predicate") and pids(mark, "predicate")
    bad = run_one_check(f"{name}:g", KIND, "entry_points", ("float64",), "cpu", "quick", 0, 60.0)
    assert decide(bad) == "refuted"  # the declared entry point is called, and can fail


def _stand_in(i: int, name: str) -> Any:
    return lambda p: None


GOOD: dict[str, Any] = {
    "domain": ["unit pivot"],
    "domain_predicates": ["bounded"],
    "batches": True,
    "right_inverse": False,
    "also": "forward(I)",
    "modes": ["vmap"],
    "dtypes": ["bfloat16"],
    "module": True,
    "weight": False,
    "sigma": [0.5, 2],
    "lifecycle": ["weight_decay"],
}


def test_declaration_data_from_the_target_process_is_rebuilt_with_its_code_left_there() -> None:
    d = declaration_from_data(GOOD, _stand_in, lambda *a: a[0], lambda w: w)
    assert d.modes == ("vmap",) and d.dtypes == ("bfloat16",) and d.batches is True and d.sigma == (0.5, 2.0)
    assert d.domain[0] == "unit pivot" and callable(d.domain[1]) and d.also_name == "forward(I)"
    assert isinstance(d.module, InTargetProcess) and d.weight is None and d.right_inverse is None
    with pytest.raises(OrthoverifyError, match="module factory is the target's code"):
        d.module(3)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("modes", ["hessian"]),
        ("modes", "vmap"),
        ("domain", ["x > 0"]),
        ("domain_predicates", [{"unsupported": "int"}]),
        ("batches", "yes"),
        ("module", 1),
        ("also", 7),
        ("sigma", [2, 1]),
        ("sigma", ["a", "b"]),
        ("sigma", [0.0, float("inf")]),
        ("lifecycle", ["pickle"]),
        ("dtypes", ["float8"] * 3),
        ("shell", "rm -rf /"),
    ],
)
def test_malformed_declaration_data_is_refused_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(InputError, match=f"field '{field}'"):
        declaration_from_data({**GOOD, field: value}, _stand_in, lambda *a: a[0], lambda w: w)


def test_a_forged_declaration_of_a_target_is_a_load_error_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Declaration built around make_declaration's checks (or any object the target sends)
    stops validate with a clear error, before any check runs."""
    name = f"reach_forged_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "from orthoverify.isolation.declare import Declaration\n"
        "from tests.planted.conformance_targets import householder\n"
        "def f(u):\n    return householder(u)\n"
        "f.__orthoverify__ = Declaration(modes=('hessian',))\n"
        "def g(u):\n    return householder(u)\n"
        "g.__orthoverify__ = Declaration(sigma=('a', 'b'), module=lambda n: None)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TargetLoadError, match=r"field 'modes' has unknown name.*hessian"):
        validate(f"{name}:f", kind=KIND, profile="quick", dtypes=["float64"])
    with pytest.raises(TargetLoadError, match="field 'sigma'"):
        validate(f"{name}:g", kind=KIND, profile="quick", dtypes=["float64"])
    assert name not in sys.modules


def test_a_domain_predicate_that_raises_makes_the_check_not_run(target_module: tuple[str, Path]) -> None:
    """The predicate runs in the target's process; its exception is the target's fault: the
    check is not run (inconclusive), naming the predicate, never a pass and never an error."""
    from orthoverify.conformance import _evidence, open_target
    from orthoverify.conformance.context import session
    from orthoverify.conformance.planning import plan_checks as _plan

    name, _mark = target_module
    t = open_target(f"{name}:h", KIND)
    try:
        fn = next(e[3] for e in _plan(KIND, ("float64",), False, "cpu", t) if e[0] == "forward")
        ctx = session(t, ("float64",), profile="quick", runner=t.runner)
        ev = _evidence(ctx, CLAIM + "forward", "forward", fn)  # as validate runs each check
    finally:
        assert t.runner is not None
        t.runner.close()
    assert decide(ev) == "inconclusive" and not any(e.error for e in ev)
    assert any("declared domain predicate broken" in e.notes and "predicate itself fails" in e.notes for e in ev)
