"""The worked example of docs/adding-a-claim.md works as printed: registered as an extra claims
module it is verified, and with a planted defect it is refuted with an exact counterexample."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from orthoverify.engine import Registry, run_checks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "adding-a-claim.md"


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


@pytest.mark.slow
def test_guide_shell_commands_run_as_written(tmp_path: Path) -> None:
    """Each shell command of the guide, run by the installed `orthoverify` script (not `python -m`,
    which would put the folder on sys.path itself) in the folder of `my_claims.py`, the example
    file: the extra claims module imports from there, `list` takes a pattern, `check` verifies."""
    script = Path(sys.executable).with_name("orthoverify")
    assert script.is_file(), "the orthoverify script is installed beside this Python"
    (tmp_path / "my_claims.py").write_text(example_source())
    commands = shell_commands()
    assert len(commands) == 3, commands
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ORTHOVERIFY_EXTRA_CLAIMS")}
    env["ORTHOVERIFY_EXTRA_CLAIMS"] = "my_claims"  # the block's commands run after the claim is registered
    for command in commands:
        words = shlex.split(command)
        k = 0
        while re.fullmatch(r"[A-Z_]+=\S*", words[k]):  # leading VAR=value assignments
            k += 1
        assert words[k] == "orthoverify", command
        assigned = dict(w.split("=", 1) for w in words[:k])
        run = subprocess.run(
            [str(script), *words[k + 1 :]], cwd=tmp_path, env={**env, **assigned}, capture_output=True, text=True
        )
        assert run.returncode == 0, (command, run.stdout + run.stderr)
        if words[k + 1] == "list":
            ids = re.findall(r"^(\S+)$", run.stdout, re.M)
            assert "householder.involution" in ids and all(i.startswith("householder.") for i in ids), ids
        else:
            assert re.search(r"^householder\.involution\s+verified\s", run.stdout, re.M), run.stdout
