"""Reading a user's file: a regular file only, and never more than a bound.

A path a user (or a crafted result file) names can be a FIFO, which blocks an ordinary ``open``
for good, or a device such as ``/dev/zero``, which ``stat()`` calls empty and which never ends.
:func:`read_regular` opens without blocking, checks what was opened (``fstat`` on the open file,
so a path swapped between a check and the open changes nothing) and reads at most the bound plus
one byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """The path names something other than a regular file (a FIFO, a device, a folder)."""


class FileTooLargeError(OSError):
    """The file holds more bytes than the reader accepts."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular(path: str | Path, limit: int, *, prefix: bool = False) -> bytes:
    """The bytes of the regular file at ``path``: at most ``limit`` of them. Raises
    :class:`NotRegularFileError` for anything else (a FIFO, a device, a folder: found without
    blocking or reading), :class:`FileTooLargeError` for a file longer than ``limit`` (unless
    ``prefix``: then its first ``limit`` bytes), and OSError when it cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(f"{path} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit and not prefix:
            raise FileTooLargeError(f"{path} is {st.st_size} bytes, more than the {limit} it may have")
        chunks: list[bytes] = []
        left = limit + 1  # one byte more: a file that grew since fstat is still caught
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if prefix:
            return data[:limit]
        raise FileTooLargeError(f"{path} has more than the {limit} bytes it may have")
    return data
