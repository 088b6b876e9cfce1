"""Facts about the package that every layer may read: its version and the default output folder.

They live here, on the ground floor, rather than in ``orthoverify/__init__.py`` (which re-exports
them), because the package root also offers ``orthoverify.validate``, the top of the layering: a
layer that read them from the root would depend on everything above it (see the import-linter
contracts in pyproject.toml).
"""

from __future__ import annotations

__version__ = "0.1.0"

OUT_DIR = "out"
"""Default folder of every generated output (results, reports, benchmarks), relative to the working
directory; the repository's .gitignore keeps it untracked. The committed reference lives in
reports/ and is rewritten only on purpose."""
