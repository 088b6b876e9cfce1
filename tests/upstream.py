"""Known upstream defects, as data: defects of a library orthoverify validates (torch, through the
adapters that call it), not of orthoverify or of an adapter's wiring. Each names the operation,
where it was reported, and which checks of which built-in adapters show it (``validate --profile
quick``). Tests expect these refutations; the day one stops reproducing (torch fixed it), the test
reports "fixed upstream" as a skip naming the defect, instead of failing, and the entry is removed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class UpstreamDefect:
    """One upstream defect: the operation, its report (an issue, or where orthoverify documents it
    when none is filed), the version it was measured on, and ``shows``: adapter -> the checks it
    refutes through it."""

    operation: str
    reference: str
    seen_in: str
    shows: Mapping[str, frozenset[str]]


DEFECTS: tuple[UpstreamDefect, ...] = (
    UpstreamDefect(
        operation="torch.linalg.solve: its forward-mode rule treats A^-1 as a constant when differentiated again",
        reference="pytorch/pytorch#196695",
        seen_in="torch 2.13",
        shows={
            "torch-orthogonal-cayley": frozenset({"second_ff", "second_ff_float32"}),
            "geotorch-so-cayley": frozenset({"second_ff", "second_ff_float32"}),
            "geotorch-orthogonal-cayley": frozenset({"second_ff", "second_ff_float32"}),
        },
    ),
    UpstreamDefect(
        operation="torch.linalg.householder_product: nested forward mode drops a second-order term",
        reference="pytorch/pytorch#196698",
        seen_in="torch 2.13",
        shows={
            "torch-householder-product": frozenset({"second_ff", "second_ff_float32"}),
            "torch-orthogonal-householder": frozenset({"second_ff", "second_ff_float32"}),
        },
    ),
    UpstreamDefect(
        operation="torch.matrix_exp on a single matrix: error far beyond its conditioning (batched calls are right)",
        reference="not filed; README, 'Validating an implementation' (matrix_exp rows)",
        seen_in="torch 2.13",
        shows={
            "torch-orthogonal-matrix_exp": frozenset({"orthogonal"}),
            "geotorch-so-expm": frozenset({"orthogonal"}),
            "geotorch-orthogonal-expm": frozenset({"orthogonal"}),
        },
    ),
    UpstreamDefect(
        operation="torch.nn.utils.parametrizations.orthogonal (householder): multiplies by int(diag(X)), so a "
        "diagonal entry inside (-1, 1) gives a zero column",
        reference="not filed; README, 'Validating an implementation' (torch-orthogonal-householder row)",
        seen_in="torch 2.13",
        shows={"torch-orthogonal-householder": frozenset({"orthogonal", "weight_decay"})},
    ),
)


def expected_upstream(spec: str) -> dict[str, UpstreamDefect]:
    """The checks of adapter ``spec`` that known upstream defects refute, check -> defect."""
    return {check: d for d in DEFECTS for check in d.shows.get(spec, ())}


def fixed_upstream(spec: str, verdicts: Mapping[str, str]) -> list[str]:
    """One line per known upstream defect that ``spec``'s run (check -> verdict) no longer shows; a
    check the run did not plan (float32 ones under ``--dtype float64``, say) shows nothing either way."""
    return [
        f"{d.reference} ({d.operation}; seen in {d.seen_in}): {spec} {check} is now {verdicts[check]}"
        for check, d in expected_upstream(spec).items()
        if check in verdicts and verdicts[check] != "refuted"
    ]


def skip_if_fixed_upstream(fixed: list[str]) -> None:
    """The expected-failure outcome: a skip that says which defect stopped reproducing (and that its
    entry in tests/upstream.py should go), never a failure."""
    if fixed:
        pytest.skip("fixed upstream: " + "; ".join(fixed) + " (remove it from tests/upstream.py)")
