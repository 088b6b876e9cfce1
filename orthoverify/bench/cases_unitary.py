"""Benchmark cases: unitary (see orthoverify.bench.core)."""

from __future__ import annotations
