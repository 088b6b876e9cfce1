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


UNIT_ROUNDOFF: dict[str, float] = {
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float32": 2.0**-24,
    "float64": 2.0**-53,
}
"""The unit roundoff u (half the machine epsilon) of each floating-point format, by name."""


def unit_roundoff(dtype: object) -> float:
    """u of the format ``dtype``: a name ("float32"), a torch dtype or a numpy dtype; raises
    KeyError for a format without one here."""
    return UNIT_ROUNDOFF[str(dtype).removeprefix("torch.")]
