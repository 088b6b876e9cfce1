"""Benchmark cases: highprec (see orthoverify.bench.core)."""

from __future__ import annotations
