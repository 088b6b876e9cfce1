"""The kinds (issue 26): one module per kind under orthoverify/conformance/kinds/, each declaring
its data consistently: special points the target can be called with, and coverage targets its
reference inverse reaches through its reference."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance import kinds
from orthoverify.conformance.kinds import KINDS, Kind
from orthoverify.engine.ratios import THRESHOLD, agreement

F64 = get_backend("numpy-float64")


def test_each_kind_is_declared_in_a_module_of_its_own() -> None:
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(kinds.__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{kinds.__name__}.{info.name}")
        own = [v for v in vars(module).values() if isinstance(v, Kind)]
        assert len(own) == 1, f"kinds/{info.name}.py declares {len(own)} kinds"
        found[own[0].name] = info.name
    assert sorted(found) == sorted(KINDS)


@pytest.mark.parametrize("kind", KINDS.values(), ids=lambda k: k.name)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_points_are_named_once_and_callable(kind: Kind, dtype: str) -> None:
    points = kind.specials(dtype)
    names = [name for name, _ in points]
    assert len(names) == len(set(names))
    dt = torch.float32 if dtype == "float32" else torch.float64
    for name, p in points:
        assert set(p) == set(kind.draw(np.random.default_rng(0), 3, 1.0)), name
        args = kind.args(p, dt, "cpu")
        assert all(isinstance(a, torch.Tensor) for a in args), name
        assert len(kind.out_shape(p)) == 2, name


def _round_trip(kind: Kind, q: np.ndarray) -> float:
    """The reference at the kind's inverse of ``q`` against ``q`` (test ratio, scaled by the kind's condition)."""
    assert kind.inverse is not None and kind.reference is not None
    p = kind.inverse(q)
    assert p is not None
    kappa = kind.condition(p) if kind.condition is not None else 1.0
    got = np.asarray(F64.to_numpy(kind.reference(p, F64)), dtype=np.float64)
    return agreement(F64, got, q, q.shape[0], kappa).ratio


@pytest.mark.parametrize("kind", [k for k in KINDS.values() if k.inverse is not None], ids=lambda k: k.name)
def test_coverage_targets_are_reached_through_the_inverse(kind: Kind) -> None:
    rng = np.random.default_rng(1)
    for n in kind.sizes:
        for label, q in kind.coverage_targets(rng, n):
            assert q.shape == (n, n), label
            assert _round_trip(kind, q) <= THRESHOLD, f"{kind.name}, {label}, n = {n}"


def test_the_round_trip_fails_for_a_transposed_target() -> None:
    """The round trip above can fail: the householder inverse's parameters for Q give Q, not Q'."""
    kind = KINDS["householder-product"]
    q = kind.coverage_targets(np.random.default_rng(2), 4)[0][1]
    p = kind.inverse(q) if kind.inverse is not None else None
    assert p is not None and kind.reference is not None
    got = np.asarray(F64.to_numpy(kind.reference(p, F64)), dtype=np.float64)
    assert agreement(F64, got, q.T, 4).ratio > 1e6
