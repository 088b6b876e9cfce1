"""What a target may claim to compute: the conformance kinds, one module each (its signature,
conventions, draw, reference, condition, inverse, special points and coverage targets), on the
shared :class:`~orthoverify.conformance.kinds.base.Kind`."""

from __future__ import annotations

from orthoverify.conformance.kinds.base import Kind, Params, Points
from orthoverify.conformance.kinds.cayley import SCALED_CAYLEY
from orthoverify.conformance.kinds.complex_to_real import COMPLEX_TO_REAL
from orthoverify.conformance.kinds.householder import HOUSEHOLDER_PRODUCT
from orthoverify.conformance.kinds.orthogonal_map import ORTHOGONAL_MAP, free_map_condition
from orthoverify.conformance.kinds.svd import SVD_PARAMETRISATION
from orthoverify.conformance.kinds.unitary import UNITARY_COMPOSITION

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        ORTHOGONAL_MAP,
        HOUSEHOLDER_PRODUCT,
        SCALED_CAYLEY,
        SVD_PARAMETRISATION,
        UNITARY_COMPOSITION,
        COMPLEX_TO_REAL,
    )
}
"""Every kind, by name."""


__all__ = ["KINDS", "Kind", "Params", "Points", "free_map_condition"]
