"""Hostile result files: what `orthoverify report` writes from them injects no markup, and the
proof-notes lookup reads no file outside ``proofs/`` (issue 17, injection and traversal).

A result file is mailed around and attached to issues, so every string in it is untrusted: a run
label, an environment field, ``where``, ``kind``, ``paper``, ids, statements, notes, evidence
fields and counterexample inputs.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orthoverify.cli import main
from orthoverify.report import render_report
from orthoverify.report.markdown import code, ident, text
from orthoverify.report.model import find_proofs_dir, known_paper, proof_entry, proof_file
from orthoverify.tolerance import THRESHOLD

SCRIPT = "<script>alert(1)</script>"
LINK = "[click](javascript:alert(1))"
IMAGE = "![x](http://evil.example/track.png)"
HTML_IMG = '<img src=x onerror="alert(1)">'
BREAKOUT = "a | b\n# Owned heading\n- owned item\n```\n</details>"
HOSTILE = f"{SCRIPT} {LINK} {IMAGE} {HTML_IMG} {BREAKOUT}"


def _hostile_claim(claim_id: str, paper: str, *, figure: bool = False) -> dict[str, Any]:
    evidence: dict[str, Any] = {
        "check": "chk" + HOSTILE,
        "method": "float",
        "backend": "numpy-float64" + SCRIPT,
        "cases": "3" + LINK,
        "worst_ratio": "inf",
        "threshold": THRESHOLD,
        "seconds": 0.1,
        "passed": False,
        "refutes": True,
        "notes": HOSTILE,
        "error": None,
        "data": {"by_n": [[2, 1, 1.0, 1.0], [4, 1, 2.0, 1.0]]}
        if figure
        else {  # a validate check's series: its axis name and mode are strings from the file
            "series": {"x": HOSTILE, "y": SCRIPT, "points": [[1, 2.0], [10, 3.0], [SCRIPT, 1.0], [2, HTML_IMG]]},
            "mode": HOSTILE,
        },
    }
    return {
        "id": claim_id,
        "paper": paper,
        "where": HOSTILE,
        "statement": HOSTILE,
        "kind": "identity" + SCRIPT,
        "corrects": None,
        "verdict": "refuted",
        "methods": ["float"],
        "worst_ratio": 2.0,
        "worst_ratio_threshold": THRESHOLD,
        "evidence": [evidence],
        "counterexample": {
            "inputs": {"A" + SCRIPT: [[SCRIPT, "1"]], "family": HOSTILE},
            "quantity": HOSTILE,
            "value": SCRIPT + "`",
            "precision_digits": 50,
            "check": evidence["check"],
            "threshold": THRESHOLD,
            "float64_value": LINK,
        },
        "notes": HOSTILE,
    }


def _hostile_result(tmp_path: Path, papers: list[str]) -> Path:
    claims = [_hostile_claim(f"hostile.c{i}{SCRIPT if i else ''}", p, figure=i == 0) for i, p in enumerate(papers)]
    data = {
        "orthoverify": "0.1.0" + SCRIPT,
        "schema": 1,
        "profile": "default" + LINK,
        "seed": 0,
        "environment": {"device": "cuda" + SCRIPT, "platform": IMAGE, "k" + HTML_IMG: BREAKOUT},
        "workers": 1,
        "executor": "local",
        "backends": None,
        "started": "x--->" + SCRIPT + LINK,  # would end the report's sources comment early
        "seconds": 1.0,
        "summary": {},
        "claims": claims,
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return path


def _outside_code(md: str) -> str:
    """The Markdown with fenced blocks, code spans and HTML comments removed (their content shows
    literally, or not at all)."""
    md = re.sub(r"<!--.*?-->", "COMMENT", md, flags=re.S)
    lines, out, fence = md.splitlines(), [], None
    for line in lines:
        m = re.match(r"^(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.startswith(fence) and line.strip("`") == "":
                fence = None
            continue
        # a code span opens at an unescaped backtick run and closes at the next run of the same length
        out.append(re.sub(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)", "CODE", line))
    return "\n".join(out)


def _unescaped(s: str, ch: str) -> int:
    """How many times ``ch`` occurs in ``s`` not preceded by a backslash escape."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*" + re.escape(ch), s))


@pytest.fixture
def secret_md(tmp_path: Path) -> Path:
    """A Markdown file outside ``proofs/`` whose section a traversal would embed."""
    f = tmp_path / "secret" / "evil.md"
    f.parent.mkdir()
    f.write_text("# x\n\n## hostile.c0\n\nSECRET-FROM-DISK\n\n## hostile.c1\n\nSECRET-FROM-DISK\n")
    return f


def test_hostile_strings_inject_nothing_into_markdown_or_html(tmp_path: Path, secret_md: Path) -> None:
    proofs = find_proofs_dir()
    assert proofs is not None
    traversal = "/".join([".."] * (len(proofs.resolve().parts) + 2)) + str(secret_md.with_suffix(""))
    papers = [str(secret_md.with_suffix("")), traversal, "../../../../etc/passwd", "householder" + SCRIPT]
    result = _hostile_result(tmp_path, papers)
    out = tmp_path / "out"
    written = render_report([result], out_dir=out, labels=["run" + SCRIPT + LINK], name="report")
    assert {p.name for p in written} == {"report.html", "report.md"}

    html = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    svgs = [p.read_text() for p in (out / "report-figures").glob("*.svg")]
    assert len(svgs) >= 2, "per-n data and validate series are drawn as figures (and checked below)"
    assert any("fig-series-hostile" in svg for svg in svgs)
    for doc in [html, *svgs]:
        for bad in ("<script", "<img", 'javascript:alert(1)"', 'href="javascript', 'onerror="'):
            assert bad not in doc.lower()
    assert "SECRET-FROM-DISK" not in html and "SECRET-FROM-DISK" not in md
    for doc in (html, md):  # the sources comment is the one HTML comment, closed once, at its end
        assert doc.count("-->") == 1 and doc.index("-->") > doc.index("orthoverify-sources:")
    assert not re.search(r'href="(?!#)[^"]*(evil|passwd|proofs/householder)', html)  # no link to a file the paper names

    prose = _outside_code(md)
    tags = re.findall(r"(?<!\\)(?:\\\\)*<(/?[A-Za-z]+)", prose)  # raw HTML that a viewer would render
    assert set(tags) <= {"details", "/details", "summary", "/summary"}, set(tags)
    for bad in ("](javascript", "![x]", "[click]"):
        assert _unescaped(prose, bad) == 0, bad
    assert "\\<script\\>alert(1)\\</script\\>" in prose  # shown, escaped
    assert not re.search(r"(?<!\\)\]\((?!#)[^)]*(evil|passwd|proofs/householder)", prose)
    # no hostile line breaks out into a heading or a list item of its own
    assert not re.search(r"^#+ Owned", prose, re.M) and not re.search(r"^\s*- owned item", prose, re.M)
    # tables keep their shape: every row has as many unescaped pipes as its header
    table: int | None = None
    for line in prose.splitlines():
        if line.startswith("|"):
            n = _unescaped(line, "|")
            table = n if table is None else table
            assert n == table, line
        else:
            table = None
    # <details> blocks open and close as the renderer wrote them
    assert tags.count("details") == tags.count("/details") and tags.count("summary") == tags.count("/summary")


def test_positive_control_a_registered_paper_embeds_its_proof_notes(tmp_path: Path) -> None:
    """The lookup still works for a known paper key (so the refusals above are not a dead lookup)."""
    result = _hostile_result(tmp_path, ["householder"])
    data = json.loads(result.read_text())
    data["claims"][0]["id"] = "householder.reflection"
    result.write_text(json.dumps(data))
    render_report([result], out_dir=tmp_path / "out", name="report")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<summary>Proof notes</summary>" in html and "householder.md" in html


@pytest.mark.parametrize(
    "paper", ["householder", "cayley", "../proofs/householder", "/etc/passwd", "householder/../cayley", "", "x" * 300]
)
def test_proof_lookup_takes_only_registered_paper_keys(paper: str, secret_md: Path) -> None:
    proofs = find_proofs_dir()
    known = paper in ("householder", "cayley")
    assert known_paper(paper) is known
    assert (proof_file(proofs, paper) is not None) is known
    assert proof_file(secret_md.parent, "evil") is None  # an existing file, but not a paper key
    assert proof_entry(secret_md.parent, "evil", "hostile.c0") is None
    assert proof_entry(proofs, str(secret_md.with_suffix("")), "hostile.c0") is None


def test_markdown_escapers() -> None:
    assert text("<script>") == "\\<script\\>"
    assert text("[a](javascript:x) ![i](u)") == "\\[a\\](javascript:x) !\\[i\\](u)"
    assert text("a\nb\r\n# c\u2028d") == "a b \\# c d"
    assert text("- item") == "\\- item" and text("---") == "\\---" and text("1. one") == "1\\. one"
    assert text("3.5 is") == "3.5 is" and text("x~y~") == "x\\~y\\~"
    assert code("a|b", table=True) == "`a\\|b`" and code("a\nb") == "`a b`"
    assert ident("cayley.theorem3_1") == "cayley.theorem3_1"
    assert ident("a._b_") == "a.\\_b\\_" and ident("x<y") == "x\\<y"


# --------------------------------------------------------------------------- any string, same skeleton
_ALPHABET = "<>[]()!`*_~#|-+=.:/\\&\"' \n\r\t\x0b\x85\u2028aZ1\u00e9"
hostile_text = st.text(alphabet=_ALPHABET, max_size=24)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
_BREAK = re.compile(r"^ {0,3}(?:([-*_])(?: *\1){2,}|=+|-+) *$")


def _skeleton(md: str) -> list[tuple[str, int]]:
    """The block structure a CommonMark/GFM reader sees, line by line: headings, list items,
    quotes, thematic breaks, table rows (with their cell count), raw HTML, fences, code lines."""
    out: list[tuple[str, int]] = []
    fence: str | None = None
    previous_blank = True
    for line in md.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(fence[0]):
                fence = None
                out.append(("fence-close", 0))
            continue
        if m:
            fence = m.group(1)
            out.append(("fence", 0))  # its length adapts to the content
        elif not line.strip():
            out.append(("blank", 0))
        elif previous_blank and line.startswith("    "):
            out.append(("indented-code", 0))
        elif _HEADING.match(line):
            out.append(("heading", len(line) - len(line.lstrip("#"))))
        elif _BREAK.match(line):
            out.append(("break", 0))
        elif _ITEM.match(line):
            out.append(("item", 0))
        elif line.lstrip().startswith(">"):
            out.append(("quote", 0))
        elif line.startswith("|"):
            out.append(("row", _unescaped(_outside_code(line), "|")))
        elif re.match(r"^ {0,3}<", line):
            out.append(("html", 0))
        else:
            out.append(("text", 0))
        previous_blank = not line.strip()
    return out


def _strings(doc: Any, f: Any) -> Any:
    """``doc`` with every string value mapped by ``f`` (keys are kept: hostile keys are in the test above)."""
    if isinstance(doc, dict):
        return {k: _strings(v, f) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_strings(x, f) for x in doc]
    return f(doc) if isinstance(doc, str) else doc


_FIXED = {"verified", "refuted", "inconclusive", "error", "0.1.0", "float", "inf"}  # values the validator constrains


@given(texts=st.lists(hostile_text, min_size=40, max_size=40), label=hostile_text)
def test_any_strings_leave_the_markdown_skeleton_unchanged(texts: list[str], label: str) -> None:
    """Put arbitrary strings (Markdown and HTML specials, line breaks of every kind) in every string
    field of a result and the run label: the Markdown has the same block structure as with plain
    ``x`` in their place (no heading, list item, table cell, quote or raw HTML injected), and its
    prose has no raw tag."""
    from orthoverify.report.markdown import render_markdown
    from orthoverify.report.model import load_report

    doc = json.loads(json.dumps(_hostile_claim("c", "p")))
    template = {"orthoverify": "0.1.0", "profile": "p", "seed": 0, "environment": {"device": "d", "k": "v"}}
    template["claims"] = [doc]
    pool = iter(texts * 3)

    def hostile(s: str) -> str:
        return s if s in _FIXED else next(pool, "") or "x"

    def plain(s: str) -> str:
        return s if s in _FIXED else "x"

    rendered = []
    for f, lb in ((hostile, label or "x"), (plain, "x")):
        data = _strings(template, f)
        data["claims"][0]["counterexample"]["precision_digits"] = 50
        data["claims"][0]["evidence"][0]["data"] = {}
        report = load_report(["r.json"], [lb], data={"r.json": data})
        rendered.append(render_markdown(report, Path("."), "figs"))
    hostile_md, plain_md = rendered
    assert _skeleton(hostile_md) == _skeleton(plain_md)
    prose = _outside_code(hostile_md)
    assert set(re.findall(r"(?<!\\)(?:\\\\)*<(/?[A-Za-z]+)", prose)) <= {"details", "/details", "summary", "/summary"}


CONTROLS = "\x1b[2J\x1b[31mred\x1b[0m\rover\x07bell\u202eevil\x9bcsi\x00nul"
"""An ANSI clear-screen and colour, a carriage return, a bell, a bidi override, a C1 CSI, a NUL."""


def _raw_controls(text: str) -> set[str]:
    """The control and format characters in ``text`` (newlines and tabs allowed)."""
    return {c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")}


def test_control_characters_from_a_result_file_show_as_escapes_in_the_report(tmp_path: Path) -> None:
    """Before: the ESC, CR, BEL and U+202E of a result file's strings went into report.html and
    report.md as they were (a terminal showing the Markdown acted on them)."""
    claim = _hostile_claim("hostile.c0" + CONTROLS, "householder")
    claim.update(statement=CONTROLS, notes=CONTROLS, where=CONTROLS)
    claim["counterexample"].update(quantity=CONTROLS, value=CONTROLS)
    claim["evidence"][0].update(notes=CONTROLS, error=CONTROLS)
    data = {"orthoverify": "0.1.0", "profile": "quick", "seed": 0, "environment": {"platform": CONTROLS}}
    data["claims"] = [claim]
    path = tmp_path / "controls.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    render_report([path], out_dir=out, labels=["run" + CONTROLS], name="report")
    for doc in ((out / "report.html").read_text(), (out / "report.md").read_text()):
        assert not _raw_controls(doc), _raw_controls(doc)
        assert "\\x1b[31mred" in doc and "\\u202eevil" in doc and "\\x0dover" in doc


def test_control_characters_in_a_replayed_counterexample_show_as_escapes(tmp_path: Path) -> None:
    reference = json.loads((Path(__file__).resolve().parents[2] / "reports" / "check-default.json").read_text())
    for c in reference["claims"]:
        if c["id"] == "householder.algorithm2_float":
            c["counterexample"]["quantity"] = CONTROLS
            c["counterexample"]["value"] = CONTROLS
    path = tmp_path / "r.json"
    path.write_text(json.dumps(reference))
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", str(path), "householder.algorithm2_float"], out=out, err=err)
    assert code == 0 and not _raw_controls(out.getvalue()) and "\\x1b[2J" in out.getvalue(), out.getvalue()


@pytest.mark.parametrize("name", ["a\nb", "report\x1b[2J", "r\rx", "x/y", ".hidden"])
def test_report_name_refuses_newlines_and_control_characters(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = str(Path(__file__).resolve().parents[2] / "reports" / "check-default.json")
    with pytest.raises(SystemExit) as exc:
        main(["report", reference, "--out", str(tmp_path / "out"), "--name", name])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--name" in err and "control character" in err, err
    assert not _raw_controls(err.splitlines()[-1]) and not (tmp_path / "out").exists()
