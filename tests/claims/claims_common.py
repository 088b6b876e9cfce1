"""Shared by the per-paper claim tests: one quick run per family, the claims' declared verdicts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry, run_checks, write_json


def expected_verdicts(paper: str | None = None) -> dict[str, str]:
    """What the evidence says today, claim id -> verdict (of ``paper``'s claims, or all), read from
    each claim's declaration (``Claim.expected``, its one home). A change that flips one must be explained."""
    out: dict[str, str] = {}
    for c in get_registry(CLAIM_MODULES):
        if paper is None or c.paper == paper:
            assert c.expected is not None, f"{c.id} declares no expected verdict"
            out[c.id] = c.expected
    return out


def quick_run(paper: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick run (seed 0) of every ``paper.*`` claim, written as JSON once per test session: the
    claim tests and the param tests of a family read the same file. Under xdist the first worker to
    ask runs it while the others wait on the lock, then read it (a claim's cases depend only on its
    id, check and seed, never on which other claims ran beside it)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the session's workers
    path = base / f"quick-{paper}.json"
    with FileLock(f"{path}.lock"):
        if not path.exists():  # write_json is atomic: a file that exists is whole
            write_json(run_checks([f"{paper}.*"], profile="quick", seed=0, workers=2, modules=CLAIM_MODULES), path)
    return path


def assert_verdict(path: Path, claim_id: str) -> None:
    """One claim of a result: its verdict is the declared one, no check crashed, and every check
    of a verified claim passed."""
    data = json.loads(path.read_text())
    (c,) = [c for c in data["claims"] if c["id"] == claim_id]
    assert c["verdict"] == get_registry(CLAIM_MODULES)[claim_id].expected, f"{claim_id}: {c['verdict']}"
    assert all(e["error"] is None for e in c["evidence"]), claim_id
    if c["verdict"] == "verified":
        assert all(e["passed"] for e in c["evidence"]), claim_id


def assert_counterexamples_replay(path: Path) -> None:
    """Every refuted claim of a result carries a counterexample that replays from the JSON."""
    from orthoverify.engine import replay_from_file

    data = json.loads(path.read_text())
    for c in data["claims"]:
        if c["verdict"] == "refuted":
            assert replay_from_file(path, c["id"], modules=CLAIM_MODULES).reproduced, c["id"]


def assert_rerun_identical(path: Path, ids: list[str]) -> None:
    """Running ``ids`` again (quick, seed 0, one process) gives the result's verdicts,
    counterexamples and worst ratios exactly: the same seed, the same cases (same code path)."""
    again = run_checks(ids, profile="quick", seed=0, workers=1, modules=CLAIM_MODULES)
    before = {c["id"]: c for c in json.loads(path.read_text())["claims"]}
    for c in again.claims:
        old = before[c.claim.id]
        assert c.verdict == old["verdict"]
        cx = c.counterexample
        assert (cx.to_json() if cx else None) == old["counterexample"]
        for e, e_old in zip(c.evidence, old["evidence"], strict=True):
            assert e.to_json()["worst_ratio"] == e_old["worst_ratio"]


def family_tests(paper: str) -> tuple[Any, Callable[[Path], None]]:
    """The tests every family's claim-test module starts with, written once: a module-scoped quick
    run of ``paper.*`` (the fixture ``quick``) and every counterexample replays (each claim's
    verdict is tests/claims/test_verdicts.py's ``test_verdict[<id>]``). Bind them at module level::

        quick, test_every_counterexample_replays = family_tests(PAPER)
    """

    @pytest.fixture(scope="module", name="quick")
    def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return quick_run(paper, tmp_path_factory)

    def test_every_counterexample_replays(quick: Path) -> None:
        assert_counterexamples_replay(quick)

    return quick, test_every_counterexample_replays
