"""Where a user imports :func:`declare` from (``from orthoverify.conformance.declare import
declare``, as the README documents): a re-export of :mod:`orthoverify.isolation.declare`, where
declarations live, below every measure, because the target's process reads them."""

from __future__ import annotations

from orthoverify.isolation.declare import declare

__all__ = ["declare"]
