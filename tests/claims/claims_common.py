"""Shared by the per-paper claim tests: the catalogue's ids, one quick run, its verdicts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from orthoverify.engine import run_checks, write_json

CATALOGUE = Path(__file__).resolve().parents[1] / "data" / "claims_catalogue.json"
EXPECTED_VERDICTS = Path(__file__).resolve().parents[1] / "data" / "expected_verdicts.json"


def expected_verdicts(paper: str | None = None) -> dict[str, str]:
    """What the evidence says today, claim id -> verdict (of ``paper``'s claims, or all): the one
    home of expected verdicts (tests/data/expected_verdicts.json, written by
    tools/expected_verdicts.py from the reference result). A change that flips one must be explained."""
    data: dict[str, str] = json.loads(EXPECTED_VERDICTS.read_text())
    return {cid: v for cid, v in data.items() if paper is None or cid.startswith(paper + ".")}


def catalogue_ids(paper: str) -> set[str]:
    """The ids the claim catalogue lists for a paper key: the one home of that list is
    tests/data/claims_catalogue.json (ids are a stable public interface)."""
    ids: dict[str, list[str]] = json.loads(CATALOGUE.read_text())["ids"]
    return set(ids[paper])


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
            write_json(run_checks([f"{paper}.*"], profile="quick", seed=0, workers=2), path)
    return path


def assert_verdicts(path: Path, expected: dict[str, str]) -> None:
    """Verdicts as expected, no check crashed, and every check of a verified claim passed."""
    data = json.loads(path.read_text())
    got = {c["id"]: c["verdict"] for c in data["claims"]}
    assert got == expected
    for c in data["claims"]:
        assert all(e["error"] is None for e in c["evidence"])
        if c["verdict"] == "verified":
            assert all(e["passed"] for e in c["evidence"])


def assert_registered(paper: str, catalogue: set[str], added: set[str], *, catalogue_exact: bool = True) -> None:
    """The registry holds exactly the catalogue's ids plus the added ones, and the catalogue
    (tests/data/claims_catalogue.json) lists exactly ``catalogue`` (or a subset of the registry)."""
    from orthoverify.engine import get_registry

    ids = {c.id for c in get_registry() if c.paper == paper}
    assert ids == catalogue | added
    listed = catalogue_ids(paper)
    assert listed == catalogue if catalogue_exact else listed <= ids


def assert_counterexamples_replay(path: Path) -> None:
    """Every refuted claim of a result carries a counterexample that replays from the JSON."""
    from orthoverify.engine import replay_from_file

    data = json.loads(path.read_text())
    for c in data["claims"]:
        if c["verdict"] == "refuted":
            assert replay_from_file(path, c["id"]).reproduced, c["id"]


def assert_rerun_identical(path: Path, ids: list[str]) -> None:
    """Running ``ids`` again (quick, seed 0, one process) gives the result's verdicts,
    counterexamples and worst ratios exactly: the same seed, the same cases (same code path)."""
    again = run_checks(ids, profile="quick", seed=0, workers=1)
    before = {c["id"]: c for c in json.loads(path.read_text())["claims"]}
    for c in again.claims:
        old = before[c.claim.id]
        assert c.verdict == old["verdict"]
        cx = c.counterexample
        assert (cx.to_json() if cx else None) == old["counterexample"]
        for e, e_old in zip(c.evidence, old["evidence"], strict=True):
            assert e.to_json()["worst_ratio"] == e_old["worst_ratio"]


def family_tests(
    paper: str, catalogue: set[str], added: set[str]
) -> tuple[Callable[[], None], Any, Callable[[Path], None], Callable[[Path], None]]:
    """The tests every family's claim-test module starts with, written once: its ids are
    registered, a module-scoped quick run of ``paper.*`` (the fixture ``quick``), its verdicts are
    the expected ones, and every counterexample replays. Bind them at module level::

        (test_catalogue_ids_are_registered, quick, test_quick_profile_verdicts,
         test_every_counterexample_replays) = family_tests(PAPER, CATALOGUE, ADDED)
    """

    def test_catalogue_ids_are_registered() -> None:
        assert_registered(paper, catalogue, added)

    @pytest.fixture(scope="module", name="quick")
    def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return quick_run(paper, tmp_path_factory)

    def test_quick_profile_verdicts(quick: Path) -> None:
        assert_verdicts(quick, expected_verdicts(paper))

    def test_every_counterexample_replays(quick: Path) -> None:
        assert_counterexamples_replay(quick)

    return test_catalogue_ids_are_registered, quick, test_quick_profile_verdicts, test_every_counterexample_replays
