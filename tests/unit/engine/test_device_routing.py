"""A run on a GPU uses the GPU: in ``check --device cuda`` the torch tasks go to the process that
owns the device, every other task to the CPU pool (engine/runner.DeviceRouter). Tested on the CPU
with a device name no task can run on, so only the routing is exercised; the run on a real GPU is
marked ``cuda``."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine.executors import open_executor
from orthoverify.engine.model import Evidence
from orthoverify.engine.registry import get_registry
from orthoverify.engine.runner import DeviceRouter, SerialExecutor, Task, local_executor, on_device, plan, run_tasks
from orthoverify.engine.workers import ended, stop_workers
from orthoverify.errors import InputError

CLAIMS = ("householder.algorithm1", "cayley.theorem3_2", "unitary.coverage")
"""Claims with torch and non-torch checks (NumPy, mpmath, SymPy)."""


def _plan(device: str) -> tuple[list[Any], list[Task]]:
    claims = get_registry(CLAIM_MODULES).select(list(CLAIMS))
    return claims, plan(claims, profile="quick", seed=0, device=device, backends=None, modules=CLAIM_MODULES)


class _Recording(Executor):
    """Records the tasks submitted to it and answers each with canned evidence (nothing runs)."""

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        (task,) = args
        self.tasks.append(task)
        fut: Future[Any] = Future()
        fut.set_result([Evidence(task.claim, task.check, "float", task.backend, passed=True)])
        return fut


def test_on_device_is_a_torch_task_off_the_cpu() -> None:
    t = Task("c", "k", "torch-float64", "cuda", "quick", 0, CLAIM_MODULES)
    assert on_device(t)
    assert not on_device(Task("c", "k", "torch-float64", "cpu", "quick", 0, CLAIM_MODULES))
    assert not on_device(Task("c", "k", "numpy-float64", "cuda", "quick", 0, CLAIM_MODULES))
    assert not on_device(Task("c", "k", "mpmath", "cuda", "quick", 0, CLAIM_MODULES))


def test_router_sends_torch_tasks_to_the_device_and_the_rest_to_the_cpu() -> None:
    claims, tasks = _plan("fake-gpu")
    cpu, dev = _Recording(), _Recording()
    result = run_tasks(claims, tasks, profile="quick", seed=0, device="fake-gpu", executor=DeviceRouter(cpu, dev))
    assert dev.tasks and cpu.tasks and len(dev.tasks) + len(cpu.tasks) == len(tasks)
    assert all(t.backend.startswith("torch") for t in dev.tasks)
    assert not any(t.backend.startswith("torch") for t in cpu.tasks)
    assert {t.backend for t in cpu.tasks} >= {"numpy-float64", "mpmath"}
    # evidence comes back in plan order, whichever part ran it
    got = [(e.claim, e.check, e.backend) for c in result.claims for e in c.evidence]
    assert got == [(t.claim, t.check, t.backend) for t in tasks]
    assert result.executor == "local"


def test_on_the_cpu_nothing_is_routed() -> None:
    claims, tasks = _plan("cpu")
    cpu, dev = _Recording(), _Recording()
    run_tasks(claims, tasks, profile="quick", seed=0, device="cpu", executor=DeviceRouter(cpu, dev))
    assert not dev.tasks and len(cpu.tasks) == len(tasks)


def test_local_executor_gives_the_device_one_process() -> None:
    ex = local_executor(4, "cuda")
    try:
        assert isinstance(ex, DeviceRouter)
        cpu, dev = ex.parts()
        assert isinstance(cpu, ProcessPoolExecutor) and isinstance(dev, ProcessPoolExecutor)
        assert (cpu._max_workers, dev._max_workers) == (3, 1)  # type: ignore[attr-defined]
    finally:
        ex.shutdown()
    big = local_executor(16, "cuda")  # a quarter, at most 4 (nothing submitted: no process starts)
    assert isinstance(big, DeviceRouter) and big.device_processes == 4
    assert big.parts()[0]._max_workers == 12  # type: ignore[attr-defined]
    big.shutdown()
    huge = local_executor(64, "cuda")
    assert isinstance(huge, DeviceRouter) and huge.device_processes == 4
    huge.shutdown()
    assert isinstance(local_executor(1, "cuda"), SerialExecutor)  # this process owns the device
    cpu_only = local_executor(2, "cpu")
    assert isinstance(cpu_only, ProcessPoolExecutor)
    cpu_only.shutdown()
    with pytest.raises(ValueError, match="device_workers"):
        local_executor(2, "cuda", device_workers=0)


def test_device_workers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORTHOVERIFY_DEVICE_WORKERS", "2")
    ex = local_executor(4, "cuda")
    assert isinstance(ex, DeviceRouter) and ex.device_processes == 2
    assert ex.parts()[0]._max_workers == 2  # type: ignore[attr-defined]
    ex.shutdown()
    ex = local_executor(2, "cuda")  # at most all but one
    assert isinstance(ex, DeviceRouter) and ex.device_processes == 1
    ex.shutdown()
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("ORTHOVERIFY_DEVICE_WORKERS", bad)
        with pytest.raises(InputError, match="ORTHOVERIFY_DEVICE_WORKERS"):
            local_executor(4, "cuda")


def _pid(task: Task) -> int:
    return os.getpid()


def test_device_tasks_share_one_process_apart_from_the_cpu_pool() -> None:
    """Real processes (spawned, not started on any device): every device task in one process, none
    of the CPU pool's; stop_workers (an interrupt) stops both pools."""
    _, tasks = _plan("fake-gpu")
    ex = local_executor(2, "fake-gpu")
    assert isinstance(ex, DeviceRouter)
    try:
        futs = [(on_device(t), ex.submit(_pid, t)) for t in tasks]
        dev_pids = {f.result() for d, f in futs if d}
        cpu_pids = {f.result() for d, f in futs if not d}
        assert len(dev_pids) == 1 and not dev_pids & cpu_pids and os.getpid() not in dev_pids | cpu_pids
        procs = [p for part in ex.parts() for p in part._processes.values()]  # type: ignore[attr-defined]
        assert {p.pid for p in procs} == dev_pids | cpu_pids
    finally:
        stop_workers(ex)
    assert all(ended(p, 0) for p in procs)  # not is_alive(): the pool's thread may reap one first


def test_open_executor_names_the_device_process() -> None:
    with open_executor("local", 3, device="cuda") as opened:  # nothing submitted: no process starts
        assert isinstance(opened.executor, DeviceRouter) and opened.slots == 3
        assert opened.description == "local (3 processes, 1 of them on cuda)"
    with open_executor("local", 3) as opened:
        assert isinstance(opened.executor, ProcessPoolExecutor)


@pytest.mark.cuda
def test_cuda_run_routes_and_agrees_with_the_cpu() -> None:
    """On a GPU: the claims that crashed there (issue 30) run without error, the torch checks in
    the device's process, with the CPU's verdicts."""
    from orthoverify.engine import run_checks

    on_gpu = run_checks(list(CLAIMS), profile="quick", device="cuda", workers=3, modules=CLAIM_MODULES)
    on_cpu = run_checks(list(CLAIMS), profile="quick", device="cpu", workers=1, modules=CLAIM_MODULES)
    assert not on_gpu.errored, [e.error for c in on_gpu.claims for e in c.evidence if e.error]
    assert [c.verdict for c in on_gpu.claims] == [c.verdict for c in on_cpu.claims]
    assert "cuda" in on_gpu.environment["device"]
