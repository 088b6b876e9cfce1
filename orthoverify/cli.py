"""The ``orthoverify`` command line: a stable contract that scripts depend on.

Exit status: 0 when no check errored (a refuted claim is a finding, not an error), 1 when a
check errored, 2 on bad usage (including an unreadable result file for ``report`` or
``replay``); ``replay`` exits 0 when the counterexample reproduces and 1 when it does not;
130 after Ctrl-C (SIGINT) and 143 after SIGTERM (the pool's workers are stopped first).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from orthoverify import _atomic, _limits, timings, validate_listing
from orthoverify._lazy import lazy_module
from orthoverify._package import OUT_DIR, __version__
from orthoverify._text import duration_text, has_controls, printable
from orthoverify.backends import get_backend
from orthoverify.bench import all_cases, run_bench, select_cases, write_bench_json
from orthoverify.claims import MODULES
from orthoverify.engine import replay_from_file, run_checks
from orthoverify.engine.executors import open_executor
from orthoverify.engine.registry import get_registry, with_extra_modules
from orthoverify.engine.result import dumps
from orthoverify.engine.runner import plan
from orthoverify.errors import BackendError, InputError, OrthoverifyError
from orthoverify.notation import math_text, shorten
from orthoverify.report import plan_report, render_report

if TYPE_CHECKING:  # loaded on first use: `validate` and the replay of a validate result import torch
    from orthoverify import conformance
    from orthoverify.conformance import baseline, causes
    from orthoverify.conformance import replay as conformance_replay
else:
    conformance = lazy_module("orthoverify.conformance")
    baseline = lazy_module("orthoverify.conformance.baseline")
    causes = lazy_module("orthoverify.conformance.causes")
    conformance_replay = lazy_module("orthoverify.conformance.replay")

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse with exit status 2 and a one-line hint on bad usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _names(value: str) -> list[str]:
    """A comma-separated list with at least one name (``--backend ,`` names none)."""
    names = _csv(value)
    if not names:
        raise argparse.ArgumentTypeError(f"expected one or more comma-separated names, got {value!r}")
    return names


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


SEED_MAX = 2**32 - 1
"""The largest seed: every generator a check seeds (NumPy's legacy and new ones, torch) takes 0..2**32-1."""


def _seed(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to {SEED_MAX}, got {value!r}") from None
    if not 0 <= n <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to {SEED_MAX}, got {n}")
    return n


def _seconds(value: str) -> float:
    """A positive, finite number of seconds up to a day (not 0, a negative number, inf, nan or 1e308)."""
    try:
        return _limits.seconds(value, "expected")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("expected: ")) from None


def _memory(value: str) -> int | str | None:
    """A memory limit: 4G, 512M, a number of bytes, none, or default (see conformance.memory_cap)."""
    if value == "default":
        return value
    try:
        return _limits.memory_bytes(value, "expected")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("expected: ")) from None


def _device(value: str) -> str:
    """cpu or cuda (whether CUDA is there is checked before the command's work, see _check_device)."""
    if value not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(f"expected cpu or cuda, got {value!r}")
    return value


def _report_name(value: str) -> str:
    """A report's file name without extension: no folder, no leading dot, no newline or other
    control character (it becomes a file name and is printed)."""
    if not value or "/" in value or "\\" in value or value.startswith(".") or has_controls(value):
        raise argparse.ArgumentTypeError(
            "expected a plain file name without extension (no folder, no leading dot, no newline or control "
            f"character), got {value!r}"
        )
    return value


def _path(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="orthoverify", description="Executable verification of orthogonal RNN parametrisations.")
    p.add_argument("--version", action="version", version=f"orthoverify {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    pl = sub.add_parser("list", help="list the registered claims")
    pl.add_argument("claims", nargs="*", metavar="ID-OR-GLOB", help="claim ids or globs (default: all)")
    pl.add_argument("--json", action="store_true", help="print the claims as JSON")

    pc = sub.add_parser("check", help="run the checks of claims and decide their verdicts")
    pc.add_argument("claims", nargs="*", metavar="ID-OR-GLOB", help="claim ids or globs (default: all)")
    pc.add_argument(
        "--profile",
        default="default",
        choices=["quick", "default", "thorough"],
        help="how much work each check does: quick, default or thorough (default: default)",
    )
    pc.add_argument(
        "--backend",
        type=_names,
        default=None,
        metavar="NAME,...",
        help="restrict to these backends (numpy-float32, numpy-float64, torch-float32, torch-float64, "
        "mpmath or mpmath-D, flint or flint-D (Arb balls; pip install 'orthoverify[flint]'), sympy, flops)",
    )
    pc.add_argument(
        "--device", type=_device, default="cpu", help="device for torch backends: cpu or cuda (default: cpu)"
    )
    pc.add_argument("--seed", type=_seed, default=0, help=f"0 to {SEED_MAX} (default 0)")
    pc.add_argument("--workers", type=_positive_int, default=None, help="processes (default: CPU count)")
    pc.add_argument(
        "--executor",
        default=None,
        metavar="SPEC",
        help="where the checks run: local (a pool of --workers processes, the default), serial (this process), "
        "dask://HOST:PORT (the workers of a running Dask scheduler; needs pip install 'orthoverify[dask]'), "
        "dask-local:N (a Dask cluster of N processes started here). Results are the same for the same seed.",
    )
    pc.add_argument(
        "--json",
        dest="json_path",
        type=_path,
        default=None,
        metavar="PATH",
        help="where to write the JSON result (default: out/check-<profile>.json)",
    )
    pc.add_argument("--quiet", action="store_true", help="no progress lines")
    pc.add_argument(
        "--report",
        dest="report_dir",
        type=_path,
        default=None,
        metavar="DIR",
        help="also write the HTML and Markdown reports of this run into DIR, named after the JSON result "
        "(DIR/check-<profile>.html, .md), as `orthoverify report` does",
    )

    pp = sub.add_parser("report", help="render result files as HTML and Markdown reports (runs side by side)")
    pp.add_argument("results", nargs="+", metavar="RESULT.json", help="result files of check or validate")
    pp.add_argument(
        "--format",
        dest="formats",
        type=_csv,
        default=["html", "md"],
        metavar="html,md",
        help="formats to write (default: html,md)",
    )
    pp.add_argument(
        "--out", type=_path, default=OUT_DIR, metavar="DIR", help=f"folder to write into (default: {OUT_DIR})"
    )
    pp.add_argument("--labels", type=_csv, default=None, metavar="A,B,...", help="one label per result file")
    pp.add_argument(
        "--name",
        type=_report_name,
        default=None,
        help="file name of the reports, without extension (default: the result file's name, e.g. check-quick; "
        "several joined by +)",
    )

    pv = sub.add_parser("validate", help="run the conformance checks on someone else's implementation")
    pv.add_argument("target", metavar="TARGET", nargs="?", help="a built-in adapter name or module:attribute")
    pv.add_argument(
        "--list",
        dest="list_kinds",
        action="store_true",
        help="print the kinds (signature, conventions, allowance, checks), the checks, the built-in adapters, "
        "the declaration keywords and named domains, and exit",
    )
    pv.add_argument("--kind", default=None, help="what the target computes (see `orthoverify validate --list`)")
    pv.add_argument(
        "--dtype",
        type=_csv,
        default=["float32", "float64"],
        metavar="float32,float64",
        help="dtypes to check the target in (default: float32,float64)",
    )
    pv.add_argument("--device", type=_device, default="cpu", help="cpu or cuda (default: cpu)")
    pv.add_argument(
        "--profile",
        default="default",
        choices=["quick", "default", "thorough"],
        help="how many cases each check tries: quick, default or thorough (default: default)",
    )
    pv.add_argument("--seed", type=_seed, default=0, help=f"0 to {SEED_MAX} (default 0)")
    pv.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="seconds one call of the target may take before it counts as a hang, at most 86400; loading the "
        f"target may take as long, at least {_limits.LOAD_FLOOR_SECONDS:g} s (default: %(default)g)",
    )
    pv.add_argument(
        "--memory-limit",
        type=_memory,
        default="default",
        metavar="SIZE",
        help="cap on the target's memory, e.g. 4G or 512M, or none: on each process's data segment (an allocation "
        "beyond it fails in the target) and on all its processes' memory together (beyond it they are killed); "
        "either is a finding (default: 8G on cpu, none with cuda)",
    )
    pv.add_argument(
        "--executor",
        default=None,
        metavar="SPEC",
        help="where the checks run: this process (the default), serial, local, dask://HOST:PORT or dask-local:N "
        "(each check a task that loads the target by name on its worker; the same evidence for the same seed)",
    )
    pv.add_argument(
        "--json",
        dest="json_path",
        type=_path,
        default=None,
        metavar="PATH",
        help="where to write the JSON result (default: out/validate-<target>.json, ':' and '/' as '-')",
    )
    pv.add_argument(
        "--report",
        dest="report_dir",
        type=_path,
        default=None,
        metavar="DIR",
        help="also write the HTML and Markdown reports of this run into DIR (DIR/validate-<target>.html, .md), "
        "as `orthoverify report` does",
    )
    pv.add_argument(
        "--strict",
        action="store_true",
        help="fragile findings (failures only outside the kind's ordinary domain: subnormal or near-overflow "
        "parameters) set the exit status too (default: listed, exit 0)",
    )
    pv.add_argument(
        "--bitwise-determinism",
        dest="bitwise_determinism",
        action="store_true",
        help="the determinism check asks for bitwise equal repeated calls (default: equal to the kind's allowance, "
        "so a varying evaluation order that only changes rounding passes, with the size of the difference noted)",
    )
    pv.add_argument(
        "--baseline",
        type=_path,
        default=None,
        metavar="FILE",
        help="findings acknowledged in FILE (written by --write-baseline) do not set the exit status; "
        "both the acknowledged and the new ones are listed",
    )
    pv.add_argument(
        "--write-baseline",
        dest="write_baseline",
        type=_path,
        default=None,
        metavar="FILE",
        help="write this run's findings to FILE, to be reviewed and passed to --baseline later",
    )

    pb = sub.add_parser("bench", help="time implementations as ratios against baselines measured in the same run")
    pb.add_argument("cases", nargs="*", metavar="CASE-GLOB", help="case names or globs (default: all)")
    pb.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="cpu or cuda (default: cpu)")
    pb.add_argument(
        "--json", dest="json_path", type=_path, default=None, metavar="PATH", help="default: out/bench-<device>.json"
    )
    pb.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run of about a minute: small sizes, one repeat unless --repeats (the suite.* cases, which "
        "rerun the whole suite, run only when named)",
    )
    pb.add_argument(
        "--budget",
        type=_seconds,
        default=2.0,
        metavar="SECONDS",
        help="timing budget per measurement (default: %(default)g)",
    )
    pb.add_argument(
        "--repeats",
        type=_positive_int,
        default=None,
        metavar="N",
        help="run each case N times; rows keep the median and min/median/max, and warn when too noisy "
        "(default: 3, or 1 with --quick)",
    )
    pb.add_argument(
        "--clock",
        default="wall",
        choices=["wall", "cpu"],
        help="what a CPU sample measures: wall time, or the calling thread's CPU time, which other work on "
        "a busy machine disturbs far less (needs OMP_NUM_THREADS=1) (default: %(default)s)",
    )
    pb.add_argument("--list", dest="list_cases", action="store_true", help="list the cases and exit")

    pr = sub.add_parser("replay", help="replay a recorded counterexample")
    pr.add_argument("result", metavar="RESULT.json", help="a result file of check or validate")
    pr.add_argument("claim", metavar="CLAIM_ID", help="the claim whose recorded counterexample to replay")
    pr.add_argument("--json", action="store_true", help="print the replay as JSON (every input in full)")
    pr.add_argument(
        "--target",
        default=None,
        metavar="SPEC",
        help="for a counterexample of a validate run: the target to replay it on (a built-in adapter name or "
        "module:attribute). Required there: a result file alone never makes orthoverify import code",
    )
    pr.add_argument(
        "--timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="stop the replay with an error after this many seconds (default 120)",
    )
    return p


def _check_writable(path: str, option: str, *, folder: bool = False) -> None:
    """Fail before any work when ``path`` (a file, or a folder with ``folder=True``) cannot be
    written, naming the option: so that a long run is never lost to an output path checked after it.
    Probes the nearest existing folder by creating (and removing) a temporary file there."""
    import tempfile

    p = Path(path)
    if folder and p.exists() and not p.is_dir():
        raise InputError(f"{option} {path}: exists and is not a folder")
    if not folder and p.is_dir():
        raise InputError(f"{option} {path}: is a folder; give a file path")
    q = p if folder else p.parent
    q = q.absolute()
    while not q.exists() and q != q.parent:
        q = q.parent
    if not q.is_dir():
        raise InputError(f"{option} {path}: {q} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=q):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write into {q} ({exc.strerror or exc})") from None


def _check_device(device: str, option: str = "--device") -> None:
    """Fail before any work when ``--device cuda`` has no CUDA device here."""
    if device == "cuda":
        try:
            get_backend("torch-float64", device)
        except BackendError as exc:
            raise BackendError(f"{option} cuda: {exc}") from None


def _list(args: argparse.Namespace, out: TextIO) -> int:
    claims = get_registry(claim_modules()).select(args.claims or None)
    if args.json:
        json.dump([c.describe() for c in claims], out, indent=1)
        out.write("\n")
        return EXIT_OK
    for c in claims:
        out.write(f"{c.id}\n  paper: {c.paper}   where: {c.where}   kind: {c.kind}\n  {c.statement}\n")
    return EXIT_OK


def _progress(
    stream: TextIO,
    *,
    bar: bool | None = None,
    clock: Any = None,
    expected: Sequence[tuple[str, str, float]] = (),
    workers: int = 1,
) -> Any:
    """Progress of a run: on a terminal a bar redrawn in place (with findings printed above it),
    else one plain line per finished check; each with the time elapsed and an estimate of what is
    left. ``expected`` gives each task's recorded duration (claim, check, seconds: see
    :func:`orthoverify.timings.expected_seconds`): the estimate is then the recorded work not yet
    done shared by ``workers``, scaled by the run's own pace once a quarter of that work is done.
    Without a record it is the mean time per finished check times the checks left (rough: the
    first checks to finish are the short ones)."""
    import time

    now = clock if clock is not None else time.monotonic
    tty = bar if bar is not None else bool(getattr(stream, "isatty", lambda: False)())
    start = now()
    width = 24
    share = {(claim, check): seconds for claim, check, seconds in expected}
    work = sum(seconds for _c, _k, seconds in expected)
    finished = [0.0]  # recorded seconds of the tasks finished so far

    def left(done: int, total: int, elapsed: float) -> float:
        if not work:
            return elapsed / done * (total - done)
        rest = max(work - finished[0], 0.0) / max(workers, 1)
        if finished[0] >= 0.25 * work:  # the run's own pace against the record (a slower or busier machine)
            return rest * elapsed / (finished[0] / max(workers, 1))
        return rest

    def report(done: int, total: int, ev: Any) -> None:
        mark = "ERROR" if ev.error else ("pass" if ev.passed else ("REFUTED" if ev.counterexample else "fail"))
        finished[0] += share.get((ev.claim, ev.check), 0.0)
        elapsed = now() - start
        rest = "" if done >= total else f", about {duration_text(left(done, total, elapsed))} left"
        timing = f"{duration_text(elapsed)} elapsed{rest}"
        line = f"{ev.claim} :: {ev.check} [{ev.backend}] {mark} ({ev.seconds:.1f}s)"
        if not tty:
            stream.write(f"[{done:>3}/{total}] {line}  ({timing})\n")
        else:
            if mark in ("ERROR", "REFUTED"):
                stream.write(f"\r\x1b[K{line}\n")
            filled = width * done // max(total, 1)
            stream.write(f"\r\x1b[K[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {timing}")
            if done >= total:
                stream.write("\n")
        stream.flush()

    return report


def _fmt_ratio(ratio: tuple[float, float] | None) -> str:
    if ratio is None:
        return "-"
    r, t = ratio
    return f"{r:.3g} / {t:g}"


def _refuting_figure(c: Any) -> str:
    """What refutes a refuted claim, for the summary's last column: the counterexample's test ratio
    against its threshold at the confirming precision, or its exact value in the paper's notation
    (the worst ratio of the evidence that passed would say nothing about why it is refuted)."""
    cx = c.counterexample
    if c.verdict != "refuted" or cx is None:
        return _fmt_ratio(c.worst_ratio)
    if cx.precision_digits == "exact":
        return "exact: " + shorten(math_text(cx.value), 56)
    try:
        value = f"{float(cx.value):.3g}" + (f" / {cx.threshold:g}" if cx.threshold is not None else "")
    except ValueError:
        value = shorten(math_text(cx.value), 48)
    return f"{value} at {cx.precision_digits} digits"


def in_notation(line: str) -> str:
    """A summary line ``  NAME [BACKEND]: TEXT`` with TEXT in the paper's notation, as the report
    and replay write it (:func:`~orthoverify.notation.math_text`: ``||x||`` as ‖x‖, ``eps``
    as ε, ``->`` as →); the name and the backend stay as they are."""
    head, sep, rest = line.partition("]: ")
    return f"{head}{sep}{math_text(rest)}" if sep else line


def failure_notes(result: Any) -> list[str]:
    """validate's line per failed check under the summary: the first line of its error or notes
    (the target's text made printable) in the paper's notation (:func:`in_notation`)."""
    lines = []
    for c in result.claims:
        for e in c.evidence:
            if not e.passed and (e.notes or e.error):
                first = printable((e.error or e.notes).strip().splitlines()[0], newlines=False)  # the target's text
                lines.append(in_notation(f"  {c.claim.id} [{e.backend}]: {first}"))
    return lines


def summary_table(result: Any) -> str:
    """The summary printed after a run: claim, verdict, evidence methods, worst ratio (for a
    refuted claim, the figure that refutes it)."""
    rows = [("claim", "verdict", "methods", "worst ratio / threshold; refuted: what refutes it")]
    for c in result.claims:
        rows.append((c.claim.id, c.verdict, ",".join(c.methods), _refuting_figure(c)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    counts = result.counts()
    lines.append("")
    lines.append(
        f"{len(result.claims)} claim{'' if len(result.claims) == 1 else 's'}: "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f"  (profile {result.profile}, seed {result.seed}, {result.seconds:.1f}s)"
    )
    return "\n".join(lines)


def _write_outputs(
    json_path: str, text: str, report_dir: str | None, err: TextIO, name: str | None = None
) -> tuple[Path, list[Path]]:
    """Write the result JSON and (with ``--report``) its report as one atomic set: a run killed
    while writing leaves the previous outputs or the new ones, never a mix."""
    _raise_if_interrupted()  # a signal whose exception was swallowed on the way: write nothing
    files: dict[Path, str | bytes] = {Path(json_path): text}
    stale: list[Path] = []
    reports: list[Path] = []
    if report_dir is not None:
        plan = plan_report(
            [json_path], out_dir=report_dir, name=name, notify=_warn_to(err), data={json_path: json.loads(text)}
        )
        files.update(plan.files)
        stale, reports = plan.stale, plan.written
    _atomic.write_files(files, remove=stale)
    return Path(json_path), reports


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path = args.json_path or os.path.join(OUT_DIR, f"check-{args.profile}.json")
    _check_writable(path, "--json")
    if args.report_dir is not None:
        _check_writable(args.report_dir, "--report", folder=True)
    _check_device(args.device)

    workers = args.workers or os.cpu_count() or 1
    common: dict[str, Any] = {
        "profile": args.profile,
        "seed": args.seed,
        "backends": args.backend,
        "device": args.device,
        "modules": claim_modules(),
        "progress": None if args.quiet else _progress(err, expected=_recorded_durations(args), workers=workers),
    }
    with warnings.catch_warnings():  # the command says it itself, below, and exits 1
        warnings.filterwarnings("ignore", message="every check of this run erred", category=RuntimeWarning)
        if args.executor is None:  # the local pool (one process per CPU unless --workers), sized to the run
            result = run_checks(args.claims or None, workers=workers, **common)
        else:
            with open_executor(args.executor, args.workers, device=args.device) as opened:
                if not args.quiet:
                    err.write(f"executor: {opened.description}\n")
                result = run_checks(
                    args.claims or None,
                    workers=opened.slots,
                    executor=opened.executor,
                    executor_name=opened.spec,
                    **common,
                )
    written, reports = _write_outputs(path, dumps(result), args.report_dir, err)
    out.write(summary_table(result) + "\n")
    for c in result.claims:
        if not c.evidence and args.backend:
            used = sorted({b for check in c.claim.checks for b in check.backend_names()})
            err.write(
                f"orthoverify: {c.claim.id}: no check runs on {', '.join(args.backend)} (its checks use "
                f"{', '.join(used)}): nothing ran, so it is inconclusive\n"
            )
    for c in result.claims:
        if c.verdict == "error":
            for e in c.evidence:
                if e.error:
                    err.write(f"\nERROR in {c.claim.id} :: {e.check} [{e.backend}]\n{e.error}\n")
    out.write(f"JSON result: {written}\n")
    for p in reports:
        out.write(f"report: {p}\n")
    out.write(_next_steps(result, str(written), reports))
    evidence = [e for c in result.claims for e in c.evidence]
    if evidence and all(e.error for e in evidence):
        err.write(f"orthoverify: every check of this run erred ({len(evidence)}): nothing was decided\n")
    return EXIT_ERROR if result.errored else EXIT_OK


def _next_steps(result: Any, json_path: str, reports: list[Path]) -> str:
    """Where a reader goes from the summary when something is refuted: the command that replays a
    counterexample, and the report (the one written, or the command that writes it)."""
    refuted = [c.claim.id for c in result.claims if c.verdict == "refuted" and c.counterexample is not None]
    if not refuted:
        return ""
    path = shlex.quote(json_path)
    lines = [f"replay a counterexample: orthoverify replay {path} {shlex.quote(refuted[0])}  (any refuted claim id)"]
    html = [p for p in reports if p.suffix == ".html"]
    if html:
        lines.append(f"the errata (why, counterexample, correction): open {html[0]}")
    else:
        lines.append(f"the errata (why, counterexample, correction): orthoverify report {path}")
    return "\n".join(lines) + "\n"


def _recorded_durations(args: argparse.Namespace) -> list[tuple[str, str, float]]:
    """Each task of this run with its recorded duration on the profile (orthoverify/timings.json),
    for the progress estimate; empty when the profile has no record."""
    mods = claim_modules()
    where = {"profile": args.profile, "seed": args.seed, "device": args.device, "modules": mods}
    try:
        claims = get_registry(mods).select(args.claims or None)
        tasks = [(t.claim, t.check) for t in plan(claims, backends=args.backend, **where)]
        every = [(t.claim, t.check) for t in plan(claims, backends=None, **where)]
    except OrthoverifyError:  # an unknown claim or backend: the run itself says so
        return []
    seconds = timings.expected_seconds(tasks, every, args.profile)
    return [(c, k, s) for (c, k), s in zip(tasks, seconds, strict=True)] if seconds else []


def _warn_to(err: TextIO) -> Any:
    def notify(message: str) -> None:
        err.write(f"orthoverify: warning: {printable(message, newlines=False)}\n")

    return notify


def _report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_writable(args.out, "--out", folder=True)
    written = render_report(
        args.results,
        formats=args.formats,
        out_dir=args.out,
        labels=args.labels,
        name=args.name,
        notify=_warn_to(err),
    )
    for p in written:
        out.write(f"report: {p}\n")
    return EXIT_OK


EXIT_TARGET = 3
EXIT_JUDGE = 4
"""validate: orthoverify's own code failed (an `error` verdict), so nothing can be said either way."""


def _validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list_kinds:  # from the recorded listing: no torch to import, so it answers at once
        out.write(validate_listing.render(validate_listing.load()) + "\n")
        return EXIT_OK
    if not args.target:
        err.write("orthoverify: error: validate needs a TARGET (see `orthoverify validate --list`)\n")
        return EXIT_USAGE
    name = _target_file_name(args.target)
    path = args.json_path or os.path.join(OUT_DIR, f"validate-{name}.json")
    _check_writable(path, "--json")
    if args.report_dir is not None:
        _check_writable(args.report_dir, "--report", folder=True)
    if args.write_baseline is not None:
        _check_writable(args.write_baseline, "--write-baseline")
    acknowledged = baseline.load(args.baseline) if args.baseline is not None else set()
    _check_device(args.device)
    path = os.path.abspath(path)  # the target may change its working directory (it runs elsewhere, but still)
    options: dict[str, Any] = {
        "kind": args.kind,
        "dtypes": args.dtype,
        "device": args.device,
        "profile": args.profile,
        "seed": args.seed,
        "timeout": args.timeout,
        "memory_limit": args.memory_limit,
        "bitwise_determinism": args.bitwise_determinism,
    }
    try:
        if args.executor is None:
            result = conformance.validate(args.target, **options)
        else:
            with open_executor(args.executor) as opened:
                err.write(f"executor: {opened.description}\n")
                result = conformance.validate(
                    args.target, executor=opened.executor, executor_name=opened.spec, **options
                )
    except conformance.TargetLoadError as exc:
        err.write(f"orthoverify: cannot load the target: {exc}\n")
        return EXIT_TARGET
    new, known = baseline.split(result, acknowledged, args.strict)
    if args.baseline is not None:
        result.meta.setdefault("validate", {})["baseline"] = {
            "file": str(args.baseline),
            "acknowledged": [f"{f.claim} [{f.backend}]" for f in known],
            "new": [f"{f.claim} [{f.backend}]" for f in new],
        }
    out.write(summary_table(result) + "\n")
    out.writelines(line + "\n" for line in failure_notes(result))
    left = result.meta.get("validate", {}).get("left_behind") or []
    if left:
        err.write(f"orthoverify: the target left {len(left)} process(es) behind; killed: {'; '.join(left)}\n")
    per_cause = [in_notation(line) for line in causes.summary(result)]
    if per_cause:
        out.write("Findings, one per cause (the JSON keeps every check's evidence):\n" + "\n".join(per_cause) + "\n")
    if args.baseline is not None:
        out.write(
            f"baseline {args.baseline}: {len(known)} finding{'' if len(known) == 1 else 's'} acknowledged, "
            f"{len(new)} new\n"
        )
        for label, group in (("acknowledged", known), ("NEW", new)):
            for f in group:
                out.write(f"  {label}: {f.claim} [{f.backend}] ({f.verdict})\n")
    # 0: no defect found (inconclusive, say no forward mode or a check not run, is shown above), or
    # only fragile findings (without --strict) or findings the --baseline acknowledges; 1: a new
    # defect found (refuted; fragile with --strict); 4: orthoverify itself failed on a check (error),
    # no defect found
    if new:
        code = EXIT_ERROR
    else:
        code = EXIT_JUDGE if any(c.verdict == "error" for c in result.claims) else EXIT_OK
    text = dumps(result)
    try:
        written, reports = _write_outputs(path, text, args.report_dir, err, name=f"validate-{name}")
    except OSError as exc:  # checked writable before the run: the target changed it since (it runs as the user)
        written, reports = _write_fallback(path, text), []
        err.write(
            f"orthoverify: cannot write the JSON result to {path} ({exc.strerror or exc}); "
            f"wrote it to {written} instead{'; no report written' if args.report_dir else ''}\n"
        )
    out.write(f"JSON result: {written}\n")
    for p in reports:
        out.write(f"report: {p}\n")
    if args.write_baseline is not None:
        out.write(f"baseline written: {baseline.write(result, args.write_baseline, args.target)}\n")
    return code


FALLBACK_SUFFIX = ".orthoverify-fallback.json"
"""How the name of a result written elsewhere than asked ends (see :func:`_write_fallback`)."""


def _write_fallback(path: str, text: str) -> Path:
    """Write a result that could not go to ``path`` to a new file of its own: beside ``path``,
    else in the working directory, else in the temporary folder; each name is fresh (created
    exclusively), so nothing planted there can take its place. Raises OSError when none works."""
    import tempfile

    stem = Path(path).name or "result"
    last: OSError | None = None
    for folder in (Path(path).parent, Path.cwd(), Path(tempfile.gettempdir())):
        try:
            fd, name = tempfile.mkstemp(prefix=f"{stem}.", suffix=FALLBACK_SUFFIX, dir=folder)
            os.close(fd)
            return _atomic.write_text(name, text)
        except OSError as exc:
            last = exc
    assert last is not None
    raise last


def _target_file_name(target: str) -> str:
    return target.replace(":", "-").replace("/", "-")


def _bench(args: argparse.Namespace, out: TextIO) -> int:
    if args.list_cases:
        chosen = select_cases(args.cases) if args.cases else list(all_cases().values())
        for c in chosen:
            out.write(f"{c.name}  {c.description}\n")
        return EXIT_OK

    def progress(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    path = args.json_path or os.path.join(OUT_DIR, f"bench-{args.device}.json")
    _check_writable(path, "--json")
    _check_device(args.device)
    out.write(f"rows go to {path} as each case ends (an interrupted run keeps them)\n")
    doc = run_bench(
        args.cases,
        device=args.device,
        quick=args.quick,
        budget_s=args.budget,
        progress=progress,
        repeats=args.repeats if args.repeats is not None else (1 if args.quick else 3),
        save=lambda partial: write_bench_json(partial, path),
        sample_clock=args.clock,
    )
    if doc["noisy"]:
        out.write(f"WARNING: {len(doc['noisy'])} row(s) too noisy to trust (see 'noisy' in the JSON)\n")
    out.write(f"JSON result: {write_bench_json(doc, path)}\n")
    return EXIT_OK


def claim_modules() -> tuple[str, ...]:
    """The claims modules this command line runs: orthoverify's families (``orthoverify.claims``)
    and any named in ``$ORTHOVERIFY_EXTRA_CLAIMS``."""
    return with_extra_modules(MODULES)


def _validate_family(data: Any, claim_id: str, target: str | None) -> Any:
    """The family of a validate result's claims: its kind's, over ``target`` (imports torch, so
    only for a validate result, hence loaded on first use)."""
    return conformance_replay.family_of_result(data, claim_id, target)


RESULT_FAMILIES = {"validate": _validate_family}
"""The top-level keys of a result file that say its claims are not registered ones, and the
resolver of each (passed to :func:`orthoverify.engine.replay_from_file`)."""


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    rep = replay_from_file(
        args.result,
        args.claim,
        modules=claim_modules(),
        families=RESULT_FAMILIES,
        target=args.target,
        timeout=args.timeout,
    )
    if args.json:
        doc = rep.to_json() if hasattr(rep, "to_json") else {"lines": rep.lines(), "reproduced": rep.reproduced}
        json.dump(doc, out, indent=1)
        out.write("\n")
    else:
        out.write(printable("\n".join(readable_replay(rep.lines()))) + "\n")  # quantity and values from the file
    return EXIT_OK if rep.reproduced else EXIT_ERROR


_AS_WRITTEN = ("claim", "target", "check", "reproduced")
"""Labels of replay lines that name things (ids, check names): printed as they are."""


def readable_replay(lines: list[str]) -> list[str]:
    """Replay's lines with the quantity and the values in the paper's notation, as the report
    shows them (:func:`~orthoverify.notation.math_text`: ``||x||`` as ‖x‖, ``C~'`` as C̃′,
    SymPy's roots by value and polynomial); the inputs stay as recorded, decimal strings to copy."""
    out: list[str] = []
    inputs_at: int | None = None  # the indent of an `inputs:` header whose lines follow
    for line in lines:
        body = line.lstrip()
        indent = len(line) - len(body)
        if inputs_at is not None and indent > inputs_at:
            out.append(line)
            continue
        inputs_at = indent if body == "inputs:" else None
        label, sep, rest = body.partition(": ")
        if not sep or label in _AS_WRITTEN:
            out.append(line)
        else:
            out.append(f"{line[:indent]}{label}: {math_text(rest)}")
    return out


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: raised in the main thread so that every ``with`` and ``finally``
    on the way out runs (the pool's workers are stopped, staged outputs removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_PENDING: list[int] = []
"""Signals that arrived during this command (the exception raised for one can be swallowed where
Python ignores exceptions, in a destructor say: the flag is checked again before writing and at the end)."""


def _on_signal(signum: int, _frame: object) -> None:
    # a second signal must not interrupt the cleanup the first one started
    for s in _SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    _PENDING.append(signum)
    raise Interrupted(signum)


def _raise_if_interrupted() -> None:
    if _PENDING:
        raise Interrupted(_PENDING[0])


_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` for the duration (main thread only); the
    previous handlers are restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    _PENDING.clear()
    for s in _SIGNALS:
        signal.signal(s, _on_signal)
    try:
        yield
        _raise_if_interrupted()
    finally:
        for s, h in previous.items():
            if h is not None:
                signal.signal(s, h)


def _quiet_stdout() -> None:
    """After a broken pipe (``orthoverify list | head -1``): send what is left of stdout to
    devnull, so that the flush at exit prints no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


EXIT_SIGPIPE = 128 + 13
"""Exit status after the reader of stdout went away (as a process killed by SIGPIPE)."""


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of the ``orthoverify`` command; returns the exit status."""
    code = _main(argv, out or sys.stdout, err or sys.stderr)
    if argv is None and (code > 128 or _stranded_threads()):
        # Run as the program (not called with arguments from Python): a daemon thread still inside
        # native code (a target call abandoned at its timeout, or cut short by Ctrl-C) would abort
        # the interpreter's shutdown ("terminate called without an active exception", status 134).
        # Every output is already committed or not written at all (_atomic), so end here, after the
        # atexit handlers (multiprocessing's among them: its semaphores, its child processes).
        import atexit

        atexit._run_exitfuncs()
        _stop_resource_tracker()
        for stream, line in _LAST_WORDS:
            stream.write(line)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    return code


_LAST_WORDS: list[tuple[TextIO, str]] = []
"""The one line an interrupted run ends with, written by :func:`main` after every clean-up."""


def _stop_resource_tracker() -> None:
    """Wait for multiprocessing's resource tracker to finish: after workers were terminated it
    unlinks their leftover semaphores and may warn on the shared stderr; waiting for it here keeps
    that from landing after the run's last line (it did, at random, in the interrupt tests).
    Garbage is collected first and collection then switched off (the process ends next): a dead
    semaphore's finalizer run by a collection inside the tracker's stop wrote to its closed pipe
    and printed a traceback (CPython gh-109629; seen once in the SIGINT test)."""
    import gc

    gc.collect()
    gc.disable()
    try:
        from multiprocessing import resource_tracker

        stop = getattr(resource_tracker._resource_tracker, "_stop", None)
        if stop is not None:
            stop()
    except Exception:  # best effort: the run's outputs are already committed or absent
        pass


def _stranded_threads() -> list[threading.Thread]:
    main_thread = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main_thread and t.daemon and t.is_alive()]


def _main(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    args = build_parser().parse_args(argv)
    try:
        with _signals_raise():
            return _dispatch(args, out, err)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Interrupted): one line, the conventional status
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        name = "terminated by SIGTERM" if signum == getattr(signal, "SIGTERM", None) else "interrupted by SIGINT"
        line = f"orthoverify: {name}; the workers are stopped and no output is half-written\n"
        if argv is None:  # as the program: main() writes it last, after multiprocessing's own clean-up
            _LAST_WORDS.append((err, line))
        else:
            err.write(line)
        return 128 + int(signum)
    except BrokenPipeError:
        if out is sys.stdout:
            _quiet_stdout()
        return EXIT_SIGPIPE
    except OrthoverifyError as exc:  # unknown claim, backend, profile, missing GPU, bad result file
        err.write(f"orthoverify: error: {printable(str(exc))}\n")
        return EXIT_USAGE
    except (OSError, ValueError) as exc:
        err.write(f"orthoverify: error: {printable(str(exc))}\n")
        return EXIT_USAGE


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "list":
        return _list(args, out)
    if args.command == "check":
        return _check(args, out, err)
    if args.command == "replay":
        return _replay(args, out)
    if args.command == "report":
        return _report(args, out, err)
    if args.command == "validate":
        return _validate(args, out, err)
    if args.command == "bench":
        return _bench(args, out)
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
