"""The JSON is the interface: a result carries the citations of its papers, and the report renders
them from the file alone (orthoverify/report imports no claim code; see the import-linter contract)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orthoverify.claims import MODULES
from orthoverify.engine import get_registry, run_checks, write_json
from orthoverify.engine.result import paper_json
from orthoverify.errors import ReportError
from orthoverify.report import render_report


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    options = {"profile": "quick", "workers": 1, "backends": ["numpy-float64"]}
    run = run_checks(["householder.reflection"], modules=MODULES, **options)
    path = write_json(run, tmp_path_factory.mktemp("papers") / "r.json")
    data: dict[str, object] = json.loads(path.read_text())
    return data


def _render(tmp_path: Path, data: dict[str, object]) -> str:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    render_report([path], out_dir=tmp_path / "out", name="report", formats=["md"])
    return (tmp_path / "out" / "report.md").read_text()


def test_a_result_carries_the_citation_of_each_of_its_papers(result: dict[str, object]) -> None:
    assert result["papers"] == {"householder": paper_json(get_registry(MODULES).papers["householder"])}


def test_the_report_cites_the_paper_as_the_file_says(tmp_path: Path, result: dict[str, object]) -> None:
    """A title only the file knows reaches the report: it is read from the JSON, not from the claims."""
    data = json.loads(json.dumps(result))
    data["papers"]["householder"]["title"] = "A title only this file knows"
    assert "A title only this file knows" in _render(tmp_path, data)


def test_a_result_without_the_table_still_renders(tmp_path: Path, result: dict[str, object]) -> None:
    """A file written before results carried ``papers``: the paper is shown by its key."""
    data = {k: v for k, v in result.items() if k != "papers"}
    md = _render(tmp_path, data)
    assert "## householder" in md
    assert get_registry(MODULES).papers["householder"].title not in md


@pytest.mark.parametrize(
    ("papers", "field"),
    [([], "field papers must be an object"), ({"householder": {"title": 5}}, "field papers.'householder'.title")],
)
def test_a_malformed_table_is_a_named_error(
    tmp_path: Path, result: dict[str, object], papers: object, field: str
) -> None:
    with pytest.raises(ReportError, match=re.escape(field)):
        _render(tmp_path, {**result, "papers": papers})
