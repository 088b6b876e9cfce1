"""The package's imports are where a reader looks for them: at the top of each module.

An import inside a function that points into orthoverify hides a dependency from the layering
contract's reader (pyproject.toml's ``[tool.importlinter]``, checked by ``lint-imports`` in
.ci/run) and usually papers over a cycle, so there is none. The modules that keep torch (1.3 to
1.7 s to import, about 3 s with the conformance checks) out of processes that do not use it are
declared at the top of their users instead, in two halves (:mod:`orthoverify._lazy`): an import
under ``if TYPE_CHECKING:``, which mypy and the layering contract see, and a
``lazy_module("...")`` of the same module in its ``else:``, which is what runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "orthoverify"

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
    hidden = [f"orthoverify/{rel}:{line} imports {target}" for rel, target, line in function_imports()]
    assert not hidden, (
        "move these imports to the top of their modules (torch-heavy ones as a declared "
        "lazy_module, see orthoverify/_lazy.py):\n" + "\n".join(hidden)
    )


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> set[str]:
    """The modules an import names, ``from orthoverify.x import y`` counting both x and x.y."""
    names = set(_target(node, module))
    if isinstance(node, ast.ImportFrom):
        names |= {f"{n}.{a.name}" for n in list(names) for a in node.names}
    return names


def lazy_declarations(tree: ast.Module, module: str) -> tuple[list[tuple[str, int]], list[str]]:
    """The ``lazy_module("...")`` calls of a module not declared as :mod:`orthoverify._lazy` says
    (what, line), and the module names of those that are."""
    wrong: list[tuple[str, int]] = []
    declared: list[str] = []
    paired: set[int] = set()
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        seen = {t for s in node.body if isinstance(s, (ast.Import, ast.ImportFrom)) for t in _imported(s, module)}
        for stmt in node.orelse:
            call = stmt.value if isinstance(stmt, ast.Assign) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "lazy_module":
                paired.add(id(call))
                name = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
                if isinstance(name, str) and name in seen:
                    declared.append(name)
                else:
                    wrong.append((f"{name}: not imported under TYPE_CHECKING", stmt.lineno))
    for node in ast.walk(tree):
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_module"
        if call and id(node) not in paired:
            wrong.append(("lazy_module outside the else: of a top-level if TYPE_CHECKING:", node.lineno))
    return wrong, declared


def test_every_lazy_module_is_declared_for_the_layering_contract() -> None:
    """Each lazy_module("m") sits in the ``else:`` of a top-level ``if TYPE_CHECKING:`` that imports
    m, so that lint-imports checks the dependency as it checks any import; and the ones the package
    relies on to keep torch out are found (the scan is not blind)."""
    wrong, declared = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        module = "orthoverify." + rel[:-3].replace("/", ".") + (".__init__" if rel.endswith("__init__.py") else "")
        w, d = lazy_declarations(ast.parse(path.read_text(encoding="utf-8")), module)
        wrong += [f"orthoverify/{rel}:{line}: {what}" for what, line in w]
        declared += d
    assert not wrong, "declare each lazy module beside its import under TYPE_CHECKING:\n" + "\n".join(wrong)
    assert {"orthoverify.backends.torch_backend", "orthoverify.conformance"} <= set(declared)


def test_the_declaration_scan_sees_a_lazy_module_without_its_import() -> None:
    """Planted: a lazy module whose TYPE_CHECKING half imports another module, and one with no
    TYPE_CHECKING half at all, are both reported; a right declaration is not."""
    src = (
        "if TYPE_CHECKING:\n    from orthoverify import engine\nelse:\n"
        "    conformance = lazy_module('orthoverify.conformance')\n"
        "x = lazy_module('orthoverify.report')\n"
    )
    wrong, declared = lazy_declarations(ast.parse(src), "orthoverify.cli")
    assert [line for _, line in wrong] == [4, 5] and declared == []
    ok = (
        "if TYPE_CHECKING:\n    from orthoverify.conformance import replay\nelse:\n"
        "    r = lazy_module('orthoverify.conformance.replay')\n"
    )
    assert lazy_declarations(ast.parse(ok), "orthoverify.cli") == ([], ["orthoverify.conformance.replay"])


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
