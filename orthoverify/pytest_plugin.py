"""A pytest plugin: ``pytest --orthoverify-target module:attr --orthoverify-kind KIND`` adds one test
per conformance check of the target to a project's own test run.

Registered through the ``pytest11`` entry point, so installing orthoverify (and pytest:
``pip install 'orthoverify[pytest]'``) is enough; without ``--orthoverify-target`` it does
nothing, and costs every pytest session only this module, ``orthoverify.errors`` and
``orthoverify.notation`` (standard library only): the
conformance checks (and torch, about 3 s to import) load only when a target is given: they are
declared at the top as modules loaded on first use (:mod:`orthoverify._lazy`).

The tests are collected as pytest collects any (``collected N items`` counts them), with node
ids ``orthoverify[TARGET]::KIND::CHECK`` that run that one check when passed back to pytest.
The selected checks (all, or those named by node id or kept by ``-k``) run once, on the first
test that needs them, with torch's own deprecation warnings kept out of the user's run; each
test passes when its check is verified, is skipped when the check does not apply to the target
(inconclusive: say, no forward-mode derivative), and otherwise fails with the check's evidence
and the counterexample.
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any

import pytest

from orthoverify._lazy import lazy_module
from orthoverify.errors import OrthoverifyError
from orthoverify.notation import math_text

if TYPE_CHECKING:  # the checks (and torch) load only when --orthoverify-target is given
    from orthoverify import conformance
    from orthoverify.conformance import planning
    from orthoverify.conformance import target as conformance_target
else:
    conformance = lazy_module("orthoverify.conformance")
    planning = lazy_module("orthoverify.conformance.planning")
    conformance_target = lazy_module("orthoverify.conformance.target")

_NODE_ID = re.compile(r"^orthoverify\[(?P<target>.+)\](::[^:\[\]]+)?::(?P<test>[^:\[\]]+)$")
_SELECTED = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("orthoverify", "conformance checks of an orthogonal parametrisation")
    group.addoption("--orthoverify-target", default=None, help="built-in adapter or module:attribute to validate")
    group.addoption("--orthoverify-kind", default=None, help="what the target computes (orthogonal-map, ...)")
    group.addoption("--orthoverify-profile", default="quick", choices=["quick", "default", "thorough"])
    group.addoption("--orthoverify-dtype", default="float32,float64", help="comma-separated dtypes")
    group.addoption("--orthoverify-seed", default=0, type=int)


class ConformanceFailure(Exception):
    """A conformance check that is not verified (its evidence is the message)."""


class ConformanceItem(pytest.Item):
    """One conformance check of the target, as a test."""

    def __init__(self, *, check: str, load_error: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.check = check
        self.load_error = load_error

    def runtest(self) -> None:
        if self.load_error is not None:
            raise ConformanceFailure(f"cannot load the target: {self.load_error}")
        result = _result(self)
        for c in result.claims:
            if c.claim.id.rsplit(".", 1)[1] != self.check:
                continue
            if c.verdict == "verified":
                return
            if c.verdict in ("inconclusive", "unsupported", "fragile"):  # nothing measured, a declined mode, or
                # a failure only at extreme inputs: no defect at ordinary inputs (validate exits 0 for these)
                why = "; ".join((e.notes or "").strip() for e in c.evidence if not e.passed) or "nothing measured"
                pytest.skip(f"{c.claim.id}: {c.verdict}: {math_text(why[:400])}")
            raise ConformanceFailure(failure_text(c))
        raise ConformanceFailure(f"the run produced no check named {self.check}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, None, str]:
        return self.nodeid, None, self.name


def failure_text(c: Any) -> str:
    """A failed check's message: its verdict, the claim, each evidence line and the counterexample
    (quantity = value in the paper's notation; the inputs as recorded, decimal strings to copy)."""
    lines = [f"{c.claim.id}: {c.verdict}", f"claim: {c.claim.statement}"]
    for e in c.evidence:
        status = "pass" if e.passed else ("ERROR" if e.error else "FAIL")
        lines.append(f"  [{e.backend}] {status}: {math_text((e.error or e.notes or '').strip()[:400])}")
    cx = c.counterexample
    if cx is not None:
        lines.append(f"counterexample: {math_text(str(cx.quantity))} = {math_text(str(cx.value))}")
        lines.append(f"inputs: {cx.inputs}")
    return "\n".join(lines)


def _options(config: pytest.Config) -> dict[str, Any]:
    return {
        "target": config.getoption("orthoverify_target"),
        "kind": config.getoption("orthoverify_kind"),
        "profile": config.getoption("orthoverify_profile"),
        "dtypes": [d.strip() for d in str(config.getoption("orthoverify_dtype")).split(",") if d.strip()],
        "seed": config.getoption("orthoverify_seed"),
    }


def _result(item: ConformanceItem) -> Any:
    """The validate run of the checks this session runs (those of the items left after selection
    by node id or ``-k``), made once, on the first test that needs it."""
    config = item.config
    cached = getattr(config, "_orthoverify_result", None)
    if cached is None:
        o = _options(config)
        checks = [i.check for i in item.session.items if isinstance(i, ConformanceItem) and i.check]
        with warnings.catch_warnings():  # torch's internal deprecations are not the user's business
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch(\.|$)")
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch(\.|$)")
            cached = conformance.validate(
                o["target"],
                kind=o["kind"],
                dtypes=o["dtypes"],
                profile=o["profile"],
                seed=o["seed"],
                checks=checks or None,
            )
        config._orthoverify_result = cached  # type: ignore[attr-defined]
    return cached


class ConformanceCollector(pytest.Collector):
    """The target's tests, one per conformance check (node id ``orthoverify[TARGET]::KIND``), or
    one test ``orthoverify[TARGET]::load`` that reports why the target cannot be loaded."""

    def __init__(self, *, target: Any, dtypes: tuple[str, ...], load_error: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.target, self.dtypes, self.load_error = target, dtypes, load_error

    def collect(self) -> list[pytest.Item]:
        if self.target is None:
            return [ConformanceItem.from_parent(self, name="load", check="", load_error=self.load_error)]
        target = self.target
        plan = planning.plan_checks(target.kind.name, self.dtypes, target.inverse is not None, target=target)
        return [ConformanceItem.from_parent(self, name=name, check=name) for name, *_ in plan]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Take this plugin's node ids (``orthoverify[T]::KIND::CHECK``) out of the arguments, where
    pytest would look for a file of that name, and remember them; when they were the only paths
    given, nothing else is collected."""
    ours = [a for a in args if _NODE_ID.match(a)]
    if not ours:
        return
    early_config.stash[_SELECTED] = [_NODE_ID.match(a).group("test") for a in ours]  # type: ignore[union-attr]
    for a in ours:
        args.remove(a)
    given = getattr(early_config.known_args_namespace, "file_or_dir", None) or []
    if not [a for a in given if not _NODE_ID.match(a)]:
        args.append("--ignore-glob=*")  # only the selected checks: collect none of the user's files


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collect the target's tests as pytest collects any (reported, counted in ``collected N
    items``), and keep only the checks named on the command line, if any."""
    o = _options(config)
    if not o["target"]:
        return
    name = f"orthoverify[{o['target']}]"
    try:
        target, error = conformance_target.load_target(o["target"], o["kind"]), None
        name += f"::{target.kind.name}"
    except OrthoverifyError as exc:
        target, error = None, str(exc)
    collector = ConformanceCollector.from_parent(
        session, name=name, nodeid=name, target=target, dtypes=tuple(o["dtypes"]), load_error=error
    )
    ours = list(session.genitems(collector))
    selected = config.stash.get(_SELECTED, None)
    if selected is not None:
        keep = [i for i in ours if i.name in selected]
        unknown = sorted(set(selected) - {i.name for i in ours})
        if unknown:
            raise pytest.UsageError(
                f"orthoverify: no check {', '.join(unknown)} for {o['target']}; "
                f"its tests: {', '.join(i.name for i in ours)}"
            )
        config.hook.pytest_deselected(items=[*items, *(i for i in ours if i not in keep)])
        items[:] = keep
        return
    items.extend(ours)
