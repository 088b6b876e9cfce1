"""The layout of orthoverify/conformance and orthoverify/isolation (issue 26): one cohesive unit
per file, each under 600 lines; every import into the package at module level (none hidden
inside a function); and no import cycle among a package's modules, so each file can be read
after the ones it imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import orthoverify.conformance
import orthoverify.isolation

PACKAGES = {p.__name__: Path(p.__file__).parent for p in (orthoverify.conformance, orthoverify.isolation)}
"""Each package whose layout is pinned here, by name, with its folder."""
PACKAGE = "orthoverify.conformance"
"""The package the planted examples below are written for."""
MAX_LINES = 600


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The absolute module names an import statement of ``module`` names (a package's names too)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.rsplit(".", node.level)[0]
        stem = f"{base}.{node.module}" if node.module else base
    else:
        stem = node.module or ""
    return [stem, *(f"{stem}.{a.name}" for a in node.names)]


def _hidden_imports(source: str, module: str) -> list[str]:
    """Imports into orthoverify made inside a function of ``source``."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    n.split(".")[0] == "orthoverify" for n in _imported(node, module)
                ):
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    return found


def _graph(sources: dict[str, str], package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` (the modules of ``package``) it imports at module level
    (under if/try too); a name imported from the package that is not one of its modules is an
    import of ``__init__``."""
    graph: dict[str, set[str]] = {}
    for name, source in sources.items():
        deps: set[str] = set()
        todo = list(ast.parse(source).body)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.ImportFrom) and _imported(node, f"{package}.{name}")[0] == package:
                deps |= {a.name if a.name in sources else "__init__" for a in node.names}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                stems = [n.removeprefix(f"{package}.") for n in _imported(node, f"{package}.{name}")]
                deps |= {m for s in stems if (m := _module_of(s, sources))}
            elif isinstance(node, (ast.If, ast.Try, ast.ClassDef, ast.With)):
                todo += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
        graph[name] = deps - {name}
    return graph


def _module_of(dotted: str, sources: dict[str, str]) -> str:
    """The longest prefix of ``dotted`` (a name relative to the package) that is a module of
    ``sources`` ("" if none): ``kinds.base.Kind`` is of ``kinds.base``, ``kinds.Kind`` of ``kinds``."""
    parts = dotted.split(".")
    return next((m for i in range(len(parts), 0, -1) if (m := ".".join(parts[:i])) in sources), "")


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (empty: none)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str]:
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return [*path[path.index(w) :], w]
            if w not in state and (found := visit(w)):
                return found
        state[v] = 2
        path.pop()
        return []

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return []


def _sources(package: str = PACKAGE) -> dict[str, str]:
    """Every module of ``package`` by its name relative to it (``kinds.base``; a subpackage's
    ``__init__`` by the subpackage's name, the package's own as ``__init__``)."""
    folder = PACKAGES[package]
    out = {}
    for p in sorted(folder.rglob("*.py")):
        parts = list(p.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        out[".".join(parts)] = p.read_text()
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_file_is_under_600_lines(package: str) -> None:
    long = {name: s.count("\n") for name, s in _sources(package).items() if s.count("\n") >= MAX_LINES}
    assert not long, f"files of {package} at or over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_into_the_package_inside_a_function(package: str) -> None:
    hidden = [h for name, s in _sources(package).items() for h in _hidden_imports(s, f"{package}.{name}")]
    assert not hidden, "imports hidden inside functions:\n" + "\n".join(hidden)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle_inside_the_package(package: str) -> None:
    graph = _graph(_sources(package), package)
    assert not _cycle(graph), f"import cycle in {package}: {' -> '.join(_cycle(graph))}"


def test_the_layout_checks_catch_a_planted_hidden_import_and_cycle() -> None:
    """The checks above can fail: a hidden import and a two-module cycle, planted."""
    hidden = "def f():\n    from orthoverify.conformance.kinds import KINDS\n    import numpy\n    return KINDS\n"
    assert _hidden_imports(hidden, f"{PACKAGE}.planted") == [
        f"{PACKAGE}.planted:2: from orthoverify.conformance.kinds import KINDS"
    ]
    planted = {
        "a": "from orthoverify.conformance import b\n",
        "b": "if True:\n    from orthoverify.conformance.a import x\n",
        "c": "import numpy\n",
    }
    assert _cycle(_graph(planted)) in (["a", "b", "a"], ["b", "a", "b"])
    assert _cycle(_graph({"a": planted["a"], "c": planted["c"], "b": "x = 1\n"})) == []
    through_init = {
        "__init__": "from orthoverify.conformance import a\n",
        "a": "from orthoverify.conformance import y\n",  # a name of __init__, not a module
    }
    assert _cycle(_graph(through_init)) == ["__init__", "a", "__init__"]
    sub = {
        "kinds": "from orthoverify.conformance.kinds.base import K\n",
        "kinds.base": "from orthoverify.conformance.kinds import K\n",
    }
    assert _cycle(_graph(sub)) == ["kinds", "kinds.base", "kinds"]
    assert "kinds.base" in _sources() and "kinds" in _sources()
    assert "program" in _sources("orthoverify.isolation") and "__init__" in _sources("orthoverify.isolation")
