"""Drive headless Chromium from tests, with no third-party packages.

``load_page`` starts a fresh headless Chromium (temporary profile, closed-network flags), speaks the
Chrome DevTools Protocol to it over ``--remote-debugging-pipe`` (the browser reads NUL-terminated JSON
messages from its file descriptor 3 and writes them to its file descriptor 4), loads one local file,
and returns what happened: console messages, errors, network requests, the values of given JavaScript
expressions and a PNG screenshot. ``decode_png`` and ``region_colours`` inspect that screenshot in
pure Python. ``require_browser`` skips a test where no browser is installed, or fails it when
``ORTHOVERIFY_REQUIRE_BROWSER=1`` (CI sets it, so a missing browser can never pass silently).

Environment:

* ``ORTHOVERIFY_CHROMIUM`` -- the browser to use (a path, or a name looked up on PATH). When it is set
  (non-empty) it is the only candidate: if it does not name an executable file, ``find_chromium``
  returns None rather than falling back to PATH, so a mistyped override never goes unnoticed.
* ``ORTHOVERIFY_REQUIRE_BROWSER=1`` -- make ``require_browser`` fail instead of skip.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import itertools
import json
import math
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "BrowserError",
    "PageLoad",
    "decode_png",
    "find_chromium",
    "load_page",
    "region_colours",
    "require_browser",
]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Flags known to work in a closed network as root: without the background-networking ones Chromium
# keeps trying (and failing) to reach Google services.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
)

STDERR_TAIL = 3000  # characters of Chromium's stderr quoted in a BrowserError


class BrowserError(RuntimeError):
    """Chromium is missing, exited early, answered with a protocol error, or a step timed out."""


@dataclass
class PageLoad:
    url: str
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text), console API and Log entries
    errors: list[str] = field(default_factory=list)  # console errors, uncaught exceptions, Log errors, evaluations
    requests: list[str] = field(default_factory=list)  # every request's URL, the page's own file:// URL included
    values: dict[str, Any] = field(default_factory=dict)  # expression name -> its value (None if it threw)
    screenshot: bytes = b""  # PNG of the viewport, or of the whole page with full_page=True
    width: int = 0  # CSS viewport width used
    height: int = 0  # CSS viewport height used


def find_chromium() -> str | None:
    """$ORTHOVERIFY_CHROMIUM if set, else the first of chromium, chromium-browser, google-chrome,
    google-chrome-stable on PATH.

    ORTHOVERIFY_CHROMIUM may be a path or a name looked up on PATH. When it is set (non-empty) but does
    not name an executable file, the answer is None: no fallback to PATH, so a wrong override is noticed.
    """
    override = os.environ.get("ORTHOVERIFY_CHROMIUM")
    if override:
        return shutil.which(override)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """The Chromium path, or pytest.skip(...) when none is found; pytest.fail(...) instead when
    ORTHOVERIFY_REQUIRE_BROWSER=1."""
    path = find_chromium()
    if path is not None:
        return path
    override = os.environ.get("ORTHOVERIFY_CHROMIUM")
    if override:
        reason = f"ORTHOVERIFY_CHROMIUM={override!r} is not an executable"
    else:
        reason = f"no Chromium found on PATH (looked for {', '.join(CANDIDATES)}; set ORTHOVERIFY_CHROMIUM)"
    if os.environ.get("ORTHOVERIFY_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and ORTHOVERIFY_REQUIRE_BROWSER=1", pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------------------------------
# The DevTools pipe


def _scratch_dir() -> str | None:
    """Where the temporary profile goes: /dev/shm (tmpfs) when usable, as Chromium writes a few MB of
    profile files that take ~0.4 s to delete from a disk; else the default temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


class _Chromium:
    """One Chromium process, its temporary profile and the CDP pipe; ``close`` releases everything."""

    def __init__(self, executable: str, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp = tempfile.mkdtemp(prefix="orthoverify-chromium-", dir=_scratch_dir())
        self.stderr_path = os.path.join(self.tmp, "stderr.log")
        self.to_browser = -1  # we write commands here; the browser reads them on its fd 3
        self.from_browser = -1  # we read replies and events here; the browser writes them on its fd 4
        self.partial: list[bytes] = []  # the start of a message whose end has not arrived yet
        self.poller = select.poll()
        self.next_id = 0
        self.replies: dict[int, dict[str, Any]] = {}
        self.on_event: Callable[[dict[str, Any]], None] = lambda message: None
        try:
            self._start(executable)
            self.poller.register(self.from_browser, select.POLLIN)
        except BaseException:
            self.close()
            raise

    def _start(self, executable: str) -> None:
        child_in, self.to_browser = os.pipe()
        try:
            self.from_browser, child_out = os.pipe()
        except OSError:
            os.close(child_in)
            raise
        try:

            def preexec() -> None:  # in the child, between fork and exec
                # Move both ends above 4 first, so that moving one onto 3 or 4 cannot clobber the other.
                high_in = fcntl.fcntl(child_in, fcntl.F_DUPFD, 10)
                high_out = fcntl.fcntl(child_out, fcntl.F_DUPFD, 10)
                os.dup2(high_in, 3)  # dup2 clears close-on-exec on the target
                os.dup2(high_out, 4)

            args = [
                executable,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={os.path.join(self.tmp, 'profile')}",
                "--remote-debugging-pipe",
                "about:blank",
            ]
            # Keep everything Chromium writes outside the profile (crash database, disk cache, NSS and dconf
            # files) inside the temporary directory too, rather than in the real ~/.config and ~/.cache.
            home = os.path.join(self.tmp, "home")
            env = {
                **os.environ,
                "HOME": home,
                "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            }
            with open(self.stderr_path, "wb") as stderr:
                self.proc = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    stdout=stderr,
                    stderr=stderr,
                    pass_fds=(3, 4),
                    preexec_fn=preexec,  # the only way to place fds 3 and 4 in the child
                    start_new_session=True,  # its own process group, killed as a whole in close()
                )
        except OSError as exc:
            raise BrowserError(f"cannot start {executable!r}: {exc}") from exc
        finally:
            # Only the browser may hold its ends; otherwise we would never see EOF when it dies.
            os.close(child_in)
            os.close(child_out)

    # -- messages

    def stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - STDERR_TAIL))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def fail(self, message: str) -> BrowserError:
        status = self.proc.poll() if self.proc is not None else None
        if status is not None:
            message = f"{message} (Chromium exited with status {status})"
        return BrowserError(f"{message}\n--- Chromium stderr (tail) ---\n{self.stderr_tail()}")

    def send(self, method: str, params: Mapping[str, Any] | None = None, session: str | None = None) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": dict(params or {})}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.to_browser, data) :]
        except OSError as exc:  # BrokenPipeError: the browser has gone
            if self.proc is not None:  # it has probably exited: wait a moment, so that fail() reports its status
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=1)
            raise self.fail(f"Chromium stopped reading commands (sending {method}: {exc})") from exc
        return self.next_id

    def _pump(self, until: float, what: str) -> None:
        """Wait (until ``until``, at most 0.25 s) for output from the browser and dispatch what arrives."""
        remaining = min(until, self.deadline) - time.monotonic()
        if remaining > 0 and self.poller.poll(min(remaining, 0.25) * 1000):
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                if self.proc is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=1)
                raise self.fail(f"Chromium closed the DevTools pipe while we waited for {what}")
            # Messages end with NUL; a big one (a screenshot) arrives in many chunks.
            *complete, last = chunk.split(b"\0")
            if complete:
                complete[0] = b"".join([*self.partial, complete[0]])
                self.partial = [last] if last else []
                for raw in complete:
                    try:
                        message = json.loads(raw)
                    except ValueError as exc:
                        raise self.fail(f"malformed DevTools message {raw[:200]!r}") from exc
                    self._dispatch(message)
            else:
                self.partial.append(chunk)
        elif self.proc is not None and self.proc.poll() is not None:
            raise self.fail(f"Chromium exited while we waited for {what}")
        if time.monotonic() >= self.deadline:
            raise self.fail(f"timed out waiting for {what}")

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            self.replies[message["id"]] = message
        else:
            self.on_event(message)

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        while not condition():
            self._pump(self.deadline, what)

    def settle(self, seconds: float) -> None:
        """Keep dispatching events for ``seconds``."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            self._pump(until, "the page to settle")

    def reply(self, request: int, what: str) -> dict[str, Any]:
        self.wait_for(lambda: request in self.replies, what)
        return self.replies.pop(request)

    def call(self, method: str, params: Mapping[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        message = self.reply(self.send(method, params, session), method)
        if "error" in message:
            raise self.fail(f"{method} failed: {message['error']}")
        return message.get("result", {})

    # -- teardown

    def close(self) -> None:
        # No polite Browser.close: it costs ~0.4 s, and the profile is thrown away anyway.
        proc = self.proc
        for fd in (self.to_browser, self.from_browser):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.to_browser = self.from_browser = -1
        if proc is not None:
            _kill_all(proc.pid, os.fsencode(self.tmp + os.sep))
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        for _ in range(20):  # a dying child may still be writing into the profile
            shutil.rmtree(self.tmp, ignore_errors=True)
            if not os.path.exists(self.tmp):
                break
            time.sleep(0.05)


def _ours(pgid: int, marker: bytes) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid`` or whose command line mentions ``marker``.

    The second catches Chromium's crashpad handlers, which leave the process group (they call setsid);
    their command line names the crash database under our temporary HOME.
    """
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
            if fields[0] == b"Z":  # zombies hold nothing open; whoever adopted them reaps them
                continue
            if int(fields[2]) != pgid:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if marker not in f.read():
                        continue
        except (OSError, IndexError, ValueError):
            continue
        found.append(int(entry.name))
    return found


def _kill_all(pgid: int, marker: bytes) -> None:
    """SIGKILL the process group ``pgid`` and any process naming ``marker``; wait (up to 2 s) until all are gone."""
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        pids = _ours(pgid, marker)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------------
# Loading a page


def _remote_text(arg: Mapping[str, Any]) -> str:
    """A console argument (a Runtime.RemoteObject) as console.log would print it."""
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value)
    if "unserializableValue" in arg:
        return str(arg["unserializableValue"])
    if "description" in arg:
        return str(arg["description"])
    return str(arg.get("type", "?"))


def _exception_text(details: Mapping[str, Any]) -> str:
    """An ExceptionDetails as 'Uncaught Error: message' plus its stack (from the description)."""
    text = str(details.get("text", "exception"))
    description = (details.get("exception") or {}).get("description")
    return f"{text} {description}" if description else text


def load_page(
    path: str | Path,
    *,
    width: int = 1280,
    height: int = 900,
    mobile: bool = False,
    device_scale_factor: float = 1.0,
    expressions: Mapping[str, str] = {},  # never modified
    full_page: bool = False,
    settle_ms: int = 200,
    timeout: float = 60.0,
    executable: str | None = None,
) -> PageLoad:
    """Load a local file in a fresh headless Chromium and report what happened.

    After the load event and ``settle_ms`` more milliseconds, each of ``expressions`` is evaluated
    (``Runtime.evaluate`` with returnByValue and awaitPromise; one that throws gives None and an
    ``"evaluate <name>: ..."`` entry in ``errors``), then a PNG screenshot is taken. ``executable``
    defaults to ``find_chromium()``. Raises BrowserError (with Chromium's stderr tail) when there is no
    browser, it exits early or a step takes longer than ``timeout`` seconds in all; the process group is
    always killed and the temporary profile removed.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise FileNotFoundError(file)
    url = file.as_uri()
    chromium = executable if executable is not None else find_chromium()
    if chromium is None:
        raise BrowserError("no Chromium found (set ORTHOVERIFY_CHROMIUM or install chromium)")
    result = PageLoad(url=url, width=width, height=height)
    lifecycle: set[tuple[str, str]] = set()  # (loaderId, event name) seen on our session

    browser = _Chromium(chromium, timeout)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

        def on_event(message: dict[str, Any]) -> None:
            if message.get("sessionId") != session:
                return
            method, params = message.get("method"), message.get("params", {})
            if method == "Runtime.consoleAPICalled":
                level = params.get("type", "log")
                text = " ".join(_remote_text(arg) for arg in params.get("args", []))
                result.console.append((level, text))
                if level in ("error", "assert"):
                    result.errors.append(f"console.{level}: {text}")
            elif method == "Runtime.exceptionThrown":
                result.errors.append(_exception_text(params.get("exceptionDetails", {})))
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                level, text = entry.get("level", "info"), entry.get("text", "")
                if entry.get("url"):
                    text = f"{text} ({entry['url']})"
                result.console.append((level, text))
                if level == "error":
                    result.errors.append(f"log.error [{entry.get('source', '?')}]: {text}")
            elif method == "Network.requestWillBeSent":
                result.requests.append(params.get("request", {}).get("url", ""))
            elif method == "Page.lifecycleEvent":
                lifecycle.add((params.get("loaderId", ""), params.get("name", "")))

        browser.on_event = on_event
        # Send the setup commands together, then collect their replies: one round trip, not six.
        setup = [
            browser.send(method, params, session)
            for method, params in (
                ("Page.enable", {}),
                ("Page.setLifecycleEventsEnabled", {"enabled": True}),
                ("Runtime.enable", {}),
                ("Log.enable", {}),
                ("Network.enable", {}),
                (
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": height, "deviceScaleFactor": device_scale_factor, "mobile": mobile},
                ),
            )
        ]
        if mobile:
            setup.append(browser.send("Emulation.setTouchEmulationEnabled", {"enabled": True}, session))
        for request in setup:
            reply = browser.reply(request, "the page setup")
            if "error" in reply:
                raise browser.fail(f"page setup failed: {reply['error']}")

        navigation = browser.call("Page.navigate", {"url": url}, session)
        if navigation.get("errorText"):
            raise browser.fail(f"navigating to {url} failed: {navigation['errorText']}")
        loader = navigation.get("loaderId", "")
        browser.wait_for(lambda: (loader, "load") in lifecycle, "the load event")
        browser.settle(settle_ms / 1000)

        for name, expression in expressions.items():
            reply = browser.reply(
                browser.send(
                    "Runtime.evaluate",
                    {"expression": expression, "returnByValue": True, "awaitPromise": True},
                    session,
                ),
                f"evaluating {name!r}",
            )
            evaluated = reply.get("result", {})
            if "error" in reply:
                result.errors.append(f"evaluate {name}: {reply['error'].get('message', reply['error'])}")
                result.values[name] = None
            elif "exceptionDetails" in evaluated:
                result.errors.append(f"evaluate {name}: {_exception_text(evaluated['exceptionDetails'])}")
                result.values[name] = None
            else:
                result.values[name] = evaluated.get("result", {}).get("value")

        shot: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = browser.call("Page.getLayoutMetrics", {}, session)
            content = metrics.get("cssContentSize") or metrics["contentSize"]
            shot["captureBeyondViewport"] = True
            shot["clip"] = {
                "x": 0,
                "y": 0,
                "width": max(width, math.ceil(content["width"])),
                "height": max(height, math.ceil(content["height"])),
                "scale": 1,
            }
        result.screenshot = base64.b64decode(browser.call("Page.captureScreenshot", shot, session)["data"])
        return result
    finally:
        browser.close()


# --------------------------------------------------------------------------------------------------
# PNG


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _add_bytes(a: bytes, b: bytes) -> bytes:
    """Bytewise (a + b) mod 256 of two equal-length byte strings, all bytes at once with big integers:
    add the low 7 bits of each byte (no carry can cross a byte), then put the top bits back with XOR."""
    n = len(a)
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    low7, top = int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big")
    return (((x & low7) + (y & low7)) ^ ((x ^ y) & top)).to_bytes(n, "big")


def _unfilter_row(kind: int, line: bytearray, prior: bytes, bpp: int) -> bytes:
    n = len(line)
    if kind == 0:
        return bytes(line)
    if kind == 2:  # Up
        return _add_bytes(bytes(line), prior)
    if kind == 1:  # Sub: each channel is a running sum mod 256
        out = bytearray(n)
        for c in range(bpp):
            out[c::bpp] = bytes(map((255).__and__, itertools.accumulate(line[c::bpp])))
        return bytes(out)
    if kind == 3:  # Average
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prior[i]) >> 1)) & 255
        return bytes(line)
    if kind == 4:  # Paeth
        for i in range(n):
            up = prior[i]
            if i >= bpp:
                left, corner = line[i - bpp], prior[i - bpp]
            else:
                left = corner = 0
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            if pa <= pb and pa <= pc:
                predicted = left
            elif pb <= pc:
                predicted = up
            else:
                predicted = corner
            line[i] = (line[i] + predicted) & 255
        return bytes(line)
    raise ValueError(f"bad PNG filter type {kind}")


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows) with each row as RGB bytes (3 per pixel); alpha, if any, is dropped.

    Pure Python (zlib and PNG filters 0-4); 8-bit RGB or RGBA, non-interlaced; anything else -> ValueError.
    """
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG (bad signature)")
    pos, header, idat = len(PNG_SIGNATURE), None, []
    while True:
        if pos + 8 > len(data):
            raise ValueError("truncated PNG (no IEND)")
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        crc = data[pos + 8 + length : pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ValueError("truncated PNG chunk")
        if zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise ValueError(f"bad CRC in PNG chunk {kind!r}")
        pos += 12 + length
        if kind == b"IHDR":
            if length != 13:
                raise ValueError("bad IHDR")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, compression, filtering, interlace = header
    if depth != 8 or colour not in (2, 6) or compression != 0 or filtering != 0 or interlace != 0:
        raise ValueError(
            f"unsupported PNG (bit depth {depth}, colour type {colour}, interlace {interlace}); "
            "only 8-bit RGB/RGBA, non-interlaced"
        )
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise ValueError(f"bad PNG image data: {exc}") from exc
    if len(raw) != height * (stride + 1):
        raise ValueError(f"PNG image data has {len(raw)} bytes, expected {height * (stride + 1)}")
    rows: list[bytes] = []
    prior = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        prior = _unfilter_row(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), prior, bpp)
        if bpp == 4:
            rgb = bytearray(width * 3)
            rgb[0::3], rgb[1::3], rgb[2::3] = prior[0::4], prior[1::4], prior[2::4]
            rows.append(bytes(rgb))
        else:
            rows.append(prior)
    return width, height, rows


def region_colours(png: bytes, x: int, y: int, w: int, h: int) -> dict[tuple[int, int, int], int]:
    """Histogram of pixel colours in a rectangle (device pixels; clipped to the image)."""
    width, height, rows = decode_png(png)
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(width, x + w), min(height, y + h)
    counts: Counter[tuple[int, int, int]] = Counter()
    for row in rows[y0:y1] if x1 > x0 else ():
        pixels = row[3 * x0 : 3 * x1]
        counts.update(zip(pixels[0::3], pixels[1::3], pixels[2::3], strict=True))
    return dict(counts)
