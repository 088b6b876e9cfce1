"""Tests of tests/system/browser.py, the headless-Chromium harness (CDP over --remote-debugging-pipe).

The tests that start a browser call require_browser() first: they skip where no Chromium is installed,
and fail instead when ORTHOVERIFY_REQUIRE_BROWSER=1 (as in CI).
"""

from __future__ import annotations

import base64
import os
import random
import stat
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import pytest

from tests.system import browser
from tests.system.browser import BrowserError, decode_png, find_chromium, load_page, region_colours, require_browser

RED, WHITE = (255, 0, 0), (255, 255, 255)


def write_page(tmp_path: Path, body: str, head: str = "", name: str = "page.html") -> Path:
    page = tmp_path / name
    page.write_text(
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>t</title>{head}</head>'
        f'<body style="margin:0;background:#fff">{body}</body></html>\n',
        encoding="utf-8",
    )
    return page


def live(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return text[text.rfind(b")") + 2 :].split()[0] != b"Z"


def processes_of(pgid: int, marker: str) -> list[int]:
    """Live processes in process group ``pgid`` or with ``marker`` on their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_bytes()
            fields = text[text.rfind(b")") + 2 :].split()
            if fields[0] != b"Z" and (int(fields[2]) == pgid or marker.encode() in (entry / "cmdline").read_bytes()):
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """Record the temporary directories and processes load_page creates."""
    record: dict[str, list] = {"dirs": [], "procs": []}
    real_mkdtemp, real_popen = tempfile.mkdtemp, subprocess.Popen

    def mkdtemp(*args, **kwargs):
        path = real_mkdtemp(*args, **kwargs)
        record["dirs"].append(path)
        return path

    def popen(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        record["procs"].append(proc)
        return proc

    monkeypatch.setattr(browser.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(browser.subprocess, "Popen", popen)
    return record


def assert_cleaned_up(record: dict[str, list]) -> None:
    assert record["dirs"], "load_page made no temporary directory"
    for path in record["dirs"]:
        assert not os.path.exists(path), f"temporary directory {path} left behind"
    for proc in record["procs"]:
        assert proc.returncode is not None, "Chromium was not reaped"
        leftovers = processes_of(proc.pid, record["dirs"][0] + os.sep)
        assert not leftovers, f"processes left running: {leftovers}"


# --------------------------------------------------------------------------------------------------
# Loading pages


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_clean_page(tmp_path: Path, spawned: dict[str, list]) -> None:
    require_browser()
    page = write_page(tmp_path, '<h1 id="title">Report</h1><p>All good.</p>')
    started = time.monotonic()
    result = load_page(
        page,
        width=800,
        height=600,
        device_scale_factor=2,
        expressions={
            "title": "document.getElementById('title').textContent",
            "box": "document.getElementById('title').getBoundingClientRect().toJSON()",
            "answer": "Promise.resolve(6 * 7)",
            "nothing": "undefined",
        },
    )
    elapsed = time.monotonic() - started
    assert result.errors == []
    assert result.requests == [page.resolve().as_uri()]
    assert result.url == page.resolve().as_uri()
    assert result.values["title"] == "Report"
    assert result.values["answer"] == 42
    assert result.values["nothing"] is None
    box = result.values["box"]
    assert box["width"] > 0 and box["height"] > 0 and box["x"] >= 0 and box["y"] >= 0
    assert (result.width, result.height) == (800, 600)
    width, height, rows = decode_png(result.screenshot)
    assert (width, height) == (1600, 1200)  # CSS viewport times the device scale factor
    assert len(rows) == 1200 and all(len(row) == 1600 * 3 for row in rows)
    assert elapsed < 10, f"one small page took {elapsed:.1f} s"
    assert_cleaned_up(spawned)


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_console_errors_and_exceptions(tmp_path: Path) -> None:
    require_browser()
    page = write_page(
        tmp_path,
        "<script>console.log('hello', 42); console.warn('careful'); console.error('boom');</script>"
        "<script>throw new Error('bad');</script>"
        "<p>after</p>",
    )
    result = load_page(page, expressions={"throws": "(() => { throw new TypeError('nope'); })()", "ok": "1 + 1"})
    assert ("log", "hello 42") in result.console
    assert ("warning", "careful") in result.console
    assert ("error", "boom") in result.console
    assert any("boom" in error for error in result.errors)
    assert any("Error: bad" in error for error in result.errors), result.errors
    assert not any("hello" in error or "careful" in error for error in result.errors)
    assert any(error.startswith("evaluate throws:") and "TypeError: nope" in error for error in result.errors)
    assert result.values == {"throws": None, "ok": 2}
    assert len(result.errors) == 3, result.errors


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_network_requests_are_recorded(tmp_path: Path) -> None:
    require_browser()
    page = write_page(tmp_path, '<img src="http://example.invalid/x.png" alt="">')
    result = load_page(page)
    assert result.requests[0] == page.resolve().as_uri()
    assert "http://example.invalid/x.png" in result.requests
    assert len(result.requests) == 2
    # The load fails (no such host, and no network): Chromium logs it as an error.
    assert any("example.invalid" in error for error in result.errors)


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_region_colours_of_a_red_square(tmp_path: Path) -> None:
    require_browser()
    page = write_page(
        tmp_path,
        '<div id="sq" style="position:absolute;left:40px;top:30px;width:100px;height:100px;background:red"></div>',
    )
    result = load_page(page, width=400, height=300, expressions={"sq": "sq.getBoundingClientRect().toJSON()"})
    assert result.errors == []
    box = result.values["sq"]
    assert (box["x"], box["y"], box["width"], box["height"]) == (40, 30, 100, 100)
    inside = region_colours(result.screenshot, 40, 30, 100, 100)
    assert sum(inside.values()) == 100 * 100
    assert inside.get(RED, 0) >= 0.95 * 100 * 100
    outside = region_colours(result.screenshot, 200, 150, 150, 100)
    assert outside == {WHITE: 150 * 100}
    # Clipped to the image: only the 50 x 20 pixels inside the 400 x 300 viewport count.
    assert region_colours(result.screenshot, 350, 280, 200, 200) == {WHITE: 50 * 20}
    assert region_colours(result.screenshot, 500, 0, 10, 10) == {}


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_mobile_viewport(tmp_path: Path) -> None:
    require_browser()
    # Without a viewport meta tag a mobile browser lays the page out 980 CSS pixels wide.
    page = write_page(
        tmp_path, "<p>phone</p>", head='<meta name="viewport" content="width=device-width, initial-scale=1">'
    )
    result = load_page(
        page,
        width=390,
        height=844,
        mobile=True,
        device_scale_factor=3,
        expressions={"size": "[window.innerWidth, window.innerHeight, window.devicePixelRatio]"},
    )
    assert result.errors == []
    assert result.values["size"] == [390, 844, 3]
    assert decode_png(result.screenshot)[:2] == (1170, 2532)


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_full_page_screenshot(tmp_path: Path) -> None:
    require_browser()
    page = write_page(tmp_path, '<div style="height:1000px"></div><div style="height:200px;background:red"></div>')
    result = load_page(page, width=300, height=400, full_page=True, expressions={"h": "document.body.scrollHeight"})
    assert result.values["h"] == 1200
    width, height, _ = decode_png(result.screenshot)
    assert (width, height) == (300, 1200)
    assert region_colours(result.screenshot, 0, 1000, 300, 200) == {RED: 300 * 200}
    assert region_colours(result.screenshot, 0, 0, 300, 1000) == {WHITE: 300 * 1000}


# --------------------------------------------------------------------------------------------------
# Failures


def fake_browser(tmp_path: Path, script: str) -> str:
    path = tmp_path / "fake-chromium"
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_missing_browser_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = write_page(tmp_path, "<p>x</p>")
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", str(tmp_path / "no-such-chromium"))
    with pytest.raises(BrowserError, match="no Chromium found"):
        load_page(page)
    with pytest.raises(BrowserError, match="cannot start"):
        load_page(page, executable=str(tmp_path / "no-such-chromium"))


def test_browser_that_exits_raises(tmp_path: Path, spawned: dict[str, list]) -> None:
    page = write_page(tmp_path, "<p>x</p>")
    executable = fake_browser(tmp_path, "echo 'fake browser gives up' >&2\nexit 3\n")
    with pytest.raises(BrowserError) as caught:
        load_page(page, executable=executable, timeout=20)
    message = str(caught.value)
    assert "fake browser gives up" in message  # the stderr tail
    assert "status 3" in message
    assert_cleaned_up(spawned)


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_timeout_kills_the_process_group(tmp_path: Path, spawned: dict[str, list]) -> None:
    page = write_page(tmp_path, "<p>x</p>")
    pids = tmp_path / "pids"
    # Never speaks CDP; leaves a child behind in its process group.
    executable = fake_browser(tmp_path, f'sleep 60 &\necho "$$ $!" > {pids}\nexec sleep 60\n')
    started = time.monotonic()
    with pytest.raises(BrowserError, match=r"timed out waiting for Target\.createTarget"):
        load_page(page, executable=executable, timeout=1.0)
    assert time.monotonic() - started < 5
    for pid in map(int, pids.read_text().split()):
        assert not live(pid), f"process {pid} survived"
    assert_cleaned_up(spawned)


def test_load_page_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_page(tmp_path / "absent.html")


# --------------------------------------------------------------------------------------------------
# Finding the browser


def test_find_chromium_honours_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executable = fake_browser(tmp_path, "exit 0\n")
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", executable)
    assert find_chromium() == executable
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", str(tmp_path / "missing"))
    assert find_chromium() is None  # a wrong override does not fall back to PATH
    not_executable = tmp_path / "plain-file"
    not_executable.write_text("", encoding="utf-8")
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", str(not_executable))
    assert find_chromium() is None
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ORTHOVERIFY_CHROMIUM")
    assert find_chromium() is None  # nothing on this PATH
    Path(executable).rename(tmp_path / "google-chrome")
    assert find_chromium() == str(tmp_path / "google-chrome")


def test_require_browser_fails_or_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", str(tmp_path / "missing"))
    monkeypatch.setenv("ORTHOVERIFY_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="ORTHOVERIFY_REQUIRE_BROWSER"):
        require_browser()
    monkeypatch.delenv("ORTHOVERIFY_REQUIRE_BROWSER")
    with pytest.raises(pytest.skip.Exception, match="not an executable"):
        require_browser()
    executable = fake_browser(tmp_path, "exit 0\n")
    monkeypatch.setenv("ORTHOVERIFY_CHROMIUM", executable)
    monkeypatch.setenv("ORTHOVERIFY_REQUIRE_BROWSER", "1")
    assert require_browser() == executable


# --------------------------------------------------------------------------------------------------
# PNG decoding


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def filter_row(kind: int, row: bytes, prior: bytes, bpp: int) -> bytes:
    """PNG-filter one row (the encoder side, written independently of the decoder)."""
    out = bytearray()
    for i, value in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        predicted = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
        out.append((value - predicted) % 256)
    return bytes(out)


def make_png(
    width: int, height: int, pixels: list[bytes], colour_type: int = 2, filters: list[int] | None = None
) -> bytes:
    bpp = 3 if colour_type == 2 else 4
    raw, prior = bytearray(), bytes(width * bpp)
    for y, row in enumerate(pixels):
        kind = filters[y % len(filters)] if filters else 0
        raw += bytes([kind]) + filter_row(kind, row, prior, bpp)
        prior = row

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")
    )


def test_decode_png_filter_type_0() -> None:
    pixels = [bytes([255, 0, 0, 0, 255, 0]), bytes([0, 0, 255, 10, 20, 30])]
    assert decode_png(make_png(2, 2, pixels)) == (2, 2, pixels)
    assert region_colours(make_png(2, 2, pixels), 0, 0, 2, 2) == {
        (255, 0, 0): 1,
        (0, 255, 0): 1,
        (0, 0, 255): 1,
        (10, 20, 30): 1,
    }


@pytest.mark.parametrize("colour_type", [2, 6])
def test_decode_png_all_filters(colour_type: int) -> None:
    rng = random.Random(colour_type)
    width, height, bpp = 7, 15, 3 if colour_type == 2 else 4
    pixels = [bytes(rng.randrange(256) for _ in range(width * bpp)) for _ in range(height)]
    png = make_png(width, height, pixels, colour_type, filters=[0, 1, 2, 3, 4])
    w, h, rows = decode_png(png)
    assert (w, h) == (width, height)
    rgb = [row if bpp == 3 else bytes(b for i, b in enumerate(row) if i % 4 != 3) for row in pixels]
    assert rows == rgb


def test_decode_png_rejects_other_data() -> None:
    with pytest.raises(ValueError, match="not a PNG"):
        decode_png(b"GIF89a" + bytes(20))
    png = make_png(1, 1, [b"\x01\x02\x03"])
    with pytest.raises(ValueError, match="CRC"):
        decode_png(png[:20] + bytes([png[20] ^ 1]) + png[21:])
    with pytest.raises(ValueError, match="truncated"):
        decode_png(png[:-12])
    grey = png.replace(struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0), struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    grey = grey[:29] + struct.pack(">I", zlib.crc32(grey[12:29])) + grey[33:]
    with pytest.raises(ValueError, match="unsupported"):
        decode_png(grey)


@pytest.mark.slow  # starts Chromium (about 1 s): the full suite runs it
def test_decode_png_matches_chromium(tmp_path: Path) -> None:
    """Decode a real screenshot (varied content, so Chromium's encoder uses several filters), then let
    Chromium decode the same PNG in a canvas: every pixel must agree."""
    require_browser()
    page = write_page(
        tmp_path,
        '<h1 style="font:40px serif">Gradient</h1><div style="height:120px;background:linear-gradient(90deg,red,blue)">'
        '</div><svg width="300" height="150"><circle cx="150" cy="75" r="60" fill="green" stroke="black"/>'
        '<path d="M0 0 L300 150" stroke="purple" stroke-width="3"/></svg>',
    )
    shot = load_page(page, width=320, height=400, device_scale_factor=1.5).screenshot
    width, height, rows = decode_png(shot)
    assert (width, height) == (480, 600)
    checker = write_page(
        tmp_path,
        f'<img id="shot" src="data:image/png;base64,{base64.b64encode(shot).decode()}">',
        name="checker.html",
    )
    decoded = load_page(
        checker,
        expressions={
            "pixels": """(async () => {
                const img = document.getElementById('shot');
                await img.decode();
                const canvas = document.createElement('canvas');
                canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
                const context = canvas.getContext('2d');
                context.drawImage(img, 0, 0);
                const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
                let rgb = '';
                for (let i = 0; i < rgba.length; i += 4) rgb += String.fromCharCode(rgba[i], rgba[i + 1], rgba[i + 2]);
                return [canvas.width, canvas.height, btoa(rgb)];
            })()"""
        },
    )
    assert decoded.errors == []
    canvas_width, canvas_height, canvas_rgb = decoded.values["pixels"]
    assert (canvas_width, canvas_height) == (width, height)
    assert base64.b64decode(canvas_rgb) == b"".join(rows)
