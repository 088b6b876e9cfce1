"""The test-ratio threshold has one home, orthoverify/tolerance.py, on the ground floor (it imports
nothing from orthoverify, so backends, param, testing and bench read it too): no other module, and
no test, re-declares it, takes it as a literal default, passes it as a literal or compares with it."""

from __future__ import annotations

import ast
from pathlib import Path

from orthoverify import tolerance
from orthoverify.engine import THRESHOLD as ENGINE_THRESHOLD
from orthoverify.testing import assert_orthogonal

PACKAGE = Path(tolerance.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[1]

NOT_THE_THRESHOLD = {
    ("system/test_readme_facts.py", "len(named) >= 30"): "a count of file names",
    ("system/test_report_browser.py", "OKABE_ITO_BLUE) > 30"): "a count of pixels",
}
"""Tests' comparisons with 30 where 30 is not the test-ratio threshold (file, a fragment of the line):
what 30 counts there."""


def _literal_30(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 30


def _named(name: str) -> bool:
    return "threshold" in name.lower() or name in ("tol", "ratio_threshold")


def _in_product(node: ast.AST) -> bool:
    """30 itself, or a term of an arithmetic expression (``30 * n * eps``); not an exponent (``2**30``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.Add, ast.Sub)):
        return _in_product(node.left) or _in_product(node.right)
    return _literal_30(node)


def literal_thresholds(source: str) -> list[int]:
    """Lines where 30 is used as a threshold: the default of a ``threshold``/``tol`` argument, such a keyword,
    a value assigned to a ``*THRESHOLD*`` name or to a ``"...threshold"`` key of a dict, or an operand of a
    comparison or of a product that is compared (``best > 30 * eps``)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args][len(node.posonlyargs) + len(node.args) - len(node.defaults) :]
            pairs = [*zip(positional, node.defaults, strict=True), *zip(node.kwonlyargs, node.kw_defaults, strict=True)]
            lines += [d.lineno for a, d in pairs if d is not None and _named(a.arg) and _literal_30(d)]
        elif isinstance(node, ast.keyword) and node.arg and _named(node.arg) and _literal_30(node.value):
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Assign) and _literal_30(node.value):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            lines += [node.lineno for name in names if "THRESHOLD" in name.upper()]
        elif isinstance(node, ast.Dict):
            items = zip(node.keys, node.values, strict=True)
            keys = [(k.value, v) for k, v in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            lines += [v.lineno for key, v in keys if _named(key) and _literal_30(v)]
        elif isinstance(node, ast.Compare) and any(_in_product(o) for o in (node.left, *node.comparators)):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_threshold_lives_on_the_ground_floor() -> None:
    assert tolerance.THRESHOLD == ENGINE_THRESHOLD == 30.0
    tree = ast.parse(Path(tolerance.__file__).read_text())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in imports)


def test_no_module_repeats_the_threshold() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "tolerance.py" and (lines := literal_thresholds(path.read_text()))
    }
    assert found == {}


def test_no_test_repeats_the_threshold() -> None:
    """Tests read THRESHOLD too, so a re-declared or literal threshold in a test fails here."""
    found = {
        (str(path.relative_to(TESTS)), line): path.read_text().splitlines()[line - 1].strip()
        for path in sorted(TESTS.rglob("*.py"))
        if path.resolve() != Path(__file__).resolve()
        for line in literal_thresholds(path.read_text())
    }
    allowed = {key for key, line in found.items() for f, part in NOT_THE_THRESHOLD if key[0] == f and part in line}
    assert {key: line for key, line in found.items() if key not in allowed} == {}
    used = {(f, part) for f, part in NOT_THE_THRESHOLD for key, line in found.items() if key[0] == f and part in line}
    assert used == set(NOT_THE_THRESHOLD)  # no stale exception


def test_the_scan_finds_a_planted_literal() -> None:
    planted = (
        "THRESHOLD = 30.0\n"
        "def f(x, *, threshold: float = 30.0): ...\n"
        "g(x, threshold=30)\n"
        "ok = best > 30 * 2 * eps\n"
        "def h(x, tol=1e-8, budget=30): ...\n"  # not a threshold: left alone
        'doc = {"worst_ratio_threshold": 30.0, "steps": 30}\n'
        "assert limit == 4 * 2**30\n"  # an exponent, not a threshold: left alone
        "assert r <= 30 * n * eps\n"
    )
    assert literal_thresholds(planted) == [1, 2, 3, 4, 6, 8]


def test_defaults_read_the_one_value() -> None:
    import inspect

    assert inspect.signature(assert_orthogonal).parameters["threshold"].default == tolerance.THRESHOLD
