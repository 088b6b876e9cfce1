"""The ``orthoverify`` command line: a stable contract that scripts depend on.

Exit status: 0 when no check errored (a refuted claim is a finding, not an error), 1 when a
check errored, 2 on bad usage (including an unreadable result file for ``report`` or
``replay``); ``replay`` exits 0 when the counterexample reproduces and 1 when it does not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from orthoverify import OUT_DIR, __version__
from orthoverify.errors import OrthoverifyError

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse with exit status 2 and a one-line hint on bad usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="orthoverify", description="Executable verification of orthogonal RNN parametrisations.")
    p.add_argument("--version", action="version", version=f"orthoverify {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    pl = sub.add_parser("list", help="list every registered claim")
    pl.add_argument("--json", action="store_true", help="print the claims as JSON")

    pc = sub.add_parser("check", help="run the checks of claims and decide their verdicts")
    pc.add_argument("claims", nargs="*", metavar="ID-OR-GLOB", help="claim ids or globs (default: all)")
    pc.add_argument("--profile", default="default", choices=["quick", "default", "thorough"])
    pc.add_argument(
        "--backend",
        type=_csv,
        default=None,
        metavar="NAME,...",
        help="restrict to these backends (numpy-float32, numpy-float64, torch-float32, torch-float64, "
        "mpmath or mpmath-D, flint or flint-D (Arb balls; pip install 'orthoverify[flint]'), sympy, flops)",
    )
    pc.add_argument("--device", default="cpu", help="device for torch backends: cpu or cuda")
    pc.add_argument("--seed", type=int, default=0)
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
        default=None,
        metavar="PATH",
        help="where to write the JSON result (default: out/check-<profile>.json)",
    )
    pc.add_argument("--quiet", action="store_true", help="no progress lines")
    pc.add_argument(
        "--report",
        dest="report_dir",
        default=None,
        metavar="DIR",
        help="also write the HTML and Markdown reports of this run into DIR, named after the JSON result "
        "(DIR/check-<profile>.html, .md), as `orthoverify report` does",
    )

    pp = sub.add_parser("report", help="render result files as HTML and Markdown reports (runs side by side)")
    pp.add_argument("results", nargs="+", metavar="RESULT.json")
    pp.add_argument("--format", dest="formats", type=_csv, default=["html", "md"], metavar="html,md")
    pp.add_argument("--out", default=OUT_DIR, metavar="DIR", help=f"folder to write into (default: {OUT_DIR})")
    pp.add_argument("--labels", type=_csv, default=None, metavar="A,B,...", help="one label per result file")
    pp.add_argument(
        "--name",
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
        help="print the kinds (signature, conventions, allowance) and the built-in adapters, and exit",
    )
    pv.add_argument("--kind", default=None, help="what the target computes (see `orthoverify validate --list`)")
    pv.add_argument("--dtype", type=_csv, default=["float32", "float64"], metavar="float32,float64")
    pv.add_argument("--device", default="cpu", help="cpu or cuda")
    pv.add_argument("--profile", default="default", choices=["quick", "default", "thorough"])
    pv.add_argument("--seed", type=int, default=0)
    pv.add_argument("--timeout", type=float, default=30.0, help="seconds one call of the target may take")
    pv.add_argument(
        "--executor",
        default=None,
        metavar="SPEC",
        help="where the checks run: this process (the default), serial, local, dask://HOST:PORT or dask-local:N "
        "(each check a task that loads the target by name on its worker; the same evidence for the same seed)",
    )
    pv.add_argument("--json", dest="json_path", default=None, metavar="PATH")
    pv.add_argument("--report", dest="report_dir", default=None, metavar="DIR")

    pb = sub.add_parser("bench", help="time implementations as ratios against baselines measured in the same run")
    pb.add_argument("cases", nargs="*", metavar="CASE-GLOB", help="case names or globs (default: all)")
    pb.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    pb.add_argument("--json", dest="json_path", default=None, metavar="PATH", help="default: out/bench-<device>.json")
    pb.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    pb.add_argument("--budget", type=float, default=2.0, metavar="SECONDS", help="timing budget per measurement")
    pb.add_argument(
        "--repeats",
        type=_positive_int,
        default=3,
        metavar="N",
        help="run each case N times; rows keep the median and min/median/max, and warn when too noisy (default 3)",
    )
    pb.add_argument("--list", dest="list_cases", action="store_true", help="list the cases and exit")

    pr = sub.add_parser("replay", help="replay a recorded counterexample")
    pr.add_argument("result", metavar="RESULT.json")
    pr.add_argument("claim", metavar="CLAIM_ID")
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
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="stop the replay with an error after this many seconds (default 120)",
    )
    return p


def _list(args: argparse.Namespace, out: TextIO) -> int:
    from orthoverify.engine.registry import default_modules, get_registry

    claims = list(get_registry(default_modules()))
    if args.json:
        json.dump([c.describe() for c in claims], out, indent=1)
        out.write("\n")
        return EXIT_OK
    for c in claims:
        out.write(f"{c.id}\n  paper: {c.paper}   where: {c.where}   kind: {c.kind}\n  {c.statement}\n")
    return EXIT_OK


def _clock(seconds: float) -> str:
    """``42s``, ``3m05s``."""
    s = round(seconds)
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}s"


def _progress(stream: TextIO, *, bar: bool | None = None, clock: Any = None) -> Any:
    """Progress of a run: on a terminal a bar redrawn in place (with findings printed above it),
    else one plain line per finished check; each with the time elapsed and an estimate of what is
    left (the mean time per finished check times the checks still to run, so a rough one)."""
    import time

    now = clock if clock is not None else time.monotonic
    tty = bar if bar is not None else bool(getattr(stream, "isatty", lambda: False)())
    start = now()
    width = 24

    def report(done: int, total: int, ev: Any) -> None:
        mark = "ERROR" if ev.error else ("pass" if ev.passed else ("REFUTED" if ev.counterexample else "fail"))
        elapsed = now() - start
        left = "" if done >= total else f", about {_clock(elapsed / done * (total - done))} left"
        timing = f"{_clock(elapsed)} elapsed{left}"
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


def summary_table(result: Any) -> str:
    """The summary printed after a run: claim, verdict, evidence methods, worst ratio."""
    rows = [("claim", "verdict", "methods", "worst ratio / threshold")]
    for c in result.claims:
        rows.append((c.claim.id, c.verdict, ",".join(c.methods), _fmt_ratio(c.worst_ratio)))
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


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from orthoverify.engine import run_checks, write_json
    from orthoverify.engine.executors import open_executor
    from orthoverify.engine.registry import default_modules

    common: dict[str, Any] = {
        "profile": args.profile,
        "seed": args.seed,
        "backends": args.backend,
        "device": args.device,
        "modules": default_modules(),
        "progress": None if args.quiet else _progress(err),
    }
    with warnings.catch_warnings():  # the command says it itself, below, and exits 1
        warnings.filterwarnings("ignore", message="every check of this run erred", category=RuntimeWarning)
        if args.executor is None:  # the local pool (one process per CPU unless --workers), sized to the run
            result = run_checks(args.claims or None, workers=args.workers or os.cpu_count() or 1, **common)
        else:
            with open_executor(args.executor, args.workers) as opened:
                if not args.quiet:
                    err.write(f"executor: {opened.description}\n")
                result = run_checks(
                    args.claims or None,
                    workers=opened.slots,
                    executor=opened.executor,
                    executor_name=opened.spec,
                    **common,
                )
    path = args.json_path or os.path.join(OUT_DIR, f"check-{args.profile}.json")
    written = write_json(result, path)
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
    if args.report_dir is not None:
        from orthoverify.report import render_report

        for p in render_report([written], out_dir=args.report_dir, notify=_warn_to(err)):
            out.write(f"report: {p}\n")
    evidence = [e for c in result.claims for e in c.evidence]
    if evidence and all(e.error for e in evidence):
        err.write(f"orthoverify: every check of this run erred ({len(evidence)}): nothing was decided\n")
    return EXIT_ERROR if result.errored else EXIT_OK


def _warn_to(err: TextIO) -> Any:
    def notify(message: str) -> None:
        err.write(f"orthoverify: warning: {message}\n")

    return notify


def _report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from orthoverify.report import render_report

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
    from orthoverify.conformance import TargetLoadError, listing, validate
    from orthoverify.engine import write_json
    from orthoverify.engine.executors import open_executor

    if args.list_kinds:
        out.write(listing() + "\n")
        return EXIT_OK
    if not args.target:
        err.write("orthoverify: error: validate needs a TARGET (see `orthoverify validate --list`)\n")
        return EXIT_USAGE
    path = os.path.abspath(args.json_path or os.path.join(OUT_DIR, f"validate-{_target_file_name(args.target)}.json"))
    options: dict[str, Any] = {
        "kind": args.kind,
        "dtypes": args.dtype,
        "device": args.device,
        "profile": args.profile,
        "seed": args.seed,
        "timeout": args.timeout,
    }
    try:
        if args.executor is None:
            result = validate(args.target, **options)
        else:
            with open_executor(args.executor) as opened:
                err.write(f"executor: {opened.description}\n")
                result = validate(args.target, executor=opened.executor, executor_name=opened.spec, **options)
    except TargetLoadError as exc:
        err.write(f"orthoverify: cannot load the target: {exc}\n")
        return EXIT_TARGET
    out.write(summary_table(result) + "\n")
    for c in result.claims:
        for e in c.evidence:
            if not e.passed and (e.notes or e.error):
                out.write(f"  {c.claim.id} [{e.backend}]: {(e.error or e.notes).strip().splitlines()[0]}\n")
    name = _target_file_name(args.target)
    written = write_json(result, path)
    out.write(f"JSON result: {written}\n")
    if args.report_dir is not None:
        from orthoverify.report import render_report

        for p in render_report([written], out_dir=args.report_dir, name=f"validate-{name}", notify=_warn_to(err)):
            out.write(f"report: {p}\n")
    # 0: no defect found (inconclusive, say no forward mode or a check not run, is shown above);
    # 1: a defect found (refuted); 4: orthoverify itself failed on a check (error), no defect found
    if any(c.verdict == "refuted" for c in result.claims):
        return EXIT_ERROR
    return EXIT_JUDGE if any(c.verdict == "error" for c in result.claims) else EXIT_OK


def _target_file_name(target: str) -> str:
    return target.replace(":", "-").replace("/", "-")


def _bench(args: argparse.Namespace, out: TextIO) -> int:
    from orthoverify.bench import all_cases, run_bench, select_cases, write_bench_json

    if args.list_cases:
        chosen = select_cases(args.cases) if args.cases else list(all_cases().values())
        for c in chosen:
            out.write(f"{c.name}  {c.description}\n")
        return EXIT_OK

    def progress(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    doc = run_bench(
        args.cases,
        device=args.device,
        quick=args.quick,
        budget_s=args.budget,
        progress=progress,
        repeats=args.repeats,
    )
    if doc["noisy"]:
        out.write(f"WARNING: {len(doc['noisy'])} row(s) too noisy to trust (see 'noisy' in the JSON)\n")
    path = args.json_path or os.path.join(OUT_DIR, f"bench-{args.device}.json")
    out.write(f"JSON result: {write_bench_json(doc, path)}\n")
    return EXIT_OK


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    from orthoverify.engine import replay_from_file
    from orthoverify.engine.registry import default_modules

    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise OrthoverifyError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    rep = replay_from_file(args.result, args.claim, modules=default_modules(), target=args.target, timeout=args.timeout)
    if args.json:
        doc = rep.to_json() if hasattr(rep, "to_json") else {"lines": rep.lines(), "reproduced": rep.reproduced}
        json.dump(doc, out, indent=1)
        out.write("\n")
    else:
        out.write("\n".join(rep.lines()) + "\n")
    return EXIT_OK if rep.reproduced else EXIT_ERROR


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of the ``orthoverify`` command; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
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
    except OrthoverifyError as exc:  # unknown claim, backend, profile, missing GPU, bad result file
        err.write(f"orthoverify: error: {exc}\n")
        return EXIT_USAGE
    except (OSError, ValueError) as exc:
        err.write(f"orthoverify: error: {exc}\n")
        return EXIT_USAGE
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
