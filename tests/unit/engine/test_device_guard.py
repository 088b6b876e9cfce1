"""Every torch path honours the backend's device, checked without a GPU.

A torch check runs on the backend's device (``--device cuda``); one tensor made on the default
device instead (``torch.zeros(n)``, ``torch.tensor(d)``: the CPU) makes a CUDA run crash with
"Expected all tensors to be on the same device". CI has no GPU, so the guard here makes every
such allocation fail on the CPU: while a check runs, each torch factory whose result depends on
the default device (``torch.tensor``, ``zeros``, ``eye``, ``randn``, ...) must be given a device,
and ``torch.from_numpy`` (always the CPU) is refused. The check's backend is on ``cpu:0``, the
same CPU under another name, and a torch backend asked for on plain ``cpu`` inside the check is
refused too: one made without regard to the run's device (``get_backend("torch-float64")``),
unless it is the backend of a tensor at hand (``infer_backend(x)``: a tensor's device is plain
``cpu`` here, and the backend of x's device is right by construction). The
guard raises :class:`StrayAllocation`, a BaseException, so no ``except Exception`` in a check can
turn it into a verdict.

Every torch check of every registered claim runs under it on the quick profile's sizes, trimmed
to what takes the torch paths in seconds: one random case per size, a property check's first two
cases of each size up to n = 16, a search on five drawn cases. Not caught: a factory given
``device="cpu"`` outright, or ``.cpu()`` on the hot path (on the CPU these are where they should
be); the ``cuda``-marked test below runs the same checks on a GPU. The guard can fail: a planted
device-less ``torch.zeros``, ``torch.from_numpy``, a CPU-bound ``get_backend`` and a check making a
device-less ``torch.tensor`` are caught (and with the fixes of issue 30 reverted it names the 6
tasks that crashed or would crash on CUDA).
"""

from __future__ import annotations

import dataclasses
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils._device
from hypothesis import HealthCheck, Phase, given, seed, settings
from torch.overrides import TorchFunctionMode

import orthoverify.backends
from orthoverify.backends import get_backend
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine.checks import (
    Case,
    Check,
    PropertyCheck,
    RunContext,
    SearchCheck,
    case_size,
    derive_seed,
    select_backends,
)
from orthoverify.engine.model import Evidence
from orthoverify.engine.profiles import get_profile
from orthoverify.engine.registry import get_registry


class StrayAllocation(BaseException):
    """A tensor made without an explicit device while the guard is on."""


_FACTORIES = frozenset(torch.utils._device._device_constructors())
"""The functions whose result lands on the default device when no device is given (the set
``torch.set_default_device`` acts on)."""


class _DeviceGuard(TorchFunctionMode):
    """Raises :class:`StrayAllocation` on a default-device factory called without a device."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in _FACTORIES and kwargs.get("device") is None:
            keeps = func in (torch.as_tensor, torch.asarray) and args and isinstance(args[0], torch.Tensor)
            if not keeps:  # as_tensor of a tensor keeps that tensor's device
                raise StrayAllocation(f"torch.{func.__name__} called without a device")
        return func(*args, **kwargs)


def _refuse_from_numpy(*args: Any, **kwargs: Any) -> Any:
    raise StrayAllocation("torch.from_numpy makes a CPU tensor: use torch.as_tensor(..., device=...)")


GUARDED_DEVICE = "cpu:0"
"""The device of a guarded check's backend: the CPU, under a name no code writes by default."""

FROM_A_TENSOR = ("infer_backend", "_torch_backend", "_complex_dtype_backend")
"""Functions that ask for the torch backend of a tensor's own device (orthoverify.backends, param/unitary.py,
param/householder_torch.py): their plain ``cpu`` is the tensor's, not a default."""


@contextmanager
def device_guard() -> Iterator[None]:
    """Every tensor made inside must name its device, and no torch backend is made for plain
    ``cpu`` (see the module docstring)."""
    make = orthoverify.backends._get_backend

    def no_cpu_backend(name: str, device: str) -> Any:
        caller = sys._getframe(2).f_code.co_name  # 1: get_backend, 2: who asked
        if name.startswith("torch") and torch.device(device) == torch.device("cpu") and caller not in FROM_A_TENSOR:
            raise StrayAllocation(f"a {name} backend made for the CPU, not for the run's device ({GUARDED_DEVICE})")
        return make(name, device)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch, "from_numpy", _refuse_from_numpy)
        mp.setattr(orthoverify.backends, "_get_backend", no_cpu_backend)
        with _DeviceGuard():
            yield


def _where(exc: BaseException) -> str:
    """The package frames of the stray allocation, innermost last."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/orthoverify/" in f.filename]
    return " <- ".join(f"{f.filename.rsplit('/orthoverify/', 1)[1]}:{f.lineno}" for f in reversed(frames[-4:]))


def _torch_tasks() -> list[tuple[str, str, str]]:
    out = []
    for claim in get_registry(CLAIM_MODULES).select(None):
        for check in claim.checks:
            out.extend((claim.id, check.name, b) for b in select_backends(check, None) if b.startswith("torch"))
    return out


TASKS = _torch_tasks()
PROFILE = dataclasses.replace(get_profile("quick"), cases=1, search_examples=5, timing_repeats=1)
"""Quick's sizes (so every size-dependent torch path is taken), one random case each."""

MAX_N = 16
"""The largest case a property check is run on here (quick's largest size): a check's big cases
(n = 512) take the same torch paths as its small ones, only slower."""

PER_SIZE = 2
"""The cases of each size a property check is run on here (the first ones: exhaustive checks
enumerate hundreds of (k1, k2) pairs that take one torch path)."""


BIG_RUN = 3
"""Consecutive cases above ``MAX_N`` after which a property check's cases stop here: making them
is what costs (a Haar matrix of n = 512), and case generators go up in size (a few interleave
one big case between small ones, which are kept)."""


def _drawn(check: SearchCheck) -> PropertyCheck:
    """A search as a property check over ``PROFILE.search_examples`` cases its strategy draws (no
    targeting, no shrinking: shrinking reruns the same torch path, for seconds)."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        drawn: list[Case] = []

        @settings(
            max_examples=PROFILE.search_examples,
            phases=[Phase.generate],
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @seed(ctx.seed)
        @given(check.strategy(ctx))
        def collect(case: Case) -> None:
            drawn.append(case)

        collect()
        return iter(drawn)

    return PropertyCheck(
        check.name, check.quantity, cases, check.backends, check.quantity_name, check.threshold, confirm=check.confirm
    )


def _small(check: Check) -> Check:
    """``check`` on its first ``PER_SIZE`` cases of each size up to ``MAX_N``, stopping after
    ``BIG_RUN`` bigger ones in a row (property checks; a search on a few drawn cases)."""
    if isinstance(check, SearchCheck):
        check = _drawn(check)
    if not isinstance(check, PropertyCheck):
        return check
    cases = check.cases

    def small(ctx: RunContext) -> Iterator[Case]:
        seen: dict[int, int] = {}
        big = 0
        for c in cases(ctx):
            n = case_size(c) or 0
            big = big + 1 if n > MAX_N else 0
            if big >= BIG_RUN:
                return
            seen[n] = seen.get(n, 0) + 1
            if n <= MAX_N and seen[n] <= PER_SIZE:
                yield c

    return dataclasses.replace(check, cases=small)


def _run(claim_id: str, check_name: str, backend: str, device: str) -> list[Evidence]:
    claim = get_registry(CLAIM_MODULES)[claim_id]
    ctx = RunContext(
        claim=claim_id,
        check=check_name,
        backend=get_backend(backend, device),
        profile=PROFILE,
        seed=derive_seed(0, claim_id, check_name),
        device=device,
    )
    got = _small(claim.check(check_name)).run(ctx)
    return [got] if isinstance(got, Evidence) else list(got)


def _run_guarded(claim_id: str, check_name: str, backend: str) -> list[Evidence]:
    try:
        with device_guard():
            return _run(claim_id, check_name, backend, GUARDED_DEVICE)
    except StrayAllocation as exc:
        pytest.fail(f"{claim_id} {check_name} on {backend}: {exc}, at {_where(exc)}", pytrace=False)


def test_every_claim_with_torch_evidence_is_covered() -> None:
    claims = {c for c, _, _ in TASKS}
    assert len(claims) >= 50, f"only {len(claims)} claims have torch checks: has the registry changed?"
    assert {"cayley.theorem3_2", "unitary.coverage", "householder.algorithm1"} <= claims


GUARDED = sorted({c for c, _, _ in TASKS})
FAST_GUARDED = {min(c for c in GUARDED if c.split(".")[0] == f) for f in {c.split(".")[0] for c in GUARDED}} | {
    "cayley.theorem3_2",
    "unitary.coverage",
    "householder.algorithm1",
}
"""Claims whose guarded run stays in the fast tier (tests/conftest.py): the first of each family and
the three named above; the others are ``slow`` (together about 7% of the fast tier's time), and the
full suite runs every one."""


@pytest.mark.parametrize(
    "claim_id", [c if c in FAST_GUARDED else pytest.param(c, marks=pytest.mark.slow) for c in GUARDED]
)
def test_torch_checks_allocate_on_the_backends_device(claim_id: str) -> None:
    for cid, check_name, backend in TASKS:
        if cid != claim_id:
            continue
        for ev in _run_guarded(cid, check_name, backend):
            assert ev.error is None, f"{cid} {check_name} on {backend} erred under the guard: {ev.error}"


def test_the_guard_catches_a_planted_stray_allocation() -> None:
    b = get_backend("torch-float64", "cpu")
    with pytest.raises(StrayAllocation, match="zeros"), device_guard():
        b.eye(3) + torch.zeros(3, 3, dtype=torch.float64)  # the planted defect: no device
    with pytest.raises(StrayAllocation, match="from_numpy"), device_guard():
        torch.from_numpy(np.ones(2))
    with pytest.raises(StrayAllocation, match="made for the CPU"), device_guard():
        get_backend("torch-float32")  # the planted defect: a torch backend fixed to the CPU
    with device_guard():  # what the backend makes, as_tensor of a tensor, other backends pass
        x = b.asarray(np.ones(2)) + b.zeros(2)
        assert torch.as_tensor(x) is x
        assert get_backend("torch-float32", GUARDED_DEVICE).name == "torch-float32"
        assert get_backend("numpy-float64").name == "numpy-float64"
        t = torch.zeros(2, dtype=torch.float32, device="cpu")
        assert orthoverify.backends.infer_backend(t).name == "torch-float32"


def test_the_guard_catches_a_stray_allocation_inside_a_check() -> None:
    """The same guard over a check whose quantity makes a device-less tensor fails the test."""
    from orthoverify.engine.checks import PropertyCheck

    def stray(b: Any, case: Any) -> float:
        return float(b.norm(b.asarray(case["x"]) - torch.tensor(case["x"], dtype=torch.float64)))

    check = PropertyCheck("stray", stray, lambda ctx: iter([{"x": [1.0, 2.0]}]), ("torch-float64",), "q")
    ctx = RunContext("planted", "stray", get_backend("torch-float64", GUARDED_DEVICE), PROFILE, 0)
    with pytest.raises(StrayAllocation, match="tensor"), device_guard():
        check.run(ctx)


@pytest.mark.cuda
@pytest.mark.parametrize("claim_id", sorted({c for c, _, _ in TASKS}))
def test_torch_checks_run_on_cuda_as_on_the_cpu(claim_id: str) -> None:
    """On a GPU, what the guard stands for: every torch check runs there without error, passing
    or failing as on the CPU (same cases)."""
    for cid, check_name, backend in TASKS:
        if cid != claim_id:
            continue
        on_gpu = _run(cid, check_name, backend, "cuda")
        assert all(ev.error is None for ev in on_gpu), [ev.error for ev in on_gpu]
        on_cpu = _run(cid, check_name, backend, "cpu")
        assert [ev.passed for ev in on_gpu] == [ev.passed for ev in on_cpu], (cid, check_name, backend)
