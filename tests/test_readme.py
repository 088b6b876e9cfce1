"""The README opens with the two commands, and .ci/run runs command (2) exactly."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_readme_opens_with_two_commands() -> None:
    main, tests = commands()
    assert "orthoverify check" in main and "-c constraints.txt" in main
    assert "pytest" in tests and "-c constraints.txt" in tests and ".[test,dev]" in tests


def test_ci_runs_command_two_exactly() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands()[1] in [line.strip() for line in ci]


def test_constraints_pin_torch_but_library_range_stays_open() -> None:
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text()
    assert '"torch>=2.1"' in (ROOT / "pyproject.toml").read_text()
