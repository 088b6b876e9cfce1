"""The HTML report of the committed reference result, rendered by this version, in a real browser
(Debian's headless Chromium): it loads with no console error and no network request, the summary
and a figure render, on a phone-sized screen the page never scrolls sideways, the index filters
by paper and verdict, and from the index a reader reaches each refuted claim's reason,
counterexample and replay command without scrolling the page.

Screenshots are written to $ORTHOVERIFY_SCREENSHOTS when it is set (else to pytest's tmp_path).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.system.browser import PageLoad, decode_png, load_page, region_colours, require_browser

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"

RECT = "(() => {{ const r = {0}.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }})()"
PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"
OKABE_ITO_BLUE = (0x00, 0x72, 0xB2)  # the first series colour of every figure
VERDICT_GREEN = (0x1A, 0x7F, 0x37)  # the "verified" badge


def save(name: str, shot: bytes, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("ORTHOVERIFY_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(shot)
    return path


def near(colours: dict[tuple[int, int, int], int], target: tuple[int, int, int], tol: int = 12) -> int:
    """Pixels within ``tol`` of a colour in every channel (anti-aliasing blends edges)."""
    return sum(n for c, n in colours.items() if all(abs(a - b) <= tol for a, b in zip(c, target, strict=True)))


def check_clean(page: PageLoad) -> None:
    assert page.errors == [], page.errors
    assert page.requests == [page.url], f"the report fetched something: {page.requests}"


def region(page: PageLoad, rect: Any, scale: float = 1.0) -> dict[tuple[int, int, int], int]:
    x, y, w, h = (round(v * scale) for v in rect)
    return region_colours(page.screenshot, x, y, w, h)


@pytest.fixture(scope="module")
def browser() -> str:
    return require_browser()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from orthoverify.report import render_report

    out = tmp_path_factory.mktemp("browser-report")
    (html,) = render_report([REFERENCE], out_dir=out, formats=["html"])
    return html


LONG_NAME = "nightly_results_of_the_orthoverify_default_profile_2026_11_27_seed0.json"
"""A result file named with no break opportunity: the summary's tables head a column with its
name and list it among the runs (they once ran 260-320 px past a phone's screen with it)."""


@pytest.fixture(scope="module")
def long_named_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from orthoverify.report import render_report

    out = tmp_path_factory.mktemp("browser-report-long")
    result = out / LONG_NAME
    result.write_bytes(REFERENCE.read_bytes())
    (html,) = render_report([result], out_dir=out, formats=["html"])
    return html


def test_summary_renders_on_a_laptop(browser: str, report: Path, tmp_path: Path) -> None:
    page = load_page(
        report,
        width=1280,
        height=900,
        expressions={"summary": RECT.format("document.getElementById('summary')"), "width": PAGE_WIDTH},
    )
    save("report-laptop.png", page.screenshot, tmp_path)
    check_clean(page)
    left, top, width, height = page.values["summary"]
    assert width > 300 and height > 100 and 0 <= top < 900  # the summary starts on the first screen
    w, h, _ = decode_png(page.screenshot)
    assert (w, h) == (1280, 900)
    colours = region(page, (left, top, width, min(height, 900 - top)))
    assert near(colours, VERDICT_GREEN) > 50, "no verified badge drawn in the summary"
    assert sum(n for c, n in colours.items() if max(c) < 80) > 200, "no text drawn in the summary"


def test_a_figure_renders(browser: str, report: Path, tmp_path: Path) -> None:
    fig = "document.querySelector('#fig-ratio-n svg')"
    page = load_page(
        report,
        width=1280,
        height=900,
        expressions={"figure": f"({fig}.scrollIntoView({{block: 'center'}}), {RECT.format(fig)})"},
    )
    save("report-figure.png", page.screenshot, tmp_path)
    check_clean(page)
    left, top, width, height = page.values["figure"]
    assert width > 400 and height > 250, "the figure has no size"
    assert top >= 0 and top + height <= 900, "the figure is not on screen after scrolling to it"
    colours = region(page, (left, top, width, height))
    assert len(colours) > 20, "the figure is (nearly) blank"
    assert near(colours, OKABE_ITO_BLUE) > 30, "the first data series is not drawn"


@pytest.mark.slow  # Chromium (about 1 s): the full suite runs it
def test_a_validate_report_shows_a_checks_figure_when_opened(browser: str, tmp_path: Path) -> None:
    """A validate run's per-check figure (error against parameter size) sits in the claim's closed
    <details>; opened, it renders with its points, and the page fetches nothing."""
    from orthoverify.report import render_report
    from tests.system.test_report_validate import _claim, _result

    pts = [[10.0**k, 2.0 ** (k % 5)] for k in range(-4, 5)]
    result = _result(tmp_path, [_claim("orthogonal", [{"x": "max|x_ij|", "y": "ratio", "points": pts}])])
    (html,) = render_report([result], out_dir=tmp_path / "out", formats=["html"])
    fig = "document.querySelector('#fig-series-conformance-householder-product-orthogonal svg')"
    unfold = (  # the claim and, inside it, the figure's <details>
        f"(() => {{ for (let d = {fig}.closest('details'); d; d = d.parentElement.closest('details')) "
        "d.open = true; })()"
    )
    opened = f"({unfold}, {fig}.scrollIntoView({{block: 'center'}}), {RECT.format(fig)})"
    page = load_page(html, width=1280, height=900, expressions={"figure": opened})
    save("validate-figure.png", page.screenshot, tmp_path)
    check_clean(page)
    left, top, width, height = page.values["figure"]
    assert width > 400 and height > 250 and top >= 0 and top + height <= 900
    assert near(region(page, (left, top, width, height)), OKABE_ITO_BLUE) > 30, "the points are not drawn"


@pytest.mark.slow  # Chromium (about 1 s): the full suite runs it
def test_phone_layout_never_scrolls_sideways(browser: str, report: Path, tmp_path: Path) -> None:
    page = load_page(
        report,
        width=390,
        height=844,
        mobile=True,
        device_scale_factor=2.0,
        expressions={
            "width": PAGE_WIDTH,
            "summary": RECT.format("document.getElementById('summary')"),
            "figure": RECT.format("document.querySelector('#fig-ratio-n svg')"),
        },
    )
    save("report-phone.png", page.screenshot, tmp_path)
    check_clean(page)
    scroll_width, inner_width = page.values["width"]
    assert inner_width == 390 and scroll_width <= inner_width, "the page is wider than a phone screen"
    _left, _top, fig_width, _h = page.values["figure"]
    assert 300 <= fig_width <= 390, "figures do not shrink to the screen"
    left, top, width, height = page.values["summary"]
    assert width <= 390 and 0 <= top < 844
    colours = region(page, (left, top, width, min(height, 844 - top)), scale=2.0)
    assert near(colours, VERDICT_GREEN) > 50


PHONE_FIT = """(() => {
  document.querySelectorAll('#summary details').forEach(d => { d.open = true; });
  const tables = [...document.querySelectorAll('#summary .scroll')].map(s => [s.scrollWidth, s.clientWidth]);
  const replay = [...document.querySelectorAll('.replay')].map(p => {
    const s = getComputedStyle(p); return s.wordBreak + ' ' + s.overflowWrap; });
  return [tables, [...new Set(replay)]];
})()"""


@pytest.mark.slow  # Chromium (about 1 s): the full suite runs it
@pytest.mark.parametrize("which", ["report", "long_named_report"])
def test_phone_shows_the_whole_summary_and_wraps_commands_between_words(
    browser: str, which: str, request: pytest.FixtureRequest
) -> None:
    """At 390 px the summary's tables fit without being cut (the verdict counts once ended in 'tot'),
    also for a result file whose long name cannot break between words, and measured with the
    summary's folded details open, as a reader sees them (a closed one's layout can be stale: it
    once read 375 px in 370); a replay command wraps only between words (it once broke inside a
    claim id: 'svd.theo / rem5')."""
    report = request.getfixturevalue(which)
    page = load_page(report, width=390, height=844, mobile=True, expressions={"fit": PHONE_FIT})
    check_clean(page)
    tables, replay = page.values["fit"]
    assert tables and all(scroll <= client for scroll, client in tables), tables
    assert replay == ["normal normal"], replay


REACH = """(() => {
  const out = [];
  for (const a of document.querySelectorAll('#index a[href^="#erratum-"]')) {
    a.click();
    const e = document.getElementById(a.getAttribute('href').slice(1));
    const top = (sel) => e.querySelector(sel).getBoundingClientRect().top;
    const bottom = e.querySelector('.replay').getBoundingClientRect().bottom;
    out.push([e.id, top('.reason'), top('.cx'), bottom]);
  }
  return out;
})()"""


@pytest.mark.slow  # Chromium (about 1 s): the full suite runs it
@pytest.mark.parametrize(("width", "height", "mobile"), [(1280, 900, False), (390, 844, True)])
def test_every_refuted_claim_is_one_click_from_the_index(
    browser: str, report: Path, width: int, height: int, mobile: bool
) -> None:
    """Clicking a refuted claim in the index shows its reason, counterexample and replay command on
    the screen (on a phone: within two screens of scrolling inside that erratum, never the page)."""
    page = load_page(
        report,
        width=width,
        height=height,
        mobile=mobile,
        expressions={"index": RECT.format("document.getElementById('index')"), "reach": REACH},
    )
    check_clean(page)
    assert page.values["index"][1] < height, "the index does not start on the first screen"
    reach = page.values["reach"]
    refuted = sum(1 for c in json.loads(REFERENCE.read_text())["claims"] if c["verdict"] == "refuted")
    assert len(reach) == refuted > 0
    screens = 1 if not mobile else 2
    for ident, reason, cx, replay_bottom in reach:
        assert 0 <= reason < height, f"{ident}: the reason is not on screen after the click"
        assert reason < cx < replay_bottom <= screens * height, f"{ident}: counterexample or replay out of reach"


FILTER = """(() => {
  const shown = () => [...document.querySelectorAll('#index li')].filter(li => li.offsetParent !== null).length;
  const all = shown();
  document.querySelector('label[for="fv-refuted"]').click();
  const refuted = shown();
  document.querySelector('label[for="fp-unitary"]').click();
  const both = shown();
  document.querySelector('label[for="fv-all"]').click();
  return [all, refuted, both, shown()];
})()"""


@pytest.mark.slow  # Chromium (about 1 s): the full suite runs it
def test_index_filters_by_verdict_and_paper(browser: str, report: Path) -> None:
    page = load_page(report, width=390, height=844, mobile=True, expressions={"counts": FILTER})
    check_clean(page)
    claims = json.loads(REFERENCE.read_text())["claims"]
    refuted = [c for c in claims if c["verdict"] == "refuted"]
    unitary = [c for c in claims if c["paper"] == "unitary"]
    expected = [len(claims), len(refuted), sum(1 for c in refuted if c["paper"] == "unitary"), len(unitary)]
    assert page.values["counts"] == expected
