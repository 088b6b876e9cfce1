"""Measure the durations the README states and record them in orthoverify/timings.json.

    python tools/measure_times.py [--repeats N] [--runs NAME,...] [--note TEXT]

Each run is an ``orthoverify check`` command line, run as written in a fresh temporary folder
(its ``out/`` there), ``--repeats`` times (default 3), taking turns with the other runs; the file
keeps, per run, the wall time and the CPU time of the command (its processes and their children)
as median, min and max with every sample, and the machine's load average before each sample
(a busy machine inflates wall time: say so in ``--note``). From the runs' JSON results it also
keeps each profile's per-task durations (seconds per ``claim::check``, the median over the
repeats), from which ``orthoverify check`` starts its estimate of the time left.

Runs (``--runs`` picks some; the others already in the file are kept):
``check.default`` (README command (1): ``orthoverify check --report out``, the default profile),
``check.quick`` (``orthoverify check --profile quick``), and ``family.quick.<family>`` for every
claim family (``orthoverify check '<family>.*' --profile quick``), and ``bench.quick``
(``orthoverify bench --quick``, the benchmarks' smoke run), and ``validate.quick`` (``orthoverify
validate torch-orthogonal-cayley --profile quick``: the command line, target process included);
a run also keeps the verdict counts of its last result, which the README states beside the time.
Two more runs time the test suite in the repository itself (not a fresh folder): ``tests.fast``
(the fast tier, ``python -m pytest -n 2 -m "not slow"``) and ``tests.all`` (README command (2)'s
``python -m pytest -n 2``, at most once per call: it takes minutes); each keeps the counts of
pytest's last summary line (passed, skipped, ...). They run only when ``--runs`` names them.
Every run records the commit measured and the load average before each sample, which the
README's table of runs shows beside the times.

tests/system/test_readme_figures.py checks every duration the README states against this file;
the tool rewrites the README's table of runs (between its ``<!-- timings -->`` markers) itself.

    python tools/measure_times.py --bench [CASE,...] [--repeats N] [--note TEXT]

records instead the benchmark figures the README states (the growth exponent and time of
``cayley.inverse``, the speed-up of ``unitary.fft`` at n = 8192, the high-precision speed-ups of
``highprec.*``, the peak memory of ``householder.memory_T``, the WY block sizes of
``householder.blocks``) in reports/bench-figures.json: per
case, the rows of ``OMP_NUM_THREADS=1 orthoverify bench CASE --repeats N --clock cpu`` (medians
and spread over the repeats; one thread, each sample the thread's CPU time, which other work on
the machine disturbs far less than wall time), the command, the commit and the load average
before and after it (say how the machine was in ``--note``). ``householder.memory_T`` runs once:
memory does not depend on load. ``householder.blocks.two_threads`` runs ``householder.blocks`` again
with torch's two threads (``OMP_NUM_THREADS=2``, wall-clock samples: CPU time would add up both
threads), for the README's statement about two threads. The tool rewrites the README's table of
block sizes (between its ``<!-- blocks -->`` markers) from the record; tests/system/test_readme_figures.py
checks the README's other figures against the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from orthoverify import _atomic, timings

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "orthoverify" / "timings.json"
FAMILIES = ("householder", "cayley", "svd", "unitary")

RUNS: dict[str, list[str]] = {
    "check.default": ["check", "--report", "out"],
    "check.quick": ["check", "--profile", "quick"],
    **{f"family.quick.{f}": ["check", f"{f}.*", "--profile", "quick"] for f in FAMILIES},
    "bench.quick": ["bench", "--quick"],
    "validate.quick": ["validate", "torch-orthogonal-cayley", "--profile", "quick", "--json", "out/validate.json"],
}
TEST_RUNS: dict[str, list[str]] = {
    "tests.fast": ["-m", "pytest", "-n", "2", "-m", "not slow", "-p", "no:cacheprovider", "-q"],
    "tests.all": ["-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-q"],
}
"""Runs of the test suite (``python ARGV`` in the repository), by name only; ``tests.all`` runs once
(:data:`MAX_REPEATS`). Each keeps the counts of pytest's summary line."""
MAX_REPEATS = {"tests.all": 1}
EXIT_OK: dict[str, tuple[int, ...]] = {"validate.quick": (0, 1)}
"""Exit statuses that end a run normally besides 0: validate exits 1 when it refutes a check
(torch's Cayley map is refuted on ``second_ff``: torch's defect), which is its result, not a failure."""
TASK_PROFILE = {"check.default": "default", "check.quick": "quick"}
"""Runs whose JSON results give a profile's per-task durations."""
BENCH_FILE = ROOT / "reports" / "bench-figures.json"
BENCH_CASES: dict[str, int | None] = {
    "cayley.inverse": None,
    "unitary.fft": None,
    "highprec.solve": None,
    "highprec.matmul": None,
    "householder.memory_T": 1,
    "householder.blocks": None,
    "householder.blocks.two_threads": None,
}
"""The benchmark records whose figures the README states, and their repeats (None: ``--repeats``;
memory_T: one, its memory is the same each time and its store strategy takes a GiB)."""
TWO_THREADS = ".two_threads"
"""A record name ending so runs its case with torch's two threads and wall-clock samples."""


def _stats(samples: list[float]) -> dict[str, Any]:
    return {
        "median": round(statistics.median(samples), 1),
        "min": round(min(samples), 1),
        "max": round(max(samples), 1),
        "samples": [round(s, 1) for s in samples],
    }


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(argv: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float, float, dict[str, Any]]:
    """Run ``orthoverify ARGV`` in a fresh folder: wall seconds, CPU seconds, the load average
    before, and its JSON result (in ``out/``); an exit status outside ``ok`` stops the tool."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "out").mkdir()
        load = os.getloadavg()[0]
        cpu0, t0 = _children_cpu(), time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "orthoverify", *argv], cwd=tmp, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
        if run.returncode not in ok:
            raise SystemExit(f"orthoverify {' '.join(argv)} exited {run.returncode}:\n{run.stderr[-2000:]}")
        (result,) = (Path(tmp) / "out").glob("*.json")
        return wall, cpu, load, json.loads(result.read_text())


SUMMARY_COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)\b")


def measure_tests(argv: list[str]) -> tuple[float, float, float, dict[str, int]]:
    """Run ``python ARGV`` (a pytest run) in the repository: wall seconds, CPU seconds (pytest and
    its workers), the load average before, and the counts of its last summary line; a failed run
    stops the tool (its figures would describe a broken suite)."""
    load = os.getloadavg()[0]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    run = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    lines = [ln for ln in run.stdout.splitlines() if ln.strip()]
    if run.returncode != 0 or not lines:
        raise SystemExit(f"python {' '.join(argv)} exited {run.returncode}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    counts = {k if k != "error" else "errors": int(n) for n, k in SUMMARY_COUNT.findall(lines[-1])}
    return wall, cpu, load, counts


def task_seconds(results: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds per ``claim::check`` (summed over its backends), the median over the results."""
    per: dict[str, list[float]] = {}
    for res in results:
        sums: dict[str, float] = {}
        for c in res["claims"]:
            for e in c["evidence"]:
                key = f"{c['id']}::{e['check']}"
                sums[key] = sums.get(key, 0.0) + float(e.get("seconds") or 0.0)
        for k, v in sums.items():
            per.setdefault(k, []).append(v)
    return {k: round(statistics.median(v), 2) for k, v in per.items()}


def verdict_counts(result: dict[str, Any]) -> dict[str, int]:
    """How many claims of a JSON result have each verdict (``claims`` is their total)."""
    counts: dict[str, int] = {"claims": len(result.get("claims", []))}
    for c in result.get("claims", []):
        counts[str(c.get("verdict"))] = counts.get(str(c.get("verdict")), 0) + 1
    return counts


def _commit(commit: str | None) -> str:
    if commit is not None:
        return commit
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return git.stdout.strip()


ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""The benchmarks run with one BLAS and one torch thread: on a machine shared with other work, a
threaded BLAS call waits for its slowest thread, which other processes delay (on the shared 2-core
machine at load 14 to 22, two threads made the dense baseline of unitary.fft slower than the FFT
path even at n = 64, where it is by far the faster on an idle machine); one thread takes its turns
with the other processes, and its ratio against a baseline timed in turns with it stays meaningful."""


def measure_bench(name: str, repeats: int) -> dict[str, Any]:
    """Run ``orthoverify bench CASE --repeats N --clock cpu`` in a fresh folder with one thread
    (:data:`ONE_THREAD`), each sample the calling thread's CPU time (which other work disturbs far
    less than wall time), or for a ``.two_threads`` record with two threads and wall-clock samples:
    its rows, the load average (1, 5 and 15 minutes) before and after, and its wall seconds."""
    case = name.removesuffix(TWO_THREADS)
    threads = {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    if name.endswith(TWO_THREADS):
        argv, env, prefix = ["bench", case, "--repeats", str(repeats)], threads, "OMP_NUM_THREADS=2"
    else:
        argv, env, prefix = (
            ["bench", case, "--repeats", str(repeats), "--clock", "cpu"],
            ONE_THREAD,
            "OMP_NUM_THREADS=1",
        )
    argv += ["--json", "out/bench.json"]
    with tempfile.TemporaryDirectory() as tmp:
        before, t0 = os.getloadavg(), time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-m", "orthoverify", *argv],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )
        wall, after = time.perf_counter() - t0, os.getloadavg()
        if run.returncode != 0:
            raise SystemExit(f"orthoverify {' '.join(argv)} exited {run.returncode}:\n{run.stderr[-2000:]}")
        doc = json.loads((Path(tmp) / "out" / "bench.json").read_text())
    env = doc["environment"]
    return {
        "command": f"{prefix} orthoverify {' '.join(argv[:-2])}",
        "repeats": repeats,
        "clock": doc["clock"],
        "wall_s": round(wall, 1),
        "load_before": [round(x, 2) for x in before],
        "load_after": [round(x, 2) for x in after],
        "environment": {k: env.get(k) for k in ("cpu_count", "torch", "torch_threads", "numpy", "device")},
        "noisy": doc["noisy"],
        "results": doc["results"],
    }


def _wy_over_dense(row: dict[str, Any]) -> tuple[float, float, float]:
    """WY time over the dense leaf's of a ``householder.blocks`` row: the median and the range over
    the repeats (the bench's ratio is dense over WY, so each is inverted)."""
    lo, _median, hi = row["spread"]["ratio"]
    return 1 / row["ratio"], 1 / hi, 1 / lo


def _load_about(rec: dict[str, Any]) -> str:
    """The load average (1 minute) while a record ran: the mean of its values before and after."""
    return f"{statistics.mean([rec['load_before'][0], rec['load_after'][0]]):.0f}"


def blocks_table(cases: dict[str, Any], blocks: tuple[int, ...] = (16, 24, 32, 64, 128)) -> str:
    """The README's text on ``householder.blocks`` (between its ``<!-- blocks -->`` markers): how it
    was measured, the table (per n = m, WY time over the dense leaf's for each block size with one
    thread, median and range over the repeats; the chosen block at n = 512 in bold), and whether
    the target (within 2x at n = m = 512) is met with one thread and with two; a row the bench
    flagged noisy is said to be too noisy to judge."""
    one, two = cases["householder.blocks"], cases.get("householder.blocks.two_threads")
    rows = one["results"]
    ns = sorted({r["params"]["n"] for r in rows})
    lines = [
        f"Recorded in `reports/bench-figures.json` (commit {one['commit']}, load average about "
        f"{_load_about(one)} while it ran, {one['repeats']} repeats): WY time over dense time with one torch "
        "thread, median (range over the repeats)",
        "",
        "| n = m |" + "".join(f" block {b}{' (chosen)' if _chosen(rows, b) else ''} |" for b in blocks),
        "| --- |" + " --- |" * len(blocks),
    ]
    for n in ns:
        cells = []
        for b in blocks:
            (r,) = [r for r in rows if r["params"]["n"] == n and r["params"]["block"] == b]
            med, lo, hi = _wy_over_dense(r)
            cell = f"{med:.2f}x ({lo:.2f}–{hi:.2f})"
            cells.append(f"**{cell}**" if n == 512 and r["extra"].get("chosen") else cell)
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    (chosen,) = [r for r in rows if r["params"]["n"] == 512 and r["extra"].get("chosen")]
    block = chosen["params"]["block"]
    target = 'the target "within 2x of the dense leaf at n = m = 512, B = 32"'
    lines += ["", f"With one torch thread {target} is {_verdict(chosen, block)}."]
    if two is not None:
        (r2,) = [r for r in two["results"] if r["params"]["n"] == 512 and r["params"]["block"] == block]
        lines[-1] += (
            f" With torch's two threads (`{two['command']}`, wall time; commit {two['commit']}, load average "
            f"about {_load_about(two)}, {two['repeats']} repeats) it is {_verdict(r2, block)}."
        )
    return "\n".join(lines)


def _chosen(rows: list[dict[str, Any]], block: int) -> bool:
    return any(r["params"]["block"] == block and r["extra"].get("chosen") for r in rows)


def _verdict(row: dict[str, Any], block: int) -> str:
    """``**met**: 1.75x at block 24`` (or not met), or for a row the bench flagged noisy, that it
    cannot be judged from it."""
    med, lo, hi = _wy_over_dense(row)
    if row.get("noisy"):
        return (
            f"not judged at block {block}: {med:.2f}x ({lo:.2f}x to {hi:.2f}x over the repeats), a figure the "
            "bench flagged too noisy to trust (the machine was too busy for it)"
        )
    return f"**{'met' if med <= 2 else 'not met'}**: {med:.2f}x at block {block}"


def _rewrite(readme: Path, marker: str, table: str) -> bool:
    """Put ``table`` between the README's ``<!-- marker -->`` and ``<!-- /marker -->`` lines."""
    text = readme.read_text(encoding="utf-8")
    start, end = f"<!-- {marker} -->\n", f"<!-- /{marker} -->"
    if start not in text or end not in text:
        return False
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    _atomic.write_text(readme, f"{before}{start}{table}\n{end}{after}")
    return True


def main_bench(cases: list[str], repeats: int, note: str, commit: str | None) -> int:
    """Measure the benchmark figures of ``cases`` into :data:`BENCH_FILE`, each case rewritten
    as soon as it ends (the others already recorded are kept)."""
    unknown = sorted(set(cases) - set(BENCH_CASES))
    if unknown:
        raise SystemExit(f"unknown bench cases {unknown}; cases: {', '.join(BENCH_CASES)}")
    for case in cases:
        rec = measure_bench(case, BENCH_CASES[case] or repeats)
        rec.update(measured=datetime.now(timezone.utc).isoformat(timespec="minutes"), commit=_commit(commit), note=note)
        # read again: another run of the tool may have recorded other cases meanwhile
        doc: dict[str, Any] = json.loads(BENCH_FILE.read_text()) if BENCH_FILE.exists() else {"cases": {}}
        doc["cases"][case] = rec
        doc["about"] = (
            "Benchmark figures the README states, written by `python tools/measure_times.py --bench`: per case "
            "the rows of `orthoverify bench CASE` (median and [min, median, max] over the repeats), the commit "
            "measured and the load average (1, 5, 15 minutes) before and after; "
            "tests/system/test_readme_figures.py checks the README."
        )
        doc["machine"] = {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        }
        doc["cases"] = dict(sorted(doc["cases"].items()))
        _atomic.write_text(BENCH_FILE, json.dumps({k: doc[k] for k in ("about", "machine", "cases")}, indent=1) + "\n")
        load = f"load {rec['load_before'][0]:.2f} before, {rec['load_after'][0]:.2f} after"
        print(f"{case}: {rec['wall_s']} s ({load}); wrote {BENCH_FILE}", flush=True)
        if case.startswith("householder.blocks") and _rewrite(ROOT / "README.md", "blocks", blocks_table(doc["cases"])):
            print("wrote the README's table of block sizes; check the figures its prose states", flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated run names (also: {', '.join(TEST_RUNS)})")
    p.add_argument("--note", default="", help="how the machine was (other work on it, ...)")
    p.add_argument("--commit", default=None, help="the commit measured (default: git's HEAD)")
    p.add_argument(
        "--bench",
        nargs="?",
        const=",".join(BENCH_CASES),
        default=None,
        metavar="CASE,...",
        help=f"record the README's benchmark figures instead (default: {','.join(BENCH_CASES)})",
    )
    args = p.parse_args()
    if args.bench is not None:
        return main_bench([c for c in args.bench.split(",") if c], args.repeats, args.note, args.commit)
    names = [n for n in args.runs.split(",") if n]
    unknown = sorted(set(names) - set(RUNS) - set(TEST_RUNS))
    if unknown:
        raise SystemExit(f"unknown runs {unknown}; runs: {', '.join([*RUNS, *TEST_RUNS])}")
    doc: dict[str, Any] = json.loads(FILE.read_text()) if FILE.exists() else {"runs": {}, "tasks": {}}
    samples: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": [], "load": []} for n in names}
    results: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for k in range(args.repeats):  # the runs take turns, so that load from elsewhere hits each alike
        for name in names:
            if k >= MAX_REPEATS.get(name, args.repeats):
                continue
            if name in TEST_RUNS:
                wall, cpu, load, counts = measure_tests(TEST_RUNS[name])
                result: dict[str, Any] = {"workers": 2, "counts": counts}
            else:
                wall, cpu, load, result = measure(RUNS[name], EXIT_OK.get(name, (0,)))
            samples[name]["wall"].append(wall)
            samples[name]["cpu"].append(cpu)
            samples[name]["load"].append(round(load, 2))
            results[name].append(result)
            print(f"[{k + 1}/{args.repeats}] {name}: {wall:.1f} s wall, {cpu:.1f} s CPU (load {load:.2f})", flush=True)
        # each round, so that an interrupted run keeps its rounds; but with a test run among them only
        # after the last: the record and the README's table of runs change when written, and the next
        # round's test run would then measure a tree whose README figures no longer match its record
        if not set(names) & set(TEST_RUNS) or k == args.repeats - 1:
            _write(doc, names, samples, results, args.note, args.commit)
    return 0


def command_of(name: str) -> str:
    """The command line a run's record names: ``orthoverify ...`` or ``python -m pytest ...``."""
    if name in TEST_RUNS:
        return "python " + " ".join(f'"{a}"' if " " in a else a for a in TEST_RUNS[name])
    return "orthoverify " + " ".join(f"'{a}'" if "*" in a else a for a in RUNS[name])


def _write(
    doc: dict[str, Any],
    names: list[str],
    samples: dict[str, dict[str, list[float]]],
    results: dict[str, list[dict[str, Any]]],
    note: str,
    commit: str | None,
) -> None:
    commit = _commit(commit)
    for name in names:
        if not samples[name]["wall"]:
            continue
        doc["runs"][name] = {
            "command": command_of(name),
            "workers": results[name][0].get("workers", 1),
            "wall_s": _stats(samples[name]["wall"]),
            "cpu_s": _stats(samples[name]["cpu"]),
            "load_before": samples[name]["load"],
            "measured": datetime.now(timezone.utc).isoformat(timespec="minutes"),
            "commit": commit,
            "note": note,
        }
        if name in TEST_RUNS:
            doc["runs"][name]["counts"] = results[name][-1]["counts"]
        else:
            doc["runs"][name]["verdicts"] = verdict_counts(results[name][-1])
        if name in TASK_PROFILE:
            doc["tasks"][TASK_PROFILE[name]] = task_seconds(results[name])
    doc["about"] = (
        "Durations the README states, written by tools/measure_times.py (median, min and max over the "
        "repeats; wall time of the command line and CPU time of its processes; the commit measured and the "
        "load average before each sample); tasks: seconds per claim::check by profile, from which "
        "`orthoverify check` estimates the time left."
    )
    doc["machine"] = {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    doc["runs"] = dict(sorted(doc["runs"].items()))
    out = {k: doc[k] for k in ("about", "machine", "runs", "tasks")}
    _atomic.write_text(FILE, json.dumps(out, indent=1) + "\n")
    print(f"wrote {FILE}", flush=True)
    if _rewrite(ROOT / "README.md", "timings", timings.readme_table(out)):  # the README's table of runs
        print(
            "wrote the README's table of runs; check the figures its prose states (tests/system/test_readme_figures.py)"
        )


if __name__ == "__main__":
    sys.exit(main())
