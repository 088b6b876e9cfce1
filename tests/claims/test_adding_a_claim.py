"""docs/adding-a-claim.md works as printed: its worked example, registered as an extra claims
module, is verified, and with a planted defect it is refuted with an exact counterexample; and the
whole page, followed word for word in a copy of the working tree (the claim file, the registry
lines, every shell command), adds the claim and leaves the checks of the derived places green."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import Registry, get_registry, run_checks
from orthoverify.report import model as report_model
from tests.scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-a-claim.md"


def example_source() -> str:
    """The guide's claim file: its first Python block."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert blocks and "householder.involution" in blocks[0]
    return str(blocks[0])


def register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> tuple[str, ...]:
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return (name,)


def test_guide_example_is_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = register(tmp_path, monkeypatch, "guide_involution", example_source())
    (claim,) = Registry(modules)
    assert claim.id == "householder.involution" and claim.paper == "householder"
    result = run_checks(["householder.involution"], profile="quick", workers=1, modules=modules)
    (c,) = result.claims
    assert c.verdict == "verified", c.notes()
    assert {e.method for e in c.evidence} >= {"symbolic", "float", "high-precision"}


def test_guide_example_refutes_a_planted_defect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = example_source()
    planted = source.replace('    return b.eye(int(case["n"]))', '    return -b.eye(int(case["n"]))')
    assert planted != source
    modules = register(tmp_path, monkeypatch, "guide_involution_planted", planted)
    result = run_checks(["householder.involution"], profile="quick", workers=1, modules=modules)
    (c,) = result.claims
    assert c.verdict == "refuted"
    assert c.counterexample is not None and c.counterexample.precision_digits == "exact"


def shell_commands() -> list[str]:
    """The guide's shell commands: each line of its ```bash blocks, and the inline one that sets
    ORTHOVERIFY_EXTRA_CLAIMS, without their comments."""
    text = GUIDE.read_text()
    lines = [ln.split("#", 1)[0].strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S) for ln in b.splitlines()]
    inline = re.findall(r"`(ORTHOVERIFY_EXTRA_CLAIMS=\w+ orthoverify [^`]+)`", text)
    return [ln for ln in lines if ln] + inline


def add_registry_lines(init: str, block: str) -> str:
    """The family's ``__init__.py`` with the guide's ``# new`` lines added, each after the line the
    guide shows before it (or before the one it shows after it, where the line before is "...")."""
    shown = [ln.rstrip() for ln in block.splitlines()]
    lines = init.splitlines()
    for k, ln in enumerate(shown):
        if not ln.endswith("  # new"):
            continue
        new = ln.removesuffix("  # new")
        before, after = shown[k - 1], shown[k + 1]
        at = lines.index(before) + 1 if before.strip() != "..." else lines.index(after)
        lines.insert(at, new)
    return "\n".join(lines) + "\n"


def working_tree_copy(dest: Path) -> Path:
    """The working tree's files (tracked, and untracked ones git does not ignore) copied to ``dest``:
    a fresh clone of the tree as it is now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.mark.slow
def test_the_guide_followed_word_for_word(tmp_path: Path) -> None:
    """In a copy of the working tree: the guide's claim file and its two registry lines, then each
    shell command of the guide as written (``orthoverify`` the installed script, not ``python -m``,
    which would put the folder on sys.path itself; ``python`` this interpreter), the copy's package
    first on the path. ``list`` shows the id, ``check`` verifies it, ``regenerate`` records it in
    the reference, the README and the proofs, ``--check`` finds nothing left, and the tests of those
    places pass; the inline ``ORTHOVERIFY_EXTRA_CLAIMS`` command runs on the example as
    ``my_claims.py`` in a folder of its own. Nothing of the working tree is written."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if "householder.involution" in get_registry(CLAIM_MODULES).ids():
        pytest.skip("the guide's example claim is already added in this tree (the guide was followed here)")
    script = Path(sys.executable).with_name("orthoverify")
    assert script.is_file(), "the orthoverify script is installed beside this Python"
    tree = working_tree_copy(tmp_path / "tree")
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    family = tree / "orthoverify" / "claims" / "householder"
    (family / "involution.py").write_text(example_source())
    init = (family / "__init__.py").read_text()
    (family / "__init__.py").write_text(add_registry_lines(init, blocks[1]))
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "my_claims.py").write_text(example_source())
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ORTHOVERIFY_EXTRA_CLAIMS")}
    env = {**base, "PYTHONPATH": str(tree)}  # the copy's package, not the installed working tree's
    commands = shell_commands()
    assert len(commands) == 6, commands
    for command in commands:
        words = shlex.split(command)
        k = 0
        while re.fullmatch(r"[A-Z_]+=\S*", words[k]):  # leading VAR=value assignments
            k += 1
        assigned = dict(w.split("=", 1) for w in words[:k])
        program = {"orthoverify": str(script), "python": sys.executable}[words[k]]
        # the inline command tries the claim before it joins a family: the installed package, from its folder
        cwd, run_env = (extra, {**base, **assigned}) if assigned else (tree, env)
        run = subprocess.run(
            [program, *words[k + 1 :]], cwd=cwd, env=run_env, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, (command, run.stdout + run.stderr)
        out = run.stdout
        if words[k + 1] == "list":
            ids = re.findall(r"^(\S+)$", out, re.M)
            assert "householder.involution" in ids and all(i.startswith("householder.") for i in ids), ids
        elif words[k + 1] == "check":
            assert re.search(r"^householder\.involution\s+verified\s", out, re.M), out
        elif words[k + 1 :] == ["tools/regenerate.py"]:
            lines = out.splitlines()
            assert lines[-4:-1] == [
                "reference: running 1 claim(s) on the default profile",
                "README: row added for householder.involution",
                "proofs: entry added for householder.involution",
            ], out
            assert re.fullmatch(r"reports: \d+ file\(s\) out of date \(reports/report\.html, .*\)", lines[-1]), out
        elif "--check" in words:
            assert out == "", out
        else:
            assert re.search(r"\b\d+ passed\b", out) and "failed" not in out, out
    ref = json.loads((tree / "reports" / "check-default.json").read_text())
    assert {c["id"]: c["verdict"] for c in ref["claims"]}["householder.involution"] == "verified"
    assert "| `householder.involution` | verified | (added) " in (tree / "README.md").read_text()
    assert "## householder.involution — verified (added claim)" in (tree / "proofs" / "householder.md").read_text()


def test_the_committed_tree_is_regenerated() -> None:
    """``python tools/regenerate.py --check`` finds nothing to write in this tree: the reference,
    the README's claim tables and the proofs' headings say what the declarations say."""
    run = subprocess.run(
        [sys.executable, "tools/regenerate.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout == "", run.stdout + run.stderr


def regenerate_module() -> Any:
    """tools/regenerate.py (a script, not a package module), loaded from its file."""
    return load_tool("regenerate")


def test_regenerate_rewrites_what_disagrees_and_adds_what_is_missing() -> None:
    """Planted in the README and a proofs file: a flipped verdict cell and heading are rewritten
    from the declaration, an added mark restored, and a dropped row and entry written again at
    the claim's place (row text and proof prose of the others untouched)."""
    regen = regenerate_module()
    claims = list(get_registry(CLAIM_MODULES))
    readme = (ROOT / "README.md").read_text()
    planted = readme.replace("| `svd.theorem5` | **refuted** |", "| `svd.theorem5` | verified |")
    planted = re.sub(r"^\| `householder\.theorem1` \|.*\n", "", planted, flags=re.M)
    notes: list[str] = []
    fixed = regen.readme_text(planted, claims, notes)
    assert "| `svd.theorem5` | **refuted** |" in fixed and "theorem5: verified -> **refuted**" in notes[0]
    row = "| `householder.theorem1` | verified | every orthogonal matrix is a product of n Householder"
    assert row in fixed and notes[1] == "README: row added for householder.theorem1"
    assert fixed.index(row) > fixed.index("| `householder.reflection` |") and len(notes) == 2
    proofs = (ROOT / "proofs" / "householder.md").read_text()
    family = [c for c in claims if c.paper == "householder"]
    planted = proofs.replace("## householder.flops — refuted", "## householder.flops — verified")
    planted = planted.replace(
        "## householder.theorem2_proof — refuted (added claim)", "## householder.theorem2_proof — refuted"
    )
    start = planted.index("## householder.two_reflections_2x2 — ")
    planted = planted[:start] + planted[planted.index("## householder.orthogonal_when — ") :]
    notes = []
    fixed = regen.proofs_text(planted, family, notes)
    assert (
        "## householder.flops — refuted\n" in fixed
        and "## householder.theorem2_proof — refuted (added claim)\n" in fixed
    )
    entry = fixed.index("## householder.two_reflections_2x2 — verified\n\n**Statement (")
    assert fixed.index("## householder.algorithm2_float — ") < entry < fixed.index("## householder.orthogonal_when — ")
    assert len(notes) == 3 and notes[-1] == "proofs: entry added for householder.two_reflections_2x2"
    assert regen.proofs_text(proofs, family, []) == proofs and regen.readme_text(readme, claims, []) == readme


def test_regenerate_reruns_a_changed_claim_only() -> None:
    """A reference entry is stale when missing, of another verdict or of other checks than declared."""
    regen = regenerate_module()
    entries = {c["id"]: c for c in json.loads((ROOT / "reports" / "check-default.json").read_text())["claims"]}
    claim = get_registry(CLAIM_MODULES)["svd.theorem5"]
    entry = entries["svd.theorem5"]
    assert not regen.stale(claim, entry) and regen.stale(claim, None)
    assert regen.stale(claim, {**entry, "verdict": "verified"})
    assert regen.stale(claim, {**entry, "evidence": entry["evidence"][1:]})


def test_regenerate_renders_the_reports_again_when_a_proof_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report embeds each claim's proof entry: a proof written after the claim was recorded (here
    a sentence planted into one entry, in a copy of the reports and proofs, which the report reads as
    a checkout's) makes ``reports()`` name the stale report without ``write`` and render it again
    with it, after which nothing is stale."""
    regen = regenerate_module()
    for folder in ("reports", "proofs"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    monkeypatch.setattr(report_model, "find_proofs_dir", lambda: tmp_path / "proofs")
    unchanged: list[str] = []
    regen.reports(tmp_path, write=False, notes=unchanged)
    assert unchanged == []
    proofs = tmp_path / "proofs" / "householder.md"
    text = proofs.read_text()
    at = text.index("## householder.theorem1 — ")
    at = text.index("\n\n", at) + 2
    proofs.write_text(text[:at] + "A sentence the author has just written.\n\n" + text[at:])
    notes: list[str] = []
    regen.reports(tmp_path, write=False, notes=notes)
    assert len(notes) == 1 and "reports/report.html" in notes[0], notes
    assert "A sentence the author has just written." not in (tmp_path / "reports" / "report.html").read_text()
    regen.reports(tmp_path, write=True, notes=[])
    assert "A sentence the author has just written." in (tmp_path / "reports" / "report.html").read_text()
    after: list[str] = []
    regen.reports(tmp_path, write=False, notes=after)
    assert after == []
