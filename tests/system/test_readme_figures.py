"""Every duration the README states for `orthoverify check` is the recorded one: the figures in
its prose (command (1), the profiles, the families) and its table of runs are checked against
orthoverify/timings.json, written by tools/measure_times.py (one home for each figure)."""

from __future__ import annotations

import re
from pathlib import Path

from orthoverify import timings

ROOT = Path(__file__).resolve().parents[2]
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
            assert m["cpu"] == timings.about(runs[run]["cpu_s"]["median"]), (run, m.group(0))
            found += 2
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
    """Each run of the tool is recorded with its samples, and each median lies within its range."""
    data = timings.load()
    assert set(data["runs"]) >= set(FIGURES) and {"quick", "default"} <= set(data["tasks"])
    for run in data["runs"].values():
        for figure in ("wall_s", "cpu_s"):
            f = run[figure]
            assert f["min"] <= f["median"] <= f["max"] and len(f["samples"]) == len(run["load_before"]) >= 1
        assert (
            run["command"].startswith(("orthoverify check", "orthoverify bench", "orthoverify validate"))
            and run["workers"] >= 1
        )


def test_about_rounds_as_the_readme_states() -> None:
    assert [timings.about(s) for s in (4.0, 44.9, 99.9, 126.5, 828.8)] == [
        "about 10 s",
        "about 40 s",
        "about 100 s",
        "about 2 minutes",
        "about 14 minutes",
    ]
