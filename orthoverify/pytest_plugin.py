"""A pytest plugin: ``pytest --orthoverify-target module:attr --orthoverify-kind KIND`` adds one test
per conformance check of the target to a project's own test run.

Registered through the ``pytest11`` entry point, so installing orthoverify is enough; without
``--orthoverify-target`` it does nothing. The checks run once (on the first of their tests);
each test passes when its check is verified, is skipped when the check does not apply to the
target (inconclusive: say, no forward-mode derivative), and otherwise fails with the check's
evidence and the counterexample.
"""

from __future__ import annotations

from typing import Any

import pytest


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
        result = _result(self.config)
        for c in result.claims:
            if c.claim.id.rsplit(".", 1)[1] != self.check:
                continue
            if c.verdict == "verified":
                return
            if c.verdict == "inconclusive":  # not applicable (no forward mode, no batches): nothing measured
                why = "; ".join((e.notes or "").strip() for e in c.evidence if not e.passed) or "nothing measured"
                pytest.skip(f"{c.claim.id}: inconclusive: {why[:400]}")
            lines = [f"{c.claim.id}: {c.verdict}", f"claim: {c.claim.statement}"]
            for e in c.evidence:
                status = "pass" if e.passed else ("ERROR" if e.error else "FAIL")
                lines.append(f"  [{e.backend}] {status}: {(e.error or e.notes or '').strip()[:400]}")
            cx = c.counterexample
            if cx is not None:
                lines.append(f"counterexample: {cx.quantity} = {cx.value}")
                lines.append(f"inputs: {cx.inputs}")
            raise ConformanceFailure("\n".join(lines))
        raise ConformanceFailure(f"the run produced no check named {self.check}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return "orthoverify", 0, self.name


def _options(config: pytest.Config) -> dict[str, Any]:
    return {
        "target": config.getoption("orthoverify_target"),
        "kind": config.getoption("orthoverify_kind"),
        "profile": config.getoption("orthoverify_profile"),
        "dtypes": [d.strip() for d in str(config.getoption("orthoverify_dtype")).split(",") if d.strip()],
        "seed": config.getoption("orthoverify_seed"),
    }


def _result(config: pytest.Config) -> Any:
    cached = getattr(config, "_orthoverify_result", None)
    if cached is None:
        from orthoverify.conformance import validate

        o = _options(config)
        cached = validate(o["target"], kind=o["kind"], dtypes=o["dtypes"], profile=o["profile"], seed=o["seed"])
        config._orthoverify_result = cached  # type: ignore[attr-defined]
    return cached


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    o = _options(config)
    if not o["target"]:
        return
    from orthoverify.conformance import _plan
    from orthoverify.conformance.adapters import load_target
    from orthoverify.errors import OrthoverifyError

    try:
        target = load_target(o["target"], o["kind"])
    except OrthoverifyError as exc:
        items.append(
            ConformanceItem.from_parent(session, name=f"orthoverify[{o['target']}]", check="", load_error=str(exc))
        )
        return
    for name, *_ in _plan(target.kind.name, tuple(o["dtypes"]), target.inverse is not None, target=target):
        items.append(
            ConformanceItem.from_parent(
                session, name=f"orthoverify[{o['target']}]::{target.kind.name}.{name}", check=name
            )
        )
