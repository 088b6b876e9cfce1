"""The claim families, one per source paper: each a package (or module) of this package exposing
``PAPER``, ``PAPER_INFO`` and ``CLAIMS``. The engine's registry reads them from here, in this order."""

FAMILIES: tuple[str, ...] = ("householder", "cayley", "svd", "unitary")
"""The families' module names under ``orthoverify.claims``, in registry order."""
