"""The test-ratio threshold, on the ground floor: this module imports nothing from orthoverify,
so every layer (backends, param, testing, bench, engine, conformance, report) reads the one value.

A test ratio divides an error by what rounding alone could explain (``dim * eps * scale``; see
:mod:`orthoverify.engine.ratios`); a correct, backward-stable computation gives ratios of order 1,
and a ratio is accepted when it is at most :data:`THRESHOLD` (30, as in LAPACK's tests), unless a
claim's notes justify another.
"""

from __future__ import annotations

THRESHOLD: float = 30.0
"""The largest test ratio a correct computation is allowed (LAPACK's test threshold)."""
