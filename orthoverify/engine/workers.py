"""What every task's process needs, whichever executor runs it: one BLAS and one torch thread per
task, and stopping a pool at once on an interrupt. Below both the runner (which runs tasks) and
the executors (which name pools), so that neither imports the other's module to get them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess

from threadpoolctl import threadpool_limits


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with one BLAS thread (NumPy's OpenBLAS or MKL, through threadpoolctl) and one
    torch thread, restoring the previous counts after. Every task runs so, in whatever executor:
    a BLAS kernel's rounding depends on how many threads split the work, and a pool worker, this
    process (``--workers 1``, ``serial``) and a Dask worker must give the same evidence, digit for
    digit, for the same seed."""
    import torch  # here, not at the top: the engine does not load torch until a task runs

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(threads)


def stop_workers(executor: Executor) -> None:
    """Stop an executor now, on an interrupt: queued tasks are cancelled and a process pool's
    workers are terminated (not waited for), so that no worker process outlives the run."""
    parts = getattr(executor, "parts", None)
    if callable(parts):  # a DeviceRouter: the CPU's pool and the device's
        for part in parts():
            stop_workers(part)
        return
    if not isinstance(executor, ProcessPoolExecutor):
        executor.shutdown(wait=False, cancel_futures=True)
        return
    procs = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if not ended(p, 0):
            p.terminate()
    for p in procs:
        if not ended(p, 5):
            p.kill()
            ended(p, None)
        p.join()  # exited: reaps it at once, unless the pool's thread already has


def ended(process: BaseProcess, timeout: float | None) -> bool:
    """Whether a worker process has exited, waiting up to ``timeout`` seconds (None: until it has).
    Read from its sentinel, which is ready once the process has exited whoever reaps it: the
    pool's own thread, joining its workers as the pool shuts down, may reap one between our
    ``waitpid`` and its recording the exit code, and ``is_alive()`` then says True for a process
    that no longer exists (seen about once in 40 runs of test_device_routing)."""
    return bool(wait([process.sentinel], timeout))
