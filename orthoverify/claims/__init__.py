"""The claim families, one per source paper: each a package (or module) of this package exposing
``PAPER``, ``PAPER_INFO`` and ``CLAIMS``. The engine names no family: its callers (the command
line, the pytest plugin, a script) pass :data:`MODULES` to its registry, in this order."""

FAMILIES: tuple[str, ...] = ("householder", "cayley", "svd", "unitary")
"""The families' module names under ``orthoverify.claims``, in registry order."""

MODULES: tuple[str, ...] = tuple(f"{__name__}.{name}" for name in FAMILIES)
"""The families' full module names: what callers of the engine pass as ``modules`` to run or
replay orthoverify's claims (``run_checks(..., modules=MODULES)``)."""
