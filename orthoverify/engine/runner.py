"""Running checks: tasks, workers, and the result of a run.

A run is a list of tasks (claim, check, backend); tasks go to any
:class:`concurrent.futures.Executor` (a local process pool by default, an in-process serial
executor for ``workers=1``), so another executor (a cluster's) can be plugged in. Results are
ordered by registry order, never by completion order, so a seed gives the same result.
"""

from __future__ import annotations

import os
import platform
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from orthoverify._package import __version__
from orthoverify.backends import get_backend
from orthoverify.engine.checks import RunContext, derive_seed, select_backends
from orthoverify.engine.model import COUNTED, VERDICTS, Claim, Counterexample, Evidence, Paper, Verdict, decide
from orthoverify.engine.profiles import get_profile
from orthoverify.engine.registry import Registry, get_registry
from orthoverify.engine.workers import one_thread, stop_workers
from orthoverify.errors import BackendError, InputError


class ClaimLookup(Protocol):
    """Claims by id: the registry, or a family's claims."""

    def __getitem__(self, claim_id: str) -> Claim: ...


class ClaimFamily(Protocol):
    """Claims built at run time rather than registered (a target's conformance claims, see
    :class:`orthoverify.conformance.family.FamilyRef`), named by a picklable value that rebuilds
    them in whatever process runs a task: ``opened()`` gives them by id for the task's duration
    (and releases what it took, a target's process, after)."""

    def opened(self) -> AbstractContextManager[ClaimLookup]: ...


@dataclass(frozen=True)
class Task:
    """One check of one claim on one backend: the unit of parallel work (picklable). The claim
    is a registered one (``modules``) or, with ``family``, one of that family."""

    claim: str
    check: str
    backend: str
    device: str
    profile: str
    seed: int
    modules: tuple[str, ...]
    family: ClaimFamily | None = None


@contextmanager
def _claims(task: Task) -> Iterator[ClaimLookup]:
    if task.family is None:
        yield get_registry(task.modules)
    else:
        with task.family.opened() as claims:
            yield claims


def execute(task: Task) -> list[Evidence]:
    """Run one task (in whatever process the executor chose): its evidence, one row or, for a
    check over a target's session, one per dtype measured. Never raises."""
    start = time.perf_counter()
    try:
        with _claims(task) as claims:
            claim = claims[task.claim]
            check = claim.check(task.check)
            backend = get_backend(task.backend, task.device)
            seeded_as = claims.seed_name(task.claim, task.check) if isinstance(claims, Registry) else task.check
            ctx = RunContext(
                claim=task.claim,
                check=task.check,
                backend=backend,
                profile=get_profile(task.profile),
                seed=derive_seed(task.seed, task.claim, seeded_as),
                device=task.device,
                run_seed=task.seed,
            )

            with one_thread():  # as in every executor, so that every executor gives the same evidence
                got = check.run(ctx)
    except Exception as exc:  # a crash is a bug, recorded as an error verdict
        got = Evidence(
            claim=task.claim,
            check=task.check,
            method="float",
            backend=task.backend,
            passed=False,
            error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
        )
    seconds = time.perf_counter() - start
    if isinstance(got, Evidence):
        got.seconds = seconds
        return [got]
    for ev in got:  # rows of a session check carry their own times
        ev.seconds = ev.seconds or seconds
    return got


class SerialExecutor(Executor):
    """Runs each task in this process when submitted (``--workers 1``)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:  # pragma: no cover - execute() never raises
            fut.set_exception(exc)
        return fut  # an interrupt (KeyboardInterrupt) propagates at once: nothing more is run


def _init_worker() -> None:
    """One thread per worker: the pool is the parallelism, and BLAS threads would fight it. Ctrl-C
    (sent to the whole process group) is left to the parent, which stops the workers."""
    import signal

    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def on_device(task: Task) -> bool:
    """Whether ``task`` computes on an accelerator: a torch backend on a device other than the CPU."""
    return task.backend.startswith("torch") and task.device != "cpu"


class DeviceRouter(Executor):
    """Two executors behind one: a :class:`Task` that runs :func:`on_device` goes to ``device``,
    every other submission to ``cpu``. For ``check --device cuda``: the torch-on-CUDA checks run in
    the few processes that own the GPU (one CUDA context each, where a pool of one per core would
    start one per core and queue the GPU's tiny kernels from all of them), the rest in the CPU pool."""

    def __init__(
        self, cpu: Executor, device: Executor, route: Callable[[Task], bool] = on_device, device_processes: int = 1
    ) -> None:
        self.cpu = cpu
        self.device = device
        self.route = route
        self.device_processes = device_processes  # how many processes the device part has (for descriptions)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        to_device = bool(args) and isinstance(args[0], Task) and self.route(args[0])
        return (self.device if to_device else self.cpu).submit(fn, *args, **kwargs)

    def parts(self) -> tuple[Executor, Executor]:
        """The executors behind this one (the CPU's, the device's)."""
        return self.cpu, self.device

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.device.shutdown(wait=wait, cancel_futures=cancel_futures)
        self.cpu.shutdown(wait=wait, cancel_futures=cancel_futures)


MAX_DEVICE_WORKERS = 4
"""The most processes that own the device by default (one CUDA context each)."""

DEVICE_WORKERS_ENV = "ORTHOVERIFY_DEVICE_WORKERS"
"""Environment variable: how many processes own the device instead (a positive integer)."""


def device_workers_default(workers: int) -> int:
    """How many of a local run's ``workers`` processes own the device: ``$ORTHOVERIFY_DEVICE_WORKERS``
    when set, else a quarter of them (at least 1, at most :data:`MAX_DEVICE_WORKERS`). The torch
    tasks are about a third of the quick profile's work on the CPU (61 of 172 task-seconds on the
    2-core development machine); on a GPU, tiny kernels make each slower to launch than to compute,
    and a few processes overlap that overhead where one would queue it all. Not yet measured on a
    GPU: tools/gpu-check times it."""
    raw = os.environ.get(DEVICE_WORKERS_ENV, "").strip()
    if not raw:
        return max(1, min(MAX_DEVICE_WORKERS, workers // 4))
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"${DEVICE_WORKERS_ENV} must be a positive integer, got {raw!r}")
    return int(raw)


def local_executor(workers: int, device: str = "cpu", device_workers: int | None = None) -> Executor:
    """A process pool of ``workers`` processes, or the serial executor for one worker (this
    process then owns the device, if any). On a device other than the CPU, ``device_workers``
    (default :func:`device_workers_default`) of the ``workers`` processes, at most all but one, run
    the tasks :func:`on_device` and the others every other task (a :class:`DeviceRouter`)."""
    if workers <= 1:
        return SerialExecutor()
    if device == "cpu":
        return _process_pool(workers)
    if device_workers is None:
        device_workers = device_workers_default(workers)
    if device_workers < 1:
        raise ValueError(f"device_workers must be a positive integer, got {device_workers}")
    on_dev = min(device_workers, workers - 1)
    return DeviceRouter(_process_pool(workers - on_dev), _process_pool(on_dev), device_processes=on_dev)


def _process_pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker
    )


@dataclass
class ClaimResult:
    """A claim, its evidence and the verdict the evidence earned."""

    claim: Claim
    evidence: list[Evidence]
    verdict: Verdict

    @property
    def counterexample(self) -> Counterexample | None:
        """The strongest counterexample any check found (every one stays in its evidence):
        see :func:`strongest`."""
        return strongest([e.counterexample for e in self.evidence if e.counterexample is not None])

    @property
    def methods(self) -> list[str]:
        seen: list[str] = []
        for e in self.evidence:
            if e.method not in seen:
                seen.append(e.method)
        return seen

    @property
    def worst_ratio(self) -> tuple[float, float] | None:
        """(worst ratio, its threshold) over evidence that has ratios, by ratio / threshold."""
        best: tuple[float, float] | None = None
        for e in self.evidence:
            if e.worst_ratio is None or not e.threshold:
                continue
            if best is None or not (e.worst_ratio / e.threshold <= best[0] / best[1]):
                best = (e.worst_ratio, e.threshold)
        return best

    def notes(self) -> str:
        parts = [self.claim.notes] if self.claim.notes else []
        if not self.evidence:
            parts.append("no check ran on the selected backends")
        for e in self.evidence:
            if not e.passed and e.error is None and e.notes:
                parts.append(f"[{e.check} on {e.backend}] {e.notes}")
        return " ".join(parts)


@dataclass
class RunResult:
    """Everything a run produced, ready for JSON."""

    profile: str
    seed: int
    device: str
    workers: int
    backends: list[str] | None
    claims: list[ClaimResult]
    started: str
    seconds: float
    environment: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    """Extra top-level JSON keys (``validate``: the target and kind of a conformance run)."""
    executor: str = "local"
    """Where the tasks ran: local, serial, dask://HOST:PORT, ... (recorded in the JSON)."""
    papers: dict[str, Paper] = field(default_factory=dict)
    """The source papers of the claims, by paper key (written to the JSON, so that a report needs
    no claim code to cite them)."""

    @property
    def errored(self) -> bool:
        return any(c.verdict == "error" for c in self.claims)

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS if v in COUNTED or any(c.verdict == v for c in self.claims)}
        for c in self.claims:
            out[c.verdict] += 1
        return out


def strongest(found: Sequence[Counterexample]) -> Counterexample | None:
    """The counterexample a claim's result records: exact before more digits before fewer
    (a float one last), then the smallest (fewest input entries, then shortest decimal text),
    then the first found (evidence order)."""

    def key(ix: tuple[int, Counterexample]) -> tuple[int, int, int, int, int]:
        i, cx = ix
        exact = cx.precision_digits == "exact"
        digits = 0 if exact else int(cx.precision_digits)
        return (0 if exact else 1, -digits, input_entries(cx.inputs), len(str(cx.inputs)), i)

    return min(enumerate(found), key=key)[1] if found else None


def input_entries(x: Any) -> int:
    """How many scalar entries a counterexample's inputs hold (nested lists counted entry by
    entry; a label or a number is one)."""
    if isinstance(x, dict):
        return sum(input_entries(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(input_entries(v) for v in x)
    return 1


def environment(device: str) -> dict[str, Any]:
    """Versions and machine facts recorded in every result."""
    import hypothesis
    import mpmath
    import numpy
    import sympy
    import torch


    dev = "cpu"
    if device.startswith("cuda") and torch.cuda.is_available():
        dev = f"cuda ({torch.cuda.get_device_name(0)})"
    return {
        "orthoverify": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "torch": torch.__version__,
        "mpmath": mpmath.__version__,
        "sympy": sympy.__version__,
        "hypothesis": hypothesis.__version__,
        "device": dev,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }


Progress = Callable[[int, int, Evidence], None]


def plan(
    claims: Sequence[Claim],
    *,
    profile: str,
    seed: int,
    device: str,
    backends: Sequence[str] | None,
    modules: tuple[str, ...],
    family: ClaimFamily | None = None,
) -> list[Task]:
    """The tasks of a run, in registry order (``claims`` of ``family``, when given, in its order)."""
    tasks = []
    for claim in claims:
        for check in claim.checks:
            for bname in select_backends(check, backends):
                tasks.append(Task(claim.id, check.name, bname, device, profile, seed, modules, family))
    return tasks


def run_checks(
    patterns: Sequence[str] | None = None,
    *,
    profile: str = "default",
    seed: int = 0,
    backends: Sequence[str] | None = None,
    device: str = "cpu",
    workers: int | None = None,
    executor: Executor | None = None,
    executor_name: str | None = None,
    modules: Sequence[str],
    progress: Progress | None = None,
) -> RunResult:
    """Run the checks of every claim matching ``patterns`` in the claims ``modules`` (orthoverify's
    own: ``orthoverify.claims.MODULES``) and decide each verdict.

    ``executor`` runs the tasks; without one, ``workers`` > 1 starts a local pool of that many
    processes (closed afterwards; a script that asks for one needs ``if __name__ == "__main__":``,
    as every spawned process pool does), and ``workers`` None or 1 runs them in this process,
    which works from any script; on a ``device`` other than the CPU a few of the pool's processes
    own the device and run the torch tasks (see :func:`local_executor`). ``executor_name`` is what
    the result records about it (see
    :func:`orthoverify.engine.executors.open_executor`). A task whose worker died or was lost
    becomes error evidence of that task; the others still count. A run in which every task
    erred warns (``RuntimeWarning``) with the first error.
    """
    get_profile(profile)  # fail early on a bad profile name
    if device != "cpu":
        get_backend("torch-float64", device)  # fail early when CUDA is missing
    if backends is not None:
        for name in backends:
            get_backend(name, device)  # fail early on an unknown backend
    mods = tuple(modules)
    registry = get_registry(mods)
    claims = registry.select(patterns)
    tasks = plan(claims, profile=profile, seed=seed, device=device, backends=backends, modules=mods)
    if backends is not None and not tasks:
        used = sorted({b for c in claims for check in c.checks for b in check.backend_names()})
        raise BackendError(
            f"no check of the {len(claims)} selected claim(s) runs on {', '.join(backends)}; "
            f"their checks use {', '.join(used)}"
        )
    result = run_tasks(
        claims,
        tasks,
        profile=profile,
        seed=seed,
        device=device,
        workers=workers,
        executor=executor,
        executor_name=executor_name,
        backends=backends,
        progress=progress,
    )
    result.papers = {c.paper: registry.papers[c.paper] for c in claims if c.paper in registry.papers}
    return result


def run_tasks(
    claims: Sequence[Claim],
    tasks: Sequence[Task],
    *,
    profile: str,
    seed: int,
    device: str,
    workers: int | None = None,
    executor: Executor | None = None,
    executor_name: str | None = None,
    backends: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``tasks`` (see :func:`plan`) on ``executor`` (or a local one of ``workers``, as in
    :func:`run_checks`), gather each claim's evidence in task order and decide its verdict."""
    nworkers = workers if workers is not None else 1
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    own = executor is None
    ex = executor if executor is not None else local_executor(min(nworkers, max(len(tasks), 1)), device)
    results: dict[int, list[Evidence]] = {}
    try:
        if isinstance(ex, SerialExecutor):  # one task at a time, each reported as it finishes
            for i, t in enumerate(tasks):
                results[i] = execute(t)
                if progress is not None and results[i]:
                    progress(i + 1, len(tasks), results[i][0])
        futures = {} if isinstance(ex, SerialExecutor) else {ex.submit(execute, t): i for i, t in enumerate(tasks)}
        from concurrent.futures import as_completed

        for done, fut in enumerate(as_completed(futures), start=1):
            i = futures[fut]
            try:
                evs = fut.result()
            except Exception as exc:  # execute() never raises: the worker died, or the executor lost the task
                evs = [_lost(tasks[i], exc)]
            results[i] = evs
            if progress is not None and evs:
                progress(done, len(tasks), evs[0])
    except BaseException:  # an interrupt (SIGINT, SIGTERM) or an error: stop the workers, wait for nothing
        if own:
            stop_workers(ex)
        raise
    finally:
        if own:
            ex.shutdown(wait=True, cancel_futures=True)
    by_claim: dict[str, list[Evidence]] = {c.id: [] for c in claims}
    for i in range(len(tasks)):
        by_claim[tasks[i].claim].extend(results[i])
    claim_results = [ClaimResult(c, by_claim[c.id], decide(by_claim[c.id])) for c in claims]
    result = RunResult(
        profile=profile,
        seed=seed,
        device=device,
        workers=nworkers,
        backends=list(backends) if backends is not None else None,
        claims=claim_results,
        started=started,
        seconds=time.perf_counter() - t0,
        environment=environment(device),
        executor=executor_name or _executor_name(ex, own),
    )
    _warn_if_all_erred(result)
    return result


def _warn_if_all_erred(result: RunResult) -> None:
    """A run whose every task erred decides nothing: say so loudly, with the first error."""
    evidence = [e for c in result.claims for e in c.evidence]
    if evidence and all(e.error for e in evidence):
        first = str(evidence[0].error).strip().splitlines()[0]
        warnings.warn(
            f"every check of this run erred ({len(evidence)} of {len(evidence)}); the first: {first}",
            RuntimeWarning,
            stacklevel=3,
        )


def _lost(task: Task, exc: BaseException) -> Evidence:
    """Error evidence for a task the executor could not bring back (a crashed or lost worker)."""
    if isinstance(exc, BrokenProcessPool):
        why = f"worker process died: {exc}"
        if _main_is_script():
            why += (
                '; a script that starts a process pool must call it under `if __name__ == "__main__":` '
                "(or run the checks in this process: workers=1, the default)"
            )
    else:
        why = f"the executor lost this task ({type(exc).__name__}: {exc}); a worker may have crashed or been lost"
    return Evidence(task.claim, task.check, "float", task.backend, passed=False, error=why)


def _main_is_script() -> bool:
    """Whether this process runs a script file: a spawned worker re-runs its top level, and dies there
    when that starts a pool unguarded."""
    import sys

    main = sys.modules.get("__main__")
    return getattr(getattr(main, "__spec__", None), "name", None) is None and bool(getattr(main, "__file__", None))


def _executor_name(ex: Executor, own: bool) -> str:
    """What to record for an executor given without a name."""
    if isinstance(ex, SerialExecutor):
        return "serial"
    if own or isinstance(ex, DeviceRouter):
        return "local"
    return type(ex).__name__
