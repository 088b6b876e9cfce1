"""The README's facts that have a home elsewhere are checked against it: every name of the package
and every file it mentions exists, its claim counts are the registry's, the planted suite's
figures are tests/planted/judge_planted.py's, the bench cases it lists are the command's, and its
layout names the layers in pyproject.toml's order (issue 28: one home per fact)."""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from orthoverify.bench import all_cases
from orthoverify.claims import MODULES
from orthoverify.engine import get_registry

ROOT = Path(__file__).resolve().parents[2]


def readme() -> str:
    """The README with its line breaks folded into single spaces."""
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def resolves(dotted: str) -> bool:
    """``orthoverify.a.b.c``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def dotted_names(text: str) -> set[str]:
    return set(re.findall(r"`(orthoverify(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", text)) | {
        "orthoverify." + n for n in re.findall(r"`((?:conformance|engine)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`", text)
    }


def test_every_named_module_and_function_exists() -> None:
    names = dotted_names(readme())
    assert len(names) >= 20, names
    assert [n for n in sorted(names) if not resolves(n)] == []
    assert not resolves("orthoverify.conformance.checks._plan")  # a planted stale name fails


def paths(text: str) -> set[str]:
    return set(re.findall(r"\b((?:orthoverify|tests|tools|proofs|reports|docs)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*])", text))


def exists(path: str) -> bool:
    """A file, folder or glob of the repository, or ``file.function`` (a function of a module)."""
    if list(ROOT.glob(path)):
        return True
    module, _, attr = path.rpartition(".")
    source = ROOT / (module + ".py")
    return source.is_file() and re.search(rf"^def {re.escape(attr)}\b", source.read_text(), re.M) is not None


def test_every_named_file_exists() -> None:
    named = paths(readme())
    assert len(named) >= 30, named
    assert [p for p in sorted(named) if not exists(p)] == []
    assert not exists("orthoverify/conformance/checks_old.py")


def test_every_file_and_check_name_the_guides_name_exists() -> None:
    """The files docs/*.md and reports/README.md name exist (but the guide's example claim, which
    the reader creates), and the check names the guide lists are words of the vocabulary."""
    from orthoverify.engine.check_names import VOCABULARY

    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "reports" / "README.md"]
    text = " ".join(" ".join(d.read_text(encoding="utf-8").split()) for d in docs)
    named = paths(text) - {"orthoverify/claims/householder/involution.py"}
    assert len(named) >= 15, named
    assert [p for p in sorted(named) if not exists(p)] == []
    guide = " ".join((ROOT / "docs" / "adding-a-claim.md").read_text(encoding="utf-8").split())
    listed = guide.split("in `orthoverify/engine/check_names.py` (", 1)[1].split(", ...)", 1)[0]
    words = re.findall(r"`([a-z_]+)`", listed)
    assert len(words) >= 6 and set(words) <= set(VOCABULARY), set(words) - set(VOCABULARY)


def test_claim_counts_are_the_registrys() -> None:
    """`orthoverify check 'svd.*'`: 30 claims, 19 verified, 11 refuted (each family stated so)."""
    claims = list(get_registry(MODULES))
    text = readme()
    stated = re.findall(r"`orthoverify check '([a-z]+)\.\*'`: (\d+) claims, (\d+) verified, (\d+) refuted", text)
    assert len(stated) >= 2
    for family, total, verified, refuted in stated:
        expected = Counter(c.expected for c in claims if c.id.startswith(family + "."))
        assert (int(total), int(verified), int(refuted)) == (
            sum(expected.values()),
            expected["verified"],
            expected["refuted"],
        ), family
    # the whole registry's count is stated nowhere (a new claim would make it stale): none above
    # any family's or validate run's (at most 30)
    assert [n for n in re.findall(r"(\d+) claims\b", text) if int(n) > 50] == []


def test_planted_suite_figures_are_the_suites() -> None:
    planted = pytest.importorskip("tests.planted.judge_planted")
    correct, broken = len(planted.CORRECT), len(planted.BROKEN)
    text = readme()
    assert f"{correct} correct ones" in text and f"and {broken} broken ones, one defect each" in text
    assert f"**broken caught {broken}/{broken}**" in text and f"**correct passing {correct}/{correct}**" in text


def test_bench_cases_listed_are_the_commands() -> None:
    text = readme()
    para = text.split("Cases (`--list`):", 1)[1].split("`orthoverify bench --quick` is a smoke run", 1)[0]
    named = set(re.findall(r"`([a-z]+\.[A-Za-z_]+(?:\.[a-z|]+)?)`", para)) - {"extra.not_measured"}
    expanded = set()
    for name in named:
        head, _, tail = name.rpartition(".")
        expanded |= {f"{head}.{t}" for t in tail.split("|")} if "|" in tail else {name}
    assert expanded == set(all_cases())
    for name, case in all_cases().items():  # a case left out of a plain run says so where it is listed
        mention = f"`{name.rsplit('.', 1)[0]}." if name.startswith("suite.") else f"`{name}`"
        said = re.split(r", (?:and [a-z -]+)?`", para.split(mention, 1)[1], maxsplit=1)[0]  # to the next case
        assert ("only when a glob names" in said) == (not case.in_default), name


def test_layout_names_the_layers_in_their_order() -> None:
    """The Development section's layout lists every layer of the import contract, bottom up."""
    contract = (ROOT / "pyproject.toml").read_text().split('id = "layers"', 1)[1]  # tomllib needs 3.11
    layers = re.findall(r'^    "([^"]+)",$', contract.split("layers = [", 1)[1].split("]", 1)[0], re.M)
    assert layers[0] == "__main__" and layers[-2] == "_limits", layers
    text = readme()
    bullet = text.split("* Layout, from the bottom layer up", 1)[1].split("* ", 1)[0]
    last = -1
    for layer in reversed(layers[1:-2]):  # not __main__, the ground floor nor _limits
        names = re.split(r" [|:] ", layer)
        where = []
        for name in names:
            m = re.search(rf"`orthoverify/{name}(?:\.py)?`", bullet)
            assert m is not None, name
            where.append(m.start())
        assert min(where) > last, layer
        last = max(where)


def listed_keys(text: str, start: str, end: str) -> set[str]:
    """The backticked keys the README lists between ``start`` and ``end``, leaving out the values
    it names in parentheses."""
    part = text.split(start, 1)[1].split(end, 1)[0]
    depth, kept = 0, []
    for ch in part:
        depth += ch == "("
        if depth == 0:
            kept.append(ch)
        depth -= ch == ")" and depth > 0
    return set(re.findall(r"`([a-z_0-9]+)`", "".join(kept)))


def test_json_keys_listed_are_the_ones_written() -> None:
    """The JSON result's keys as "The JSON result" lists them, against the committed reference
    result (what the engine writes; tests/claims checks that it is current)."""
    data = json.loads((ROOT / "reports" / "check-default.json").read_text())
    text = readme()
    section = text.split("### The JSON result", 1)[1].split("## Reports", 1)[0]
    top = listed_keys(section, "Top level:", "and `claims`, a list") | {"claims"}
    assert top == set(data), top ^ set(data)
    env = section.split("`environment` (", 1)[1].split(")", 1)[0].replace(" versions", "").replace(" ", "").split(",")
    assert set(env) == set(data["environment"]), env
    claims = listed_keys(section, "a list of objects with", "* Each `evidence` object")
    assert claims == set(data["claims"][0]), claims ^ set(data["claims"][0])
    evidence = listed_keys(section, "* Each `evidence` object:", "`data` holds")
    written = set().union(*(e.keys() for c in data["claims"] for e in c["evidence"]))
    assert evidence == written, evidence ^ written
    cx = listed_keys(section, "* `counterexample`: `null`, or", "* Non-finite")
    recorded = set().union(*(c["counterexample"].keys() for c in data["claims"] if c["counterexample"]))
    assert cx == recorded, cx ^ recorded


def test_every_extra_named_is_declared() -> None:
    """`pip install 'orthoverify[dask]'`, `'.[test,dev]'`: each extra is one of pyproject.toml's."""
    section = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    declared = set(re.findall(r"^([a-z]+) = \[", section, re.M))
    named = {e for group in re.findall(r"(?:orthoverify|'\.)\[([a-z,]+)\]", readme()) for e in group.split(",")}
    assert {"flint", "test", "dev", "dask"} <= named and named <= declared, named - declared


def test_every_kind_check_and_adapter_of_validate_is_described() -> None:
    """Each kind has a row of the kinds table, and each check and built-in adapter of
    `orthoverify validate --list` (its recorded listing) is named in the README."""
    listing = json.loads((ROOT / "orthoverify" / "validate_listing.json").read_text())
    text = readme()
    kinds = set(re.findall(r"\| `([a-z-]+)` \| `f\(", text))
    assert kinds == {k if isinstance(k, str) else k["name"] for k in listing["kinds"]}, kinds
    named = set(re.findall(r"`([a-z_0-9-]+)`", text))
    checks = {c if isinstance(c, str) else c["name"] for c in listing["checks"]} | {"devices"}
    adapters = {a if isinstance(a, str) else a["name"] for a in listing["adapters"]}
    assert checks - named == set() and adapters - named == set()


def test_ci_runs_the_linters_the_readme_names() -> None:
    """`.ci/run` ... runs command (2) exactly, then `ruff`, `mypy` and `lint-imports`: in that order."""
    sentence = readme().split("runs command (2) exactly, then", 1)[1].split("(", 1)[0]
    tools = re.findall(r"`([a-z-]+)`", sentence)
    assert tools == ["ruff", "mypy", "lint-imports"], tools
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    at = [next(i for i, ln in enumerate(lines) if ln.startswith(f".venv/bin/{tool}")) for tool in tools]
    assert at == sorted(at)
    contracts = re.findall(r"^\[\[tool\.importlinter\.contracts\]\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    stated = readme().split("(the layering contract in pyproject.toml: ", 1)[1].split(";", 1)[0].split(", ")
    assert len(contracts) == len(stated), stated  # one clause per contract


def synopses() -> list[dict[str, set[str]]]:
    """The options each subcommand's synopsis shows, per ```text block of the README (a line that
    says "(see ...)" points to the command's own section, as validate's summary line does, and is
    left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out: list[dict[str, set[str]]] = []
    for block in (part.split("```", 1)[0] for part in text.split("```text\n")[1:]):
        shown: dict[str, set[str]] = {}
        sub = None
        for line in block.splitlines():
            m = re.match(r"orthoverify (\w+)\b", line)
            if m:
                sub = None if "(see " in line else m.group(1)  # a pointer to the command's own section
            elif not line.startswith(" "):
                sub = None
            if sub is not None:
                shown.setdefault(sub, set()).update(re.findall(r"\[(--[a-z-]+)", line))
                shown[sub].update(re.findall(r"^orthoverify \w+ (--[a-z-]+)$", line))
        if shown:
            out.append(shown)
    return out


def test_every_synopsis_shows_the_options_the_command_takes() -> None:
    """Each synopsis of the README, block by block, against the parser: no option it lacks, none it
    leaves out (the command-line summary and each command's own section alike; validate's summary
    line points to its section, whose synopsis is complete)."""
    import argparse

    from orthoverify.cli import build_parser

    blocks = synopses()
    parser = build_parser()
    (subs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set().union(*blocks) >= {"list", "check", "report", "replay", "validate", "bench"}, blocks
    checked = 0
    for shown in blocks:
        for name, options_shown in shown.items():
            sub = subs.choices[name]
            options = {s for a in sub._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
            assert options_shown == options, (name, options_shown ^ options)
            checked += 1
    assert checked >= 7, blocks  # bench twice


def _findings(profile: str) -> dict[str, set[tuple[str, str]]]:
    data = json.loads((ROOT / "reports" / f"validate-libraries-{profile}.json").read_text())
    return {name: {(f["check"], f["severity"]) for f in t["findings"]} for name, t in data["targets"].items()}


def test_the_quick_profiles_library_findings_are_the_records() -> None:
    """The README's "on the quick profile every target gives the findings of the default tables
    above except `weight_decay` of A and B": the two records (tools/library_findings.py) differ exactly there,
    and the finding the paragraph quotes is in the quick record as stated."""
    quick, default = _findings("quick"), _findings("default")
    assert set(quick) == set(default)
    differ = {(name, check) for name in quick for check, _ in quick[name] ^ default[name]}
    m = re.search(
        r"every target gives the findings of the default tables above except `([a-z_0-9]+)` of ([^:]+):", readme()
    )
    assert m is not None
    targets = set(re.findall(r"`([a-z_0-9-]+)`", m.group(2)))
    assert differ == {(t, m.group(1)) for t in targets}, differ
    steps = re.search(r"only the default profile's (\w+) SGD steps in (float\d+) refute it", readme())
    assert steps is not None
    recorded = json.loads((ROOT / "reports" / "validate-libraries-default.json").read_text())["targets"]
    for t in targets:
        (f,) = [f for f in recorded[t]["findings"] if f["check"] == m.group(1)]
        n = WORDS[steps.group(1)]
        assert f"after step {n} of SGD" in f["counterexample"] and f["row"].endswith(f"{steps.group(2)}-cpu"), f
    data = json.loads((ROOT / "reports" / "validate-libraries-quick.json").read_text())
    (wd,) = [f for f in data["targets"]["torch-orthogonal-householder"]["findings"] if f["check"] == "weight_decay"]
    stated = re.search(
        r"`weight_decay` finding is (\d+) zero columns of `orthogonal\(nn\.Linear\((\d+), \d+\)", readme()
    )
    assert stated is not None
    assert f"{stated.group(1)} zero column(s)" in wd["value"] and wd["counterexample"].startswith(
        f"n = {stated.group(2)},"
    )


EXAMPLES: dict[tuple[str, str, str], list[str]] = {
    ("README.md", "bash", "# (1) install"): [
        "tests/system/test_readme.py::test_command_one_leaves_a_fresh_clone_clean",  # command (1), on one claim
        "tests/system/test_readme.py::test_ci_runs_command_two_exactly",  # command (2) is the line .ci/run runs
    ],
    ("README.md", "text", "orthoverify list [ID-OR-GLOB"): [
        "tests/system/test_readme_facts.py::test_every_synopsis_shows_the_options_the_command_takes",
    ],
    ("README.md", "text", "orthoverify validate TARGET"): [
        "tests/system/test_readme_facts.py::test_every_synopsis_shows_the_options_the_command_takes",
    ],
    ("README.md", "python", "import torch"): [  # myflow.py, the worked example
        "tests/system/test_readme.py::test_the_worked_example_gives_what_the_readme_says",
        "tests/system/test_readme.py::test_python_examples_run_as_script_files",
    ],
    ("README.md", "text", "orthoverify bench [CASE-GLOB"): [
        "tests/system/test_readme_facts.py::test_every_synopsis_shows_the_options_the_command_takes",
    ],
    ("README.md", "text", "tools/gpu-check ["): [  # running it needs a GPU; its options are checked here
        "tests/system/test_readme_facts.py::test_the_gpu_check_synopsis_is_the_tools",
    ],
    ("README.md", "python", "import numpy as np"): [
        "tests/system/test_readme.py::test_python_examples_run_as_script_files",
    ],
    ("docs/adding-a-claim.md", "python", '"""householder.involution'): [
        "tests/claims/test_adding_a_claim.py::test_the_guide_followed_word_for_word",
        "tests/claims/test_adding_a_claim.py::test_guide_example_is_verified",
    ],
    ("docs/adding-a-claim.md", "python", "from orthoverify.claims.householder import ("): [
        "tests/claims/test_adding_a_claim.py::test_the_guide_followed_word_for_word",  # its "# new" lines, added
    ],
    ("docs/adding-a-claim.md", "bash", "orthoverify list 'householder.*'"): [
        "tests/claims/test_adding_a_claim.py::test_the_guide_followed_word_for_word",
    ],
    ("reports/README.md", "bash", ".venv/bin/orthoverify check --json reports/check-default.json"): [
        # a new reference run takes minutes and rewrites the committed files: its commands are parsed,
        # and the report command's output is what tests/system/test_report.py compares with the committed one
        "tests/system/test_readme_facts.py::test_the_reference_commands_are_accepted",
    ],
}
"""Each fenced block of the README and the guides (document, language, first line's start) and
the tests that run it as written, or check it against what it shows."""


def fenced_blocks() -> list[tuple[str, str, str]]:
    """(document, language, first line) of every fenced block of README.md, reports/README.md and docs/*.md."""
    found = []
    for doc in [ROOT / "README.md", ROOT / "reports" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", doc.read_text(encoding="utf-8"), re.S | re.M):
            found.append((doc.relative_to(ROOT).as_posix(), lang, body.splitlines()[0] if body else ""))
    return found


def test_every_example_block_is_run_by_a_test() -> None:
    """A block added to the README or a guide fails here until a test runs it (and is named above);
    each test named exists."""
    blocks = fenced_blocks()
    assert len(blocks) >= 10, blocks
    claimed = {key: [b for b in blocks if b[:2] == key[:2] and b[2].startswith(key[2])] for key in EXAMPLES}
    assert {k: len(v) for k, v in claimed.items() if len(v) != 1} == {}, "each entry names one block"
    assert sorted(b for v in claimed.values() for b in v) == sorted(blocks), "a block no test runs"
    for tests in EXAMPLES.values():
        for test in tests:
            path, name = test.split("::")
            assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.M), test


def test_the_gpu_check_synopsis_is_the_tools() -> None:
    """The README's synopsis of tools/gpu-check (a GPU is needed to run it) shows exactly the
    options the script's parser takes, as its own docstring does."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("gpu_check", str(ROOT / "tools" / "gpu-check"))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (synopsis,) = re.findall(r"^tools/gpu-check .*$", text, re.M)
    assert synopsis in (module.__doc__ or ""), synopsis
    parsed = module.parse_args([])
    shown = set(re.findall(r"\[--([a-z-]+)", synopsis))
    assert shown == {k.replace("_", "-") for k in vars(parsed)}, (shown, vars(parsed))


def test_the_defaults_the_readme_states_are_the_parsers() -> None:
    """replay's `--timeout` (default 120), report's DIR (default `out`), validate's profile: the
    README's words against the command line's defaults."""
    import argparse

    from orthoverify.cli import build_parser

    (subs,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    default = {name: {a.dest: a.default for a in sub._actions} for name, sub in subs.choices.items()}
    text = readme()
    m = re.search(r"the replay stops with an error after `--timeout` seconds \(default (\d+)\)", text)
    assert m is not None and float(m.group(1)) == default["replay"]["timeout"]
    m = re.search(r"\(default DIR `([a-z]+)`, NAME the result file's name", text)
    assert m is not None and m.group(1) == default["report"]["out"]
    from orthoverify.cli import OUT_DIR

    m = re.search(r"writes the JSON result \(default `([a-z]+)/check-<profile>\.json`\)", text)
    assert m is not None and default["check"]["json_path"] is None and m.group(1) == OUT_DIR


def test_the_guides_template_examples_use_their_templates() -> None:
    """Each row of docs/adding-a-claim.md's table of templates names claim files that use (at least
    one of) the row's templates, and every template it names is one of engine.templates' (a claim
    refactored onto another template leaves its row pointing at a file that no longer shows it)."""
    from orthoverify.engine import templates, templates_more

    guide = (ROOT / "docs" / "adding-a-claim.md").read_text(encoding="utf-8")
    table = guide.split("| template | for | example |", 1)[1].split("\n\n", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| `")]
    assert len(rows) >= 12, rows
    for row in rows:
        names_cell, _for, examples = row.strip("|").split(" | ")
        names = re.findall(r"`([A-Za-z_]+)\(", names_cell)
        assert names and all(hasattr(templates, n) or hasattr(templates_more, n) for n in names), row
        files = re.findall(r"`([a-z_0-9]+/[a-z_0-9]+\.py)`", examples)
        assert files, row
        for f in files:
            source = (ROOT / "orthoverify" / "claims" / f).read_text()
            assert any(re.search(rf"\b{n}\b", source) for n in names), (f, names)
    bespoke = re.search(r"is `(bespoke)\(name, fn, backends, method,\s+quantity_name\)` \(`([a-z/_0-9]+\.py)`\)", guide)
    assert bespoke is not None and hasattr(templates, "bespoke")
    assert "bespoke" in (ROOT / "orthoverify" / "claims" / bespoke.group(2)).read_text()


NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve"
WORDS = {w: n for n, w in enumerate(NUMBER_WORDS.split())}


def test_the_unnormalised_fft_urnn_fails_the_checks_the_readme_counts() -> None:
    """The README's "a uRNN with an unnormalised FFT fails twelve checks (seven with float64)": the
    planted suite's pins of that target (tests/planted/judge_planted.py), on the checks planned for
    both dtypes and for float64 alone."""
    planted = pytest.importorskip("tests.planted.judge_planted")
    from orthoverify.conformance.planning import plan_checks

    m = re.search(
        r"A uRNN with an unnormalised FFT fails ([a-z]+) checks \(([a-z]+) with `--dtype float64`\)", readme()
    )
    assert m is not None
    target = planted.BY_NAME["urnn_unnormalised_fft"]
    for dtypes, stated in ((("float32", "float64"), m.group(1)), (("float64",), m.group(2))):
        checks = [name for name, *_ in plan_checks(target.kind, dtypes)]
        refuted = [c for c, v in target.expected(checks).items() if v == "refuted" and c in checks]
        assert len(refuted) == WORDS[stated], (dtypes, refuted)


def test_the_device_guards_fast_claims_are_as_many_as_stated() -> None:
    """The README's "(and all but six claims of the device guard)": the guard's fast-tier claims."""
    guard = pytest.importorskip("tests.unit.engine.test_device_guard")
    m = re.search(r"and all but ([a-z]+) claims of the device guard", readme())
    assert m is not None and WORDS[m.group(1)] == len(guard.FAST_GUARDED), sorted(guard.FAST_GUARDED)


def _evidence(claim: str, method: str | None = None) -> list[dict[str, object]]:
    data = json.loads((ROOT / "reports" / "check-default.json").read_text())
    (c,) = [c for c in data["claims"] if c["id"] == claim]
    return [e for e in c["evidence"] if method in (None, e["method"])]


def test_measured_figures_in_the_claim_tables_are_the_reference_results() -> None:
    """The drift the README's Cayley table states (additive at most 1.2, multiplicative up to 64 and
    482) and the proved bounds of the rigorous evidence (8.3·10⁻⁴⁶, ...) are those of the committed
    reference result, reports/check-default.json (rounded as written)."""
    text = readme()
    m = re.search(
        r"additive ‖W′W − I‖/\(n eps\) ≤ ([\d.]+) throughout; the multiplicative Stiefel update grows to (\d+) "
        r"\(float64\) and (\d+) \(float32\)",
        text,
    )
    assert m is not None
    drift = {e["backend"]: e["data"] for e in _evidence("cayley.orthogonality_drift", "measured")}
    additive = max(max(d["additive"]) for d in drift.values())  # type: ignore[index]
    assert float(m.group(1)) == round(additive, 1), m.group(0)
    worst = [round(max(drift[f"numpy-{t}"]["multiplicative"])) for t in ("float64", "float32")]  # type: ignore[index]
    assert [int(m.group(2)), int(m.group(3))] == worst, m.group(0)
    sup = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
    for claim, pattern in (
        ("householder.orthogonal_when", r"`householder\.orthogonal_when` \(‖W'W − I‖_F ≤ ([\d.]+)·10([⁻⁰-⁹]+)"),
        ("cayley.bijection", r"`cayley\.bijection` \(both round trips ≤ ([\d.]+)·10([⁻⁰-⁹]+)"),
        ("unitary.composition", r"`unitary\.composition` \(‖W\*W − I‖_F ≤ ([\d.]+)·10([⁻⁰-⁹]+)"),
    ):
        m = re.search(pattern, text)
        assert m is not None, claim
        stated = float(f"{m.group(1)}e{m.group(2).translate(sup)}")
        (proved,) = [float(e["worst_ratio"]) for e in _evidence(claim, "rigorous")]  # type: ignore[arg-type]
        assert stated == float(f"{proved:.1e}"), (claim, stated, proved)


def test_the_limits_the_readme_states_are_the_codes() -> None:
    """Each bound the README states on untrusted input and resources is the constant that enforces it."""
    from orthoverify import _limits
    from orthoverify.backends import MAX_DIGITS
    from orthoverify.bench.core import NOISY_SPREAD
    from orthoverify.conformance import baseline
    from orthoverify.engine import executors, replay
    from orthoverify.engine import runner as runner_engine
    from orthoverify.isolation import contain, runner

    text = readme()
    stated = {
        rf"precision \(at most {MAX_DIGITS} digits\)": True,
        rf"at most {replay.MAX_VALUES:,} values, {replay.MAX_EXACT_VALUES:,} for an exact counterexample": True,
        rf"baseline.*a regular file of at most {baseline.MAX_BYTES // 2**20} MiB": True,
        rf"writes at most {runner.FLOOD_BYTES // 2**20} MiB to stdout/stderr over the run": True,
        rf"the first {runner.KEEP_BYTES} bytes kept": True,
        r"`--timeout` is at most a day": _limits.MAX_SECONDS == 86_400,
        rf"default {_limits.DEFAULT_MEMORY_LIMIT // 2**30}G on the CPU": True,
        rf"measured by the warden every {contain.POLL_SECONDS * 1000:g} ms": True,
        rf"about {contain.POLL_SECONDS * 1000:g} ms' worth of allocation beyond it": True,
        rf"bounds loading the target \(importing and building it; at least {_limits.LOAD_FLOOR_SECONDS:g} s\)": True,
        rf"If no scheduler answers within {executors.DEFAULT_TIMEOUT:g} s": True,
        rf"moved by more than {NOISY_SPREAD:g}x between repeats is marked `\"noisy\": true`": True,
        rf"a quarter of `--workers`, at most {runner_engine.MAX_DEVICE_WORKERS}, one CUDA context each": True,
    }
    for pattern, holds in stated.items():
        assert holds and re.search(pattern, text), pattern


def test_the_reference_commands_are_accepted() -> None:
    """reports/README.md's commands that rewrite the reference are the README's and parse as written."""
    import shlex

    from orthoverify.cli import build_parser

    block = (ROOT / "reports" / "README.md").read_text().split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    for command in commands:
        words = shlex.split(command)
        assert words[0] == ".venv/bin/orthoverify" and f"`{command}`" in readme(), command
        build_parser().parse_args(words[1:])


def _blame(profile: str, target: str, check: str) -> dict[str, object]:
    data = json.loads((ROOT / "reports" / f"validate-libraries-{profile}.json").read_text())
    (b,) = [b for b in data["targets"][target]["blame"] if b["check"] == check and b["row"] == "torch-float64-cpu"]
    return dict(b)


def test_blamed_ratios_in_the_prose_are_the_records() -> None:
    """The before/after ratios the validate section quotes for a blamed torch operation are those
    tools/library_findings.py recorded (reports/validate-libraries-{default,quick}.json)."""
    text = readme()
    quoted = [
        (
            "default",
            "geotorch-so-cayley",
            r"`geotorch-so-cayley` in the default record above: ([\d.e-]+) before, ([\d.e-]+) with",
        ),
        (
            "quick",
            "torch-orthogonal-cayley",
            r"blamed on `torch\.linalg\.solve`, ratio ([\d.e-]+) before and ([\d.e-]+) with",
        ),
        (
            "default",
            "torch-orthogonal-householder",
            r"`torch\.linalg\.householder_product`, ([\d.e-]+) before, ([\d.e-]+) with",
        ),
    ]
    for profile, target, pattern in quoted:
        m = re.search(pattern, text)
        assert m is not None, pattern
        b = _blame(profile, target, "second_ff")
        for stated, recorded in zip(m.groups(), (b["ratio_before"], b["ratio_after"]), strict=True):
            digits = len(stated.split("e")[0].replace(".", "").lstrip("0"))  # significant digits written
            rounded = float(f"{float(recorded):.{digits - 1}e}")  # type: ignore[arg-type]
            assert float(stated) == rounded, (target, stated, recorded)


def test_the_unit_tests_folders_are_the_ones_listed() -> None:
    """The README's "`tests/unit/` mirrors the layers (`backends`, ...)": its folders, all of them."""
    m = re.search(r"`tests/unit/` mirrors the layers \(([^)]*)\)", readme())
    assert m is not None
    listed = set(re.findall(r"`([a-z_]+)`", m.group(1)))
    folders = {d.name for d in (ROOT / "tests" / "unit").iterdir() if d.is_dir() and not d.name.startswith("_")}
    assert listed == folders, listed ^ folders


def test_the_fast_tiers_layers_are_the_ones_its_test_keeps() -> None:
    """The README's "fast tier: ... runs every layer (backends, param, ..., bench; tests/unit/test_fast_tier.py
    checks that each keeps fast tests)": the layers named are that test's."""
    tier = pytest.importorskip("tests.unit.test_fast_tier")
    m = re.search(r"runs every layer \(([a-zA-Z, ]+); `tests/unit/test_fast_tier\.py` checks that each", readme())
    assert m is not None
    assert {w.strip().lower() for w in m.group(1).split(",")} == set(tier.LAYERS), m.group(1)
