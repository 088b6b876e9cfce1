"""The package's imports are where a reader looks for them: at the top of each module.

An import inside a function that points into orthoverify hides a dependency from the layering
contract's reader (pyproject.toml's ``[tool.importlinter]``, checked by ``lint-imports`` in
.ci/run) and usually papers over a cycle. The few that remain keep torch (1.3 to 1.7 s to import,
about 3 s with the conformance checks) out of processes that do not use it; each is listed below
with its reason, and any other fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "orthoverify"

TORCH_ON_USE = "loads torch (and, for conformance, the checks: about 3 s) only where it is used"

ALLOWED: dict[tuple[str, str], str] = {
    # orthoverify.validate stays a lazy attribute: `import orthoverify` loads the error classes only
    ("__init__.py", "orthoverify.conformance"): TORCH_ON_USE,
    # the torch backend loads when a torch backend is asked for (the engine, claims, report and pool
    # workers run without torch until a torch task runs)
    ("backends/__init__.py", "orthoverify.backends.torch_backend"): TORCH_ON_USE,
    # the claims' torch autograd checks, the same way
    ("claims/householder/algorithm1.py", "orthoverify.param.householder_torch"): TORCH_ON_USE,
    ("claims/cayley/theorem3_2.py", "orthoverify.param.cayley_torch"): TORCH_ON_USE,
    # `orthoverify check`, `report`, `replay`, `list`, `--help` do not load the conformance checks;
    # `validate` does, and `replay` of a validate result
    ("cli.py", "orthoverify.conformance"): TORCH_ON_USE,
    ("cli.py", "orthoverify.conformance.replay"): TORCH_ON_USE,
    # the pytest11 plugin loads in every pytest session of every user who has orthoverify installed;
    # the checks load only when --orthoverify-target is given
    ("pytest_plugin.py", "orthoverify.conformance"): TORCH_ON_USE,
    ("pytest_plugin.py", "orthoverify.conformance.planning"): TORCH_ON_USE,
    ("pytest_plugin.py", "orthoverify.conformance.target"): TORCH_ON_USE,
    # the report's notation for a failed check's message, loaded when a check has failed
}
"""(file under orthoverify/, imported module) -> why the import stays inside a function."""

PENDING: tuple[str, ...] = ()
"""Folders being restructured on another branch (issue 26: conformance/ without its import cycle
and its imports inside functions); the integrator empties this tuple when that branch lands."""


def _target(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The orthoverify modules an import statement in ``module`` names (empty for other packages)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "orthoverify"]
    if node.level:  # relative: resolve against the importing module's package
        base = module.split(".")[: -node.level]
        name = ".".join(base + ([node.module] if node.module else []))
    else:
        name = node.module or ""
    return [name] if name.split(".")[0] == "orthoverify" else []


def function_imports() -> list[tuple[str, str, int]]:
    """(file under orthoverify/, imported module, line) for every import inside a function."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        module = "orthoverify." + rel[:-3].replace("/", ".")
        if rel.endswith("__init__.py"):
            module += ".__init__"  # a package's relative imports resolve against the package itself
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found += [(rel, t, node.lineno) for t in _target(node, module)]
    return sorted(set(found))


def test_no_import_inside_a_function_points_into_the_package() -> None:
    hidden = [
        f"orthoverify/{rel}:{line} imports {target}"
        for rel, target, line in function_imports()
        if (rel, target) not in ALLOWED and not rel.startswith(PENDING)
    ]
    assert not hidden, "move these imports to the top of their modules:\n" + "\n".join(hidden)


def test_every_allowed_import_is_still_there() -> None:
    """The allow-list shrinks with the code: an entry whose import is gone is removed from it."""
    present = {(rel, target) for rel, target, _ in function_imports()}
    stale = sorted(set(ALLOWED) - present)
    assert not stale, f"no longer imported inside a function, drop from ALLOWED: {stale}"


def test_the_scan_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """The scanner is not blind: a planted import inside a function (absolute and relative) is found."""
    tree = ast.parse("def f():\n    from orthoverify.engine import run_checks\n    from . import cli\n")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    imports = [node for node in fn.body if isinstance(node, ast.ImportFrom)]
    targets = [t for node in imports for t in _target(node, "orthoverify.bench.core")]
    assert targets == ["orthoverify.engine", "orthoverify.bench"]
    assert _target(ast.parse("import numpy").body[0], "orthoverify.cli") == []  # type: ignore[arg-type]


def test_every_module_has_a_layer() -> None:
    """Each top-level module and subpackage of orthoverify is placed in exactly one layer of the
    import-linter contract, so that a new one cannot stay outside the layering unnoticed."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    placed = [name.strip() for layer in layers["layers"] for name in layer.replace(":", "|").split("|")]
    members = sorted(
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p.is_dir() and (p / "__init__.py").is_file())
    )
    assert sorted(placed) == members
