"""The committed HTML report in a real browser (Debian's headless Chromium): it loads with no
console error and no network request, the summary and a figure render, and on a phone-sized
screen the page never scrolls sideways.

Screenshots are written to $ORTHOVERIFY_SCREENSHOTS when it is set (else to pytest's tmp_path).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.browser import PageLoad, decode_png, load_page, region_colours, require_browser

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "reference" / "report.html"

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


def test_summary_renders_on_a_laptop(browser: str, tmp_path: Path) -> None:
    page = load_page(
        REPORT,
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


def test_a_figure_renders(browser: str, tmp_path: Path) -> None:
    fig = "document.querySelector('#fig-ratio-n svg')"
    page = load_page(
        REPORT,
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


def test_phone_layout_never_scrolls_sideways(browser: str, tmp_path: Path) -> None:
    page = load_page(
        REPORT,
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
