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


def test_main_command_writes_the_reports() -> None:
    assert "orthoverify check --report reports" in commands()[0]


def test_ci_installs_chromium_and_requires_the_browser_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" in ci and "chromium" in ci
    lines = [line.strip() for line in ci.splitlines()]
    assert lines.index(
        "export ORTHOVERIFY_REQUIRE_BROWSER=1  # the browser tests fail, not skip, if Chromium is missing"
    ) < (lines.index(commands()[1]))
