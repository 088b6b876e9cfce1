"""Executors named by a string: where the tasks of a run go.

``open_executor(spec, workers)`` turns the string a user gives (``--executor``) into a
:class:`concurrent.futures.Executor`, opened for the duration of a ``with`` block and closed
after it. It knows nothing about checks: anything that submits picklable work (``check``,
``validate``) can use it. Specs:

- ``None`` or ``"local"``: a local process pool (:func:`~orthoverify.engine.runner.local_executor`);
- ``"serial"``: every task in this process, one after another;
- ``"dask://HOST:PORT"`` (port 8786 when left out): a running Dask distributed scheduler,
  through a ``distributed.Client`` and its ``get_executor()``;
- ``"dask://local"``, ``"dask-local"`` or ``"dask-local:N"``: a Dask ``LocalCluster`` of N
  single-threaded worker processes started here (for trying Dask out, and for tests).

The Dask executors need the optional ``distributed`` package (``pip install 'orthoverify[dask]'``)
and, on every worker, the same orthoverify (and claims modules) as here.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from orthoverify.engine.runner import SerialExecutor, local_executor
from orthoverify.engine.workers import stop_workers
from orthoverify.errors import InputError, OrthoverifyError

DASK_PORT = 8786
"""The Dask scheduler's default port."""

TIMEOUT_ENV = "ORTHOVERIFY_DASK_TIMEOUT"
"""Environment variable: seconds to wait for a Dask scheduler (and its first worker)."""

DEFAULT_TIMEOUT = 5.0

SPEC_HELP = (
    "local (process pool, the default), serial (this process), dask://HOST:PORT (a Dask scheduler), dask-local:N"
)


class ExecutorError(OrthoverifyError):
    """An executor cannot be opened: a missing optional package, an unreachable scheduler."""


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed executor string: its kind and what that kind needs."""

    kind: str  # "local", "serial", "dask" (a running scheduler) or "dask-local" (a LocalCluster here)
    address: str | None = None  # the scheduler's address for "dask", e.g. tcp://10.0.0.5:8786
    workers: int | None = None  # processes for "local" and "dask-local" (None: the caller's choice)

    @property
    def name(self) -> str:
        """The spec as recorded in results: local, serial, dask://HOST:PORT or dask-local:N."""
        if self.kind == "dask":
            assert self.address is not None
            return "dask://" + self.address.removeprefix("tcp://")
        if self.kind == "dask-local":
            return f"dask-local:{self.workers}" if self.workers else "dask-local"
        return self.kind


@dataclass(frozen=True)
class OpenedExecutor:
    """An open executor, what to record about it, and how many tasks it runs at once."""

    executor: Executor
    spec: str  # the normalised spec (ExecutorSpec.name), recorded in the run's JSON
    description: str  # for people: "dask://10.0.0.5:8786 (4 workers, 8 threads)"
    slots: int  # tasks run at the same time (processes, or Dask worker threads)


def parse_executor(spec: str | None) -> ExecutorSpec:
    """Parse an executor string (see the module docstring); a bad one raises :class:`InputError`."""
    if spec is None:
        return ExecutorSpec("local")
    s = spec.strip()
    low = s.lower()
    if low in ("local", "serial"):
        return ExecutorSpec(low)
    if low in ("dask://local", "dask-local") or low.startswith("dask-local:"):
        count = low.partition(":")[2] if low.startswith("dask-local:") else ""
        if not count:
            return ExecutorSpec("dask-local")
        if not count.isdigit() or int(count) < 1:
            raise InputError(f"bad executor {spec!r}: dask-local:N needs a positive number of workers N")
        return ExecutorSpec("dask-local", workers=int(count))
    if low.startswith("dask://"):
        try:
            parts = urlsplit(s)
            host, port = parts.hostname, parts.port
        except ValueError as exc:
            raise InputError(f"bad executor {spec!r}: {exc} (expected dask://HOST:PORT)") from None
        if not host or parts.path not in ("", "/") or parts.query or parts.username:
            raise InputError(f"bad executor {spec!r}: expected dask://HOST:PORT, e.g. dask://10.0.0.5:8786")
        netloc = f"[{host}]" if ":" in host else host
        return ExecutorSpec("dask", address=f"tcp://{netloc}:{port or DASK_PORT}")
    raise InputError(f"unknown executor {spec!r}; expected one of: {SPEC_HELP}")


def _timeout(timeout: float | None) -> float:
    if timeout is not None:
        return float(timeout)
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        return float(raw)
    except ValueError:
        raise InputError(f"${TIMEOUT_ENV} must be a number of seconds, got {raw!r}") from None


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ExecutorError(
            f"a Dask executor needs the 'distributed' package ({exc}); install it with pip install 'orthoverify[dask]'"
        ) from None
    return distributed


def _threads(client: Any) -> tuple[int, int]:
    """(workers, threads) the scheduler knows of now."""
    info = client.scheduler_info()
    workers = info.get("workers", {})
    return len(workers), sum(int(w.get("nthreads", 1)) for w in workers.values())


@contextlib.contextmanager
def _dask(address: str, name: str, timeout: float) -> Iterator[OpenedExecutor]:
    distributed = _import_distributed()
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {name} within {timeout:g} s ({exc}); is `dask scheduler` "
            f"running there, and the port open? (wait longer with ${TIMEOUT_ENV})"
        ) from None
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(
                f"the Dask scheduler at {name} has no workers after {timeout:g} s ({exc}); start some with "
                f"`dask worker {address}`"
            ) from None
        nworkers, nthreads = _threads(client)
        # pure=False: every task is run afresh, never served from a result cached under the same key
        ex = client.get_executor(pure=False)
        yield OpenedExecutor(ex, name, f"{name} ({nworkers} workers, {nthreads} threads)", max(nthreads, 1))
    finally:
        client.close()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored for the block (main thread only), so that processes started in it ignore it too."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _dask_local(workers: int, name: str, timeout: float) -> Iterator[OpenedExecutor]:
    distributed = _import_distributed()
    with _sigint_ignored():  # its worker processes inherit this: Ctrl-C is left to this process, which stops them
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
    try:
        with _dask(cluster.scheduler_address, name, timeout) as opened:
            yield opened
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the cluster's shutdown logs the tasks it cancels, as tracebacks
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        raise
    finally:
        cluster.close()


@contextlib.contextmanager
def open_executor(
    spec: str | None = None, workers: int | None = None, *, timeout: float | None = None, device: str = "cpu"
) -> Iterator[OpenedExecutor]:
    """Open the executor ``spec`` names for a ``with`` block, and close it (and any client) after.

    ``workers`` sizes the local process pool and ``dask-local`` (default: the CPU count, and 2);
    a running Dask cluster has the workers it has. ``timeout`` (default ``$ORTHOVERIFY_DASK_TIMEOUT``
    or 5 s) bounds the wait for a Dask scheduler and for its first worker. ``device`` (a local
    pool only): on a device other than the CPU, a few of the local processes own it and run every
    torch task (see :func:`~orthoverify.engine.runner.local_executor`).
    """
    parsed = parse_executor(spec)
    if workers is not None and workers < 1:
        raise InputError(f"workers must be a positive integer, got {workers}")
    if parsed.kind == "serial":
        yield OpenedExecutor(SerialExecutor(), "serial", "serial (this process)", 1)
    elif parsed.kind == "local":
        n = workers if workers is not None else (os.cpu_count() or 1)
        ex = local_executor(n, device)
        try:
            desc = "serial (this process)" if n <= 1 else f"local ({n} processes)"
            if n > 1 and device != "cpu":
                on_dev = getattr(ex, "device_processes", 1)
                desc = f"local ({n} processes, {on_dev} of them on {device})"
            yield OpenedExecutor(ex, "local", desc, n)
        except BaseException:  # an interrupt (or an error) on the way: no waiting for running tasks
            stop_workers(ex)
            raise
        finally:
            ex.shutdown(wait=True, cancel_futures=True)
    elif parsed.kind == "dask-local":
        n = parsed.workers or workers or 2
        with _dask_local(n, f"dask-local:{n}", _timeout(timeout)) as opened:
            yield opened
    else:
        assert parsed.address is not None
        with _dask(parsed.address, parsed.name, _timeout(timeout)) as opened:
            yield opened
