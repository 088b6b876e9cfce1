"""Executors named by a string (orthoverify.engine.executors), Dask above all: a run on a Dask
cluster gives the same result as a serial run for the same seed, in registry order; a lost
worker is error evidence; a bad spec or an unreachable scheduler is a clear, fast error.

One small LocalCluster (2 worker processes, 1 thread each) serves the whole module. This module
is also a claims module (``CLAIMS`` below) so that its workers can import a claim that kills
the worker running it.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import main
from orthoverify.engine import Claim, PropertyCheck, RunContext, run_checks, to_json
from orthoverify.engine.checks import Case
from orthoverify.engine.executors import ExecutorError, open_executor, parse_executor
from orthoverify.engine.registry import EXTRA_ENV
from orthoverify.errors import InputError, OrthoverifyError
from tests.conftest import PLANTED
from tests.planted.planted_claims import q_true

THIS = ("tests.unit.engine.test_executors",)
CHEAP = ["planted.true_reflection_orthogonal", "planted.false_*", "planted.rounding_only", "planted.crashes"]


def _die_in_worker(ctx: RunContext) -> Iterator[Case]:
    """Kill the Dask worker process running this check (and only a Dask worker)."""
    from distributed import get_worker

    get_worker()  # raises ValueError outside a Dask worker: never kill the test process
    os._exit(13)
    yield {}


CLAIMS = [
    Claim(
        id="planted.dask_worker_dies",
        paper="planted",
        where="test",
        kind="identity",
        statement="the worker running this check dies",
        checks=(PropertyCheck("float", q_true, _die_in_worker, ("numpy-float64",), "n/a"),),
    )
]


def _stable(result: Any) -> list[Any]:
    """Everything in the JSON claims except timings."""
    out = []
    for c in to_json(result)["claims"]:
        ev = [{k: v for k, v in e.items() if k != "seconds"} for e in c["evidence"]]
        out.append({**{k: v for k, v in c.items() if k != "evidence"}, "evidence": ev})
    return out


def _cluster() -> Iterator[str]:
    """The address (host:port) of a LocalCluster of 2 workers; a task that kills its worker fails at once."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        scheduler_kwargs={"allowed_failures": 0},
    )
    try:
        yield cluster.scheduler_address.removeprefix("tcp://")
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A cluster shared by the tests that never kill a worker."""
    yield from _cluster()


@pytest.fixture
def own_scheduler() -> Iterator[str]:
    """A cluster of its own for a test that kills a worker (the shared one keeps both of its workers,
    whatever order the tests run in)."""
    yield from _cluster()


@pytest.fixture(scope="module")
def serial_result() -> Any:
    return run_checks(CHEAP, profile="quick", seed=3, workers=1, modules=PLANTED)


# --------------------------------------------------------------------------- specs
@pytest.mark.parametrize(
    ("spec", "kind", "address", "workers", "name"),
    [
        (None, "local", None, None, "local"),
        ("local", "local", None, None, "local"),
        ("Serial", "serial", None, None, "serial"),
        ("dask://10.0.0.5:8786", "dask", "tcp://10.0.0.5:8786", None, "dask://10.0.0.5:8786"),
        ("dask://sched.example.org", "dask", "tcp://sched.example.org:8786", None, "dask://sched.example.org:8786"),
        ("dask://[::1]:9000", "dask", "tcp://[::1]:9000", None, "dask://[::1]:9000"),
        ("dask-local:3", "dask-local", None, 3, "dask-local:3"),
        ("dask://local", "dask-local", None, None, "dask-local"),
    ],
)
def test_parse_executor(spec: str | None, kind: str, address: str | None, workers: int | None, name: str) -> None:
    got = parse_executor(spec)
    assert (got.kind, got.address, got.workers, got.name) == (kind, address, workers, name)


@pytest.mark.parametrize(
    "spec", ["", "threads", "dask:/host:1", "dask://", "dask://host:99999", "dask://h:1/x", "dask-local:0", "ray://h"]
)
def test_bad_spec_is_an_input_error(spec: str) -> None:
    with pytest.raises(InputError, match="executor"):
        parse_executor(spec)
    with pytest.raises(InputError), open_executor(spec):
        pass


def test_bad_spec_on_the_command_line_exits_2(tmp_path: Path) -> None:
    err = io.StringIO()
    code = main(
        ["check", "householder.reflection", "--executor", "threads", "--json", str(tmp_path / "r.json")], err=err
    )
    assert code == 2 and "unknown executor 'threads'" in err.getvalue() and "dask://HOST:PORT" in err.getvalue()


def test_serial_and_local_executors_open_and_close() -> None:
    with open_executor("serial") as opened:
        assert opened.spec == "serial" and opened.slots == 1
        assert opened.executor.submit(pow, 2, 5).result() == 32
    with open_executor("local", 2) as opened:
        assert opened.spec == "local" and opened.slots == 2 and "2 processes" in opened.description


def test_missing_distributed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ExecutorError, match=r"orthoverify\[dask\]"), open_executor("dask://127.0.0.1:8786"):
        pass


@pytest.mark.slow  # starts dask (1 to 2.5 s): the full suite runs it
def test_unreachable_scheduler_is_a_fast_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    t0 = time.perf_counter()
    unreachable = r"cannot reach the Dask scheduler at dask://127.0.0.1:9"
    with pytest.raises(ExecutorError, match=unreachable), open_executor("dask://127.0.0.1:9", timeout=1.0):
        pass
    assert time.perf_counter() - t0 < 20  # bounded by the timeout, not a hang (generous: no speed asserted)
    err = io.StringIO()
    monkeypatch.setenv("ORTHOVERIFY_DASK_TIMEOUT", "1")
    code = main(["check", "householder.reflection", "--executor", "dask://127.0.0.1:9"], err=err)
    assert code == 2 and "cannot reach the Dask scheduler" in err.getvalue()
    assert isinstance(ExecutorError("x"), OrthoverifyError)


# --------------------------------------------------------------------------- runs on the cluster
def test_dask_run_is_identical_to_a_serial_run(scheduler: str, serial_result: Any) -> None:
    with open_executor(f"dask://{scheduler}") as opened:
        assert opened.spec == f"dask://{scheduler}" and opened.slots == 2
        assert "2 workers" in opened.description
        result = run_checks(
            CHEAP,
            profile="quick",
            seed=3,
            executor=opened.executor,
            executor_name=opened.spec,
            workers=opened.slots,
            modules=PLANTED,
        )
    assert [c.claim.id for c in result.claims] == [c.claim.id for c in serial_result.claims]  # registry order
    assert _stable(result) == _stable(serial_result)
    assert {c.claim.id: c.verdict for c in result.claims} == {
        "planted.true_reflection_orthogonal": "verified",
        "planted.false_reflection_fixes_u": "refuted",
        "planted.false_square": "refuted",
        "planted.rounding_only": "inconclusive",
        "planted.crashes": "error",
    }
    data = to_json(result)
    assert data["executor"] == f"dask://{scheduler}" and data["workers"] == 2
    assert to_json(serial_result)["executor"] == "serial"


@pytest.mark.slow  # starts dask (1 to 2.5 s): the full suite runs it
def test_cli_check_on_dask(scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXTRA_ENV, "tests.planted.planted_claims")
    claims = ["planted.true_reflection_orthogonal", "planted.false_square"]
    paths = {}
    for spec in (f"dask://{scheduler}", "serial"):
        path = paths[spec] = tmp_path / f"{spec.split(':')[0]}.json"
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["check", *claims, "--profile", "quick", "--seed", "7", "--executor", spec, "--json", str(path)], out, err
        )
        assert code == 0, err.getvalue()
        assert "verified" in out.getvalue() and "refuted" in out.getvalue()
        assert f"executor: {spec}" in err.getvalue()
    dask, serial = (json.loads(p.read_text()) for p in paths.values())
    assert dask["executor"] == f"dask://{scheduler}" and serial["executor"] == "serial"
    for doc in (dask, serial):
        for c in doc["claims"]:
            for e in c["evidence"]:
                e.pop("seconds")
    assert dask["claims"] == serial["claims"] and dask["summary"] == serial["summary"]


def test_lost_worker_is_error_evidence(own_scheduler: str) -> None:
    """The dying task runs alone, so no other task is queued on the worker it kills (the scheduler
    would count such a task as lost too, depending on where it happened to be placed); a second run
    on the same cluster shows the other tasks still run."""
    pytest.importorskip("distributed")
    with open_executor(f"dask://{own_scheduler}", timeout=30) as opened:
        options: dict[str, Any] = {
            "profile": "quick",
            "seed": 0,
            "executor": opened.executor,
            "executor_name": opened.spec,
        }
        with pytest.warns(RuntimeWarning, match="every check of this run erred"):  # its only task was lost
            lost = run_checks(["planted.dask_worker_dies"], modules=PLANTED + THIS, **options)
        after = run_checks(["planted.true_reflection_orthogonal"], modules=PLANTED, **options)
    dead = lost.claims[0]
    assert dead.claim.id == "planted.dask_worker_dies" and dead.verdict == "error" and lost.errored
    assert "the executor lost this task" in (dead.evidence[0].error or "")
    assert after.claims[0].verdict == "verified" and not after.errored


@pytest.mark.slow  # starts dask (1 to 2.5 s): the full suite runs it
def test_dask_local_starts_and_stops_a_cluster() -> None:
    pytest.importorskip("distributed")
    with open_executor("dask-local:1", timeout=30) as opened:
        assert opened.spec == "dask-local:1" and opened.slots == 1
        assert opened.executor.submit(pow, 2, 5).result() == 32


def test_validate_on_dask_is_identical_to_in_process(scheduler: str, tmp_path: Path) -> None:
    """`validate --executor dask://...`: every check a task loading the target by name on a
    worker; the same evidence (timings aside) as the in-process run, a broken target included."""
    from orthoverify.conformance import validate
    from orthoverify.engine.executors import open_executor

    target, kind = "tests.planted.conformance_targets:householder_wrong_sign", "householder-product"
    here = validate(target, kind=kind, profile="quick", seed=5)
    with open_executor(f"dask://{scheduler}") as opened:
        there = validate(
            target, kind=kind, profile="quick", seed=5, executor=opened.executor, executor_name=opened.spec
        )
    assert there.executor == f"dask://{scheduler}" and here.executor == "serial"
    assert _stable(there) == _stable(here)
    assert {c.verdict for c in there.claims} == {"verified", "refuted"}
    path = tmp_path / "v.json"
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["validate", target, "--kind", kind, "--profile", "quick", "--dtype", "float64", "--executor",
         f"dask://{scheduler}", "--json", str(path)],
        out,
        err,
    )  # fmt: skip
    assert code == 1 and f"executor: dask://{scheduler}" in err.getvalue()
    assert json.loads(path.read_text())["executor"] == f"dask://{scheduler}"


# --------------------------------------------------------------------------- the same evidence everywhere
def test_one_thread_pins_blas_and_torch_and_restores() -> None:
    import torch
    from threadpoolctl import threadpool_info

    from orthoverify.engine.workers import one_thread

    torch_before = torch.get_num_threads()
    blas_before = [p["num_threads"] for p in threadpool_info()]
    with one_thread():
        assert torch.get_num_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    assert torch.get_num_threads() == torch_before
    assert [p["num_threads"] for p in threadpool_info()] == blas_before


@pytest.mark.slow
def test_serial_and_pool_give_the_same_evidence_digit_for_digit() -> None:
    """`--workers 1` (this process) and the pool: the same JSON apart from timings. Theorem 3.1's float
    checks run BLAS products up to n = 512, where a multi-threaded BLAS splits the work and rounds
    differently (before, the ratios differed in the third digit between the two)."""
    options: dict[str, Any] = {"profile": "quick", "seed": 0, "backends": ["numpy-float64"], "modules": CLAIM_MODULES}
    serial = run_checks(["cayley.theorem3_1"], workers=1, **options)
    pool = run_checks(["cayley.theorem3_1"], workers=2, **options)
    assert to_json(serial)["executor"] == "serial" and to_json(pool)["executor"] == "local"
    assert max(n for e in serial.claims[0].evidence for n, *_ in (e.data or {}).get("by_n", [])) >= 128
    assert _stable(serial) == _stable(pool)
