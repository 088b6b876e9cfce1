"""Benchmark cases: householder (see orthoverify.bench.core)."""

from __future__ import annotations
