"""Modules of the package that load on first use, declared at the top of the module using them.

Importing torch takes 1.3 to 1.7 s, and the conformance checks about 3 s with it. ``orthoverify
--help``, ``check``, ``report``, the engine's pool workers and every pytest session of anyone who
has orthoverify installed (the pytest11 plugin) run without them until they are needed. Rather
than an ``import`` hidden inside a function, which no linter sees, each such dependency is
written once at the top of its module, in two halves that name the same module::

    if TYPE_CHECKING:
        from orthoverify.param import cayley_torch
    else:
        cayley_torch = lazy_module("orthoverify.param.cayley_torch")

The first half is what mypy types and what import-linter's layer contracts see (type-checking
imports count there), so the layering stays enforced; the second is what runs. The pairing is
checked by tests/unit/test_layers.py.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "lazy_module"]


class LazyModule:
    """Stands for the module ``name`` and imports it on the first attribute read."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        if not name.startswith("orthoverify."):
            raise ValueError(f"lazy_module loads modules of orthoverify only, got {name!r}")
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """The module ``name`` of this package, imported when one of its attributes is first read
    (see the module docstring for how it is declared)."""
    return LazyModule(name)
