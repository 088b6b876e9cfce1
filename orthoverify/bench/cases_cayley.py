"""Benchmark cases: cayley (see orthoverify.bench.core)."""

from __future__ import annotations
