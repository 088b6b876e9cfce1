"""Every duration the README states for `orthoverify check` is the recorded one: the figures in
its prose (command (1), the profiles, the families) and its table of runs are checked against
orthoverify/timings.json, written by tools/measure_times.py (one home for each figure). The
benchmark figures it states (growth exponents, speed-ups, memory) likewise against
reports/bench-figures.json, written by ``tools/measure_times.py --bench``; nothing is timed here."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from orthoverify import timings
from orthoverify.bench.timing import slope
from tests.scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> Any:
    """tools/measure_times.py as a module (it is a script, not part of the package)."""
    return load_tool("measure_times")


ABOUT = r"about \d+ (?:s|minutes)"
FIGURES = {
    "check.default": [
        rf"on its default profile \(recorded here: (?P<wall>{ABOUT}) of wall time on 2 idle cores, "
        rf"(?P<cpu>{ABOUT}) of CPU time",
        rf"`default` \((?P<wall>{ABOUT}) of wall time, (?P<cpu>{ABOUT}) of CPU time;",
    ],
    "check.quick": [
        rf"\* \*\*Profiles\.\*\* `quick` \(recorded: (?P<wall>{ABOUT}) of wall time, (?P<cpu>{ABOUT}) of CPU time"
    ],
    "family.quick.svd": [
        rf"`orthoverify check 'svd\.\*'`: [^()]*\([^()]*recorded on quick: (?P<wall>{ABOUT}) of wall time, "
        rf"(?P<cpu>{ABOUT}) of CPU time\)"
    ],
    "family.quick.unitary": [
        rf"`orthoverify check 'unitary\.\*'`: [^()]*\([^()]*recorded on quick: (?P<wall>{ABOUT}) of wall time, "
        rf"(?P<cpu>{ABOUT}) of CPU time\)"
    ],
    "bench.quick": [
        rf"`orthoverify bench --quick` is a smoke run [^()]*\(recorded: (?P<wall>{ABOUT}) of wall time, "
        rf"(?P<cpu>{ABOUT}) of CPU time\)"
    ],
    "tests.fast": [
        rf"\(recorded as `tests\.fast`: (?P<wall>{ABOUT}) of wall time, (?P<cpu>{ABOUT}) of CPU time; "
        r"(?P<passed>[\d,]+) passed, (?P<skipped>[\d,]+) skipped\)"
    ],
    "tests.all": [
        rf"the suite took (?P<wall>{ABOUT}) of wall time \(recorded as `tests\.all`, [^:]*: "
        r"(?P<passed>[\d,]+) passed, (?P<skipped>[\d,]+) skipped"
    ],
}
"""Where the README states each recorded run's duration (its text with line breaks and the shell
block's comment marks folded into single spaces)."""


VALIDATE = (
    r"`orthoverify validate torch-orthogonal-cayley --profile quick` "
    r"\((?P<claims>\d+) claims: (?P<verified>\d+) verified, "
    r"[^()]*commit (?P<commit>[0-9a-f]+)\) took (?P<median>[\d.]+) s "
    r"\((?P<min>[\d.]+) to (?P<max>[\d.]+), (?P<runs>\d+) runs\)"
)
"""The README's sentence on validate's duration, stated to the tenth of a second with its range,
the commit measured and the claim counts of that run (all from the record of ``validate.quick``)."""


def readme() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return " ".join(text.replace("\n#", "\n").split())


def test_every_stated_duration_is_the_recorded_one() -> None:
    runs = timings.load()["runs"]
    text = readme()
    found = 0
    for run, patterns in FIGURES.items():
        for pattern in patterns:
            hits = list(re.finditer(pattern, text))
            assert len(hits) == 1, (run, pattern)
            (m,) = hits
            assert m["wall"] == timings.about(runs[run]["wall_s"]["median"]), (run, m.group(0))
            found += 1
            if "cpu" in pattern:
                assert m["cpu"] == timings.about(runs[run]["cpu_s"]["median"]), (run, m.group(0))
                found += 1
            if "passed" in pattern:  # a test run's counts, from its summary line
                counts = runs[run]["counts"]
                stated = {k: int(m[k].replace(",", "")) for k in ("passed", "skipped")}
                assert stated == {k: counts.get(k, 0) for k in stated}, (run, m.group(0), counts)
    # no other wall or CPU time is stated anywhere: a new one must be registered above
    assert len(re.findall(rf"{ABOUT} of (?:wall|CPU) time", text)) == found


def test_validates_stated_duration_and_counts_are_the_recorded_ones() -> None:
    run = timings.load()["runs"]["validate.quick"]
    (m,) = re.finditer(VALIDATE, readme())
    wall = run["wall_s"]
    stated = [float(m[k]) for k in ("median", "min", "max")]
    assert stated == [wall["median"], wall["min"], wall["max"]], m.group(0)
    assert int(m["runs"]) == len(wall["samples"]) and m["commit"] == run["commit"], m.group(0)
    counts = run["verdicts"]
    assert (int(m["claims"]), int(m["verified"])) == (counts["claims"], counts["verified"]), m.group(0)


def test_the_table_of_runs_is_the_recorded_file() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- timings -->\n", 1)[1].split("\n<!-- /timings -->", 1)[0]
    assert table == timings.readme_table(), "run python tools/measure_times.py (it rewrites the table)"


def test_the_record_is_complete_and_consistent() -> None:
    """Each run of the tool is recorded with its samples, the commit measured and the load before
    each sample, and each median lies within its range; a run transcribed from a report in the
    commit log (until the tool measures it) says so, and only it may lack CPU time or load."""
    data = timings.load()
    assert set(data["runs"]) >= set(FIGURES) and {"quick", "default"} <= set(data["tasks"])
    for name, run in data["runs"].items():
        transcribed = run.get("transcribed")
        for figure in ("wall_s", "cpu_s"):
            f = run[figure]
            if f is None:
                assert transcribed and figure == "cpu_s", name
                continue
            assert f["min"] <= f["median"] <= f["max"] and len(f["samples"]) == len(run["load_before"]) >= 1
        assert transcribed or None not in run["load_before"], name
        assert re.fullmatch(r"[0-9a-f]{7,40}", run["commit"]), name
        if transcribed:
            assert f"transcribed from commit {transcribed}" in run["note"] and "measure_times.py" in run["note"]
        tests = name.startswith("tests.")
        assert run["command"].startswith("python -m pytest" if tests else ("orthoverify check", "orthoverify bench",
                                                                           "orthoverify validate")), name  # fmt: skip
        assert run["workers"] >= 1 and (not tests or run["counts"]["passed"] > 0), name


def test_the_tools_commands_are_the_recorded_ones() -> None:
    """The command each record names is the one tools/measure_times.py runs for it."""
    tool = _tool()
    for name, run in timings.load()["runs"].items():
        assert run["command"] == tool.command_of(name), name


def test_about_rounds_as_the_readme_states() -> None:
    assert [timings.about(s) for s in (4.0, 44.9, 99.9, 126.5, 828.8)] == [
        "about 10 s",
        "about 40 s",
        "about 100 s",
        "about 2 minutes",
        "about 14 minutes",
    ]


# ------------------------------------------------------------------ benchmark figures
BENCH = ROOT / "reports" / "bench-figures.json"
"""The benchmark figures the README states, written by ``python tools/measure_times.py --bench``."""

RECORDED = (
    r"\(recorded in `reports/bench-figures\.json`: (?P<repeats>\d+) repeats?, (?P<threads>one thread|\d+ threads), "
    r"(?P<clock>its CPU time|wall time), load average about (?P<load>\d+)\)"
)
"""How each benchmark paragraph cites its record: the repeats, the threads, what a sample measured
(the thread's CPU time, ``--clock cpu``, or wall time) and the machine's load while it ran."""


def _bench() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BENCH.read_text(encoding="utf-8"))
    return data["cases"]


def _row(case: str, impl: str | None = None, **params: Any) -> dict[str, Any]:
    (row,) = [
        r
        for r in _bench()[case]["results"]
        if all(r["params"].get(k) == v for k, v in params.items()) and impl in (None, r["impl"])
    ]
    return row


def _load(*cases: str) -> str:
    """The load average (1 minute) while the cases ran: the mean of its values before and after, rounded."""
    values = [v for c in cases for v in (_bench()[c]["load_before"][0], _bench()[c]["load_after"][0])]
    return f"{statistics.mean(values):.0f}"


def _repeats(*cases: str) -> str:
    (repeats,) = {str(_bench()[c]["repeats"]) for c in cases}
    return repeats


def _threads(*cases: str) -> str:
    (threads,) = {_bench()[c]["environment"]["torch_threads"] for c in cases}
    return "one thread" if threads == 1 else f"{threads} threads"


def _clock(*cases: str) -> str:
    (clock,) = {_bench()[c]["clock"] for c in cases}
    return "its CPU time" if clock == "cpu" else "wall time"


def _sig(x: float) -> str:
    """Two significant digits, written plainly (892.4 -> 890, 9.53 -> 9.5, 1.73 -> 1.7)."""
    return f"{float(f'{x:.2g}'):g}"


def _times(ratio: float) -> str:
    """A speed-up as the README writes it: 94x, 6.5x."""
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def _exponent(case: str, impl: str | None, key: str, least: int, **params: Any) -> str:
    """The growth exponent of the medians of ``key`` over n >= least: the slope of log time against log n."""
    rows = [
        r
        for r in _bench()[case]["results"]
        if r["params"]["n"] >= least
        and impl in (None, r["impl"])
        and all(r["params"][k] == v for k, v in params.items())
    ]
    return f"{slope([r['params']['n'] for r in rows], [r[key] for r in rows]):.1f}"


def _mib(nbytes: int) -> str:
    mib = nbytes / 2**20
    return f"{mib:.1f}" if mib < 100 else f"{mib:.0f}"


def _cayley() -> dict[str, str]:
    return {
        "exponent": _exponent("cayley.inverse", None, "seconds", 128),
        "seconds": _sig(_row("cayley.inverse", n=1024)["seconds"]),
        "solves": _sig(1 / _row("cayley.inverse", n=1024)["ratio"]),
        "repeats": _repeats("cayley.inverse"),
        "threads": _threads("cayley.inverse"),
        "clock": _clock("cayley.inverse"),
        "load": _load("cayley.inverse"),
    }


def _fft() -> dict[str, str]:
    native = sorted((r["params"]["n"], r["ratio"]) for r in _bench()["unitary.fft"]["results"]
                    if r["impl"] == "numpy-native" and r["params"]["B"] == 1)  # fmt: skip
    cross = next(n for k, (n, _) in enumerate(native) if all(ratio > 1 for _, ratio in native[k:]))
    top = _row("unitary.fft", "numpy-native", n=8192, B=1)
    lo, _median, hi = top["spread"]["ratio"]
    return {
        "dense": _exponent("unitary.fft", "numpy-native", "baseline_seconds", 0, B=1),
        "fft": _exponent("unitary.fft", "numpy-native", "seconds", 0, B=1),
        "cross": str(cross),
        "ratio": _times(top["ratio"]),
        "lo": _times(lo),
        "hi": _times(hi),
        "repeats": _repeats("unitary.fft"),
        "threads": _threads("unitary.fft"),
        "clock": _clock("unitary.fft"),
        "load": _load("unitary.fft"),
    }


def _highprec() -> dict[str, str]:
    solve, product = _row("highprec.solve", n=64, digits=50), _row("highprec.matmul", n=64, digits=50)
    return {
        "solve_ms": _sig(solve["seconds"] * 1e3),
        "mpmath_ms": _sig(solve["baseline_seconds"] * 1e3),
        "solve": _times(solve["ratio"]),
        "n16": _times(_row("highprec.solve", n=16, digits=50)["ratio"]),
        "n32": _times(_row("highprec.solve", n=32, digits=50)["ratio"]),
        "d100": _times(_row("highprec.solve", n=64, digits=100)["ratio"]),
        "product_ms": _sig(product["seconds"] * 1e3),
        "mpmath_product_ms": _sig(product["baseline_seconds"] * 1e3),
        "product": _times(product["ratio"]),
        "repeats": _repeats("highprec.solve", "highprec.matmul"),
        "threads": _threads("highprec.solve", "highprec.matmul"),
        "clock": _clock("highprec.solve", "highprec.matmul"),
        "load": _load("highprec.solve", "highprec.matmul"),
    }


def _memory() -> dict[str, str]:
    t16, t64 = (_row("householder.memory_T", T=t) for t in (16, 64))
    return {
        "r16": _mib(t16["peak_bytes"]),
        "r64": _mib(t64["peak_bytes"]),
        "s16": _mib(t16["baseline_peak_bytes"]),
        "s64": _mib(t64["baseline_peak_bytes"]),
        "t16": f"{t16['seconds'] / t16['baseline_seconds']:.1f}",
        "t64": f"{t64['seconds'] / t64['baseline_seconds']:.1f}",
        "repeats": _repeats("householder.memory_T"),
        "threads": _threads("householder.memory_T"),
        "clock": _clock("householder.memory_T"),
        "load": _load("householder.memory_T"),
    }


BENCH_FIGURES = {
    "cayley.inverse": (
        r"`orthoverify bench cayley\.inverse` measures its cost: time grows about as n\^(?P<exponent>[\d.]+) "
        r"between n = 128 and 1024 \(the slope of log time against log n over the medians\), (?P<seconds>[\d.]+) s "
        r"at n = 1024, the time of (?P<solves>[\d.]+) plain inverse Cayley solves \(I \+ W\)⁻¹\(I − W\) timed in "
        rf"turns with it {RECORDED}",
        _cayley,
    ),
    "unitary.fft": (
        r"the dense product's time grows about as n\^(?P<dense>[\d.]+) and the FFT path's \(numpy\) about as "
        r"n\^(?P<fft>[\d.]+) in this range \(its per-call overhead dominates\), and numpy's FFT overtakes the dense "
        r"product from n = (?P<cross>\d+) \(at n = 8192, B = 1: (?P<ratio>[\d.]+x) faster, (?P<lo>[\d.]+x) to "
        rf"(?P<hi>[\d.]+x) over the repeats\) {RECORDED}",
        _fft,
    ),
    "highprec.*": (
        rf"`orthoverify bench 'highprec\.\*'` {RECORDED}: the n = 64, 50-digit solve takes (?P<solve_ms>[\d.]+) ms "
        r"against (?P<mpmath_ms>[\d.]+) ms for `mpmath\.lu_solve` \(\*\*(?P<solve>[\d.]+x)\*\*; (?P<n16>[\d.]+x) at "
        r"n = 16, (?P<n32>[\d.]+x) at n = 32; (?P<d100>[\d.]+x) at 100 digits\), the n = 64 product "
        r"(?P<product_ms>[\d.]+) ms against (?P<mpmath_product_ms>[\d.]+) ms \((?P<product>[\d.]+x)\)",
        _highprec,
    ),
    "householder.memory_T": (
        r"the `recompute` strategy keeps (?P<r16>[\d.]+) MiB at T = 16 and (?P<r64>[\d.]+) MiB at T = 64 "
        r"\(O\(nT·B\)\), `store` (?P<s16>[\d.]+) MiB and (?P<s64>[\d.]+) MiB \(O\(nmT·B\)\), recompute taking "
        r"(?P<t16>[\d.]+) and (?P<t64>[\d.]+) times store's time \(peak bytes of torch's CPU allocations in one "
        rf"call\) {RECORDED}",
        _memory,
    ),
}
"""Where the README states each benchmark figure, and the figures the record gives (its text with
line breaks folded into single spaces)."""


@pytest.mark.parametrize("case", list(BENCH_FIGURES))
def test_every_stated_benchmark_figure_is_the_recorded_one(case: str) -> None:
    pattern, expected = BENCH_FIGURES[case]
    hits = list(re.finditer(pattern, readme()))
    assert len(hits) == 1, (case, len(hits), pattern)
    want = expected()
    got = {k: hits[0][k] for k in want}
    assert got == want, f"{case}: the README states {got}, reports/bench-figures.json gives {want}"


def test_the_benchmark_record_is_complete() -> None:
    """Every case was run by the tool's command, on every row of its sizes, with its commit and
    load recorded; a ``.two_threads`` record ran its case with two threads and wall-clock samples."""
    cases = _bench()
    assert set(cases) == set(_tool().BENCH_CASES)
    for name, rec in cases.items():
        case = name.removesuffix(".two_threads")
        if name == case:
            command = f"OMP_NUM_THREADS=1 orthoverify bench {case} --repeats {rec['repeats']} --clock cpu"
            assert rec["clock"] == "cpu" and rec["environment"]["torch_threads"] == 1, name
        else:
            command = f"OMP_NUM_THREADS=2 orthoverify bench {case} --repeats {rec['repeats']}"
            assert rec["clock"] == "wall" and rec["environment"]["torch_threads"] == 2, name
        assert rec["command"] == command, name
        assert len(rec["load_before"]) == len(rec["load_after"]) == 3 and rec["results"], name
        assert re.fullmatch(r"[0-9a-f]{7,40}", rec["commit"]), name
        assert all(r["case"] == case and r["seconds"] > 0 and r["baseline_seconds"] > 0 for r in rec["results"])
    # no benchmark figure is stated without its record: every "load average about" is one of the above
    assert len(re.findall(r"recorded in `reports/bench-figures\.json`", readme())) == len(BENCH_FIGURES)


# ------------------------------------------------------------------ the WY path's block sizes
def _blocks(name: str = "householder.blocks") -> dict[str, Any]:
    return _bench()[name]


BLOCKS = {
    "ops": (
        r"\*\*(?P<b1024>\d+) with CUDA's block \(one block of 1024\)\*\*, (?P<b24>\d+) with the CPU's block 24 "
        r"\((?P<nblocks>\d+) blocks; (?P<b64>\d+) at block 64\) and (?P<dense>\d+) for the dense leaf W X"
    ),
    "flops": (
        r"block 24 does about (?P<mflop>\d+) MFLOP \(7·n·m·B \+ 2·n·m·k\) at n = m = 512 against the dense "
        r"product's (?P<dense>\d+) \(6·n²·B\)"
    ),
}
"""Where the README states the figures of ``householder.blocks`` (the table itself is the tool's)."""


def _one(pattern: str) -> re.Match[str]:
    hits = list(re.finditer(pattern, readme()))
    assert len(hits) == 1, (len(hits), pattern)
    return hits[0]


def test_the_text_on_block_sizes_is_the_recorded_one() -> None:
    """What the README says between its ``<!-- blocks -->`` markers (how it was measured, the
    table, the 2x target met or not with one and two threads, or not judged from a noisy row) is
    what tools/measure_times.py writes from the record."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = text.split("<!-- blocks -->\n", 1)[1].split("\n<!-- /blocks -->", 1)[0]
    assert said == _tool().blocks_table(_bench()), "run python tools/measure_times.py --bench householder.blocks"


def test_the_block_size_figures_are_the_recorded_ones() -> None:
    """The operation counts at n = m = 1024 (the record's ``ops``); the flop count by its formula."""
    ops = {r["params"]["block"]: r for r in _blocks()["results"] if r["params"]["n"] == 1024}
    m = _one(BLOCKS["ops"])
    assert [int(m[k]) for k in ("b1024", "b24", "b64", "dense", "nblocks")] == [
        ops[1024]["ops"], ops[24]["ops"], ops[64]["ops"], ops[24]["baseline_ops"], -(-1024 // 24)
    ], m.group(0)  # fmt: skip
    m = _one(BLOCKS["flops"])
    n = 512
    assert int(m["mflop"]) == round((7 * n * n * 32 + 2 * n * n * 24) / 1e6), m.group(0)
    assert int(m["dense"]) == round(6 * n * n * 32 / 1e6), m.group(0)


def test_a_noisy_two_thread_row_is_not_judged() -> None:
    """The rendering says "met" or "not met" only of a row the bench did not flag noisy (planted)."""
    cases = json.loads(json.dumps(_bench()))
    two = cases["householder.blocks.two_threads"]
    for r in two["results"]:
        r["noisy"], r["ratio"], r["spread"]["ratio"] = True, 0.4, [0.25, 0.4, 0.6]
    text = _tool().blocks_table(cases)
    assert "it is not judged at block 24: 2.50x (1.67x to 4.00x over the repeats)" in text, text
    for r in two["results"]:
        r["noisy"] = False
    assert "it is **not met**: 2.50x at block 24." in _tool().blocks_table(cases)


def test_the_two_thread_record_alone_rewrites_the_readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--bench householder.blocks.two_threads`` on its own rewrites the README's text on block
    sizes from the new record (it once kept the old commit and ratio there). Nothing is timed:
    the measurement is a copy of the recorded one with another commit and ratio."""
    tool = _tool()
    (tmp_path / "reports").mkdir()
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    monkeypatch.setattr(tool, "BENCH_FILE", tmp_path / "reports" / "bench-figures.json")
    tool.BENCH_FILE.write_text(json.dumps({"cases": _bench()}), encoding="utf-8")
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    two = json.loads(json.dumps(_bench()["householder.blocks.two_threads"]))
    for r in two["results"]:
        r["ratio"], r["spread"]["ratio"], r["noisy"] = 0.4, [0.39, 0.4, 0.41], False
    monkeypatch.setattr(tool, "measure_bench", lambda case, repeats: json.loads(json.dumps(two)))
    assert tool.main_bench(["householder.blocks.two_threads"], 3, "", "abc1234") == 0
    said = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "wall time; commit abc1234, load average" in said and "it is **not met**: 2.50x at block 24." in said


@pytest.mark.slow  # two pytest processes
def test_the_tool_keeps_a_test_runs_summary_counts(tmp_path: Path) -> None:
    """measure_tests runs a pytest command and keeps the counts of its summary line (what the
    README states beside the suite's duration); a failing run stops the tool. Nothing is timed here:
    only the counts are read."""
    tool = _tool()
    (tmp_path / "test_small.py").write_text(
        "import pytest\n\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n\n"
        "@pytest.mark.skip\ndef test_c():\n    pass\n"
    )
    argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(tmp_path / "test_small.py")]
    *_times, counts = tool.measure_tests(argv)
    assert counts == {"passed": 2, "skipped": 1}
    (tmp_path / "test_small.py").write_text("def test_a():\n    assert False\n")
    with pytest.raises(SystemExit, match="exited 1"):
        tool.measure_tests(argv)
    assert tool.command_of("tests.fast") == 'python -m pytest -n 2 -m "not slow" -p no:cacheprovider -q'


def test_the_idle_machine_the_readme_names_is_the_records() -> None:
    """The README's "the check, bench and validate rows were measured on an idle 2-core machine (... load
    averages of 1 to 2 ...)": every load before those runs rounds into that range, on 2 CPUs."""
    data = timings.load()
    m = re.search(
        r"The `check`, `bench` and `validate` rows were measured on an idle (\d+)-core machine "
        r"\(nothing else running; load averages of (\d+) to (\d+) are",
        readme(),
    )
    assert m is not None
    cores, low, high = (int(g) for g in m.groups())
    assert data["machine"]["cpu_count"] == cores
    for name, run in data["runs"].items():
        if name.split(".")[0] in ("check", "family", "bench", "validate"):
            assert all(low <= round(x) <= high for x in run["load_before"]), (name, run["load_before"])


def test_the_benchmark_conditions_the_readme_names_are_the_records() -> None:
    """The README's "all but householder.blocks ... were measured on the idle 2-core machine (load
    average about 1 while each case ran, commit C)": the record's loads (before and after) and commits."""
    m = re.search(
        r"All but `householder\.blocks` \(whose text gives its own commit and load\) were measured on the idle "
        r"(\d+)-core machine \(load average about (\d+) while each case ran, commit ([0-9a-f]+)\)",
        readme(),
    )
    assert m is not None
    cases = {k: v for k, v in _bench().items() if not k.startswith("householder.blocks")}
    assert {c["environment"]["cpu_count"] for c in cases.values()} == {int(m.group(1))}
    assert {_load(c) for c in cases} == {m.group(2)}, m.group(0)
    assert {c["commit"] for c in cases.values()} == {m.group(3)}, m.group(0)


def test_the_readme_says_which_rows_are_transcribed() -> None:
    """While a row of the record is transcribed from the commit log rather than measured by the
    tool, the README's prose names those rows (`tests.fast` ...); once the tool has measured them
    all, the sentence must go."""
    transcribed = sorted(n for n, r in timings.load()["runs"].items() if r.get("transcribed"))
    m = re.search(r"the (\w+) test rows are transcribed from one run each", readme())
    if not transcribed:
        assert m is None, "every row is measured now: drop the README's sentence on transcribed rows"
        return
    assert m is not None and all(n.startswith("tests.") for n in transcribed), transcribed
    assert {"one": 1, "two": 2}[m.group(1)] == len(transcribed), transcribed
