"""Benchmark cases: suite (see orthoverify.bench.core)."""

from __future__ import annotations
