"""Atomic file outputs: a reader (or a run killed half-way) sees the previous complete file or the
new complete one, never a truncated or half-written one.

Every output orthoverify writes (result JSON, reports, figures, bench JSON) goes through here:
each file is written to a temporary file in its own folder, flushed and fsynced, then renamed
over the target (``os.replace``, atomic on POSIX and Windows). A set of files that belong
together (a report and its figures) is staged first and then committed in one short step
during which SIGINT and SIGTERM are held back, so a signal leaves either the old set or the
new set; stale files of the old set are removed only after the new set is in place.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

_DEFERRED_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s)


def _mode() -> int:
    """The permissions a plainly created file gets (0o666 less the umask; mkstemp uses 0o600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _stage(path: Path, data: str | bytes, encoding: str) -> Path:
    """Write ``data`` to a new temporary file beside ``path`` (flushed and fsynced); returns it."""
    if path.is_dir():  # found now, not half-way through the commit
        raise IsADirectoryError(f"{path} is a folder")
    payload = data.encode(encoding) if isinstance(data, str) else data
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        mode = path.stat().st_mode & 0o777 if path.exists() else _mode()
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _sync_dir(folder: Path) -> None:
    """fsync a folder so that a rename in it survives a crash (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the duration of the block (main thread only; elsewhere a
    no-op), then deliver the first one that arrived to the handler that was in place before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        arrived.append(signum)

    previous: dict[int, Any] = {}
    try:
        for s in _DEFERRED_SIGNALS:
            if signal.getsignal(s) is not None:  # None: a handler set outside Python, left alone
                previous[s] = signal.signal(s, hold)
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if arrived:
            _deliver(arrived[0], previous.get(arrived[0]))


def _deliver(signum: int, handler: Any) -> None:
    """Act on a held-back signal as its previous handler would have."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)  # the default action (terminate), now that the commit is done
    # SIG_IGN or None (a handler not installed from Python): ignored, as it would have been


def write_files(
    files: Mapping[Path, str | bytes], *, remove: Iterable[Path] = (), encoding: str = "utf-8"
) -> list[Path]:
    """Write every file atomically, as one set: all are staged first (folders created), then
    renamed into place together with signals held back, then ``remove`` is deleted. On any error
    before the commit, the staged temporaries are removed and the old files are untouched."""
    targets = [Path(p) for p in files]
    staged: list[tuple[Path, Path]] = []
    try:
        for p, data in zip(targets, files.values(), strict=True):
            p.parent.mkdir(parents=True, exist_ok=True)
            staged.append((_stage(p, data, encoding), p))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    keep = {p.resolve() for p in targets}
    with signals_deferred():
        try:
            for tmp, p in staged:
                os.replace(tmp, p)
        finally:  # a rename that failed (a permission changed meanwhile): no temporary left behind
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
        for stale in remove:
            if stale.resolve() not in keep:
                stale.unlink(missing_ok=True)
    for folder in {p.parent for p in targets}:
        _sync_dir(folder)
    return targets


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write one text file atomically (parents created); returns its path."""
    return write_files({Path(path): text}, encoding=encoding)[0]


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write one binary file atomically (parents created); returns its path."""
    return write_files({Path(path): data})[0]
