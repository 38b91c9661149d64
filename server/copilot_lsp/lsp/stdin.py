"""Reading the client's messages from stdin.

pygls reads stdin on a worker thread, one hop per line: a message costs three thread
round trips (header, blank line, body) before it is handled, a millisecond or more of every
keystroke's round trip while the loop and the reader thread trade the GIL. When stdin is a
pipe or a socket (an editor's connection) it is read on the event loop itself instead. A
terminal or a file keeps pygls' thread reader: a non-blocking terminal would stay
non-blocking for the shell after the server exits.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO, Protocol

from pygls.io_ import StdinAsyncReader

LINE_LIMIT = 1024 * 1024
"""A header line longer than this is garbage: it is skipped, not buffered without end."""

OVERLONG = b"<overlong line>\n"


class MessageReader(Protocol):
    """What the message loop reads with (pygls' `StdinAsyncReader` has this shape)."""

    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


class PipeReader:
    """A pipe or socket read by the event loop: no thread hop per line."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        try:
            return await self._stream.readline()
        except ValueError:
            # Over LINE_LIMIT: asyncio dropped what it buffered; the rest of the line comes
            # next as another line, which the caller skips too.
            return OVERLONG

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError as cut:
            return cut.partial  # end of input: what there was, as a plain read gives


def _identity(stream: BinaryIO | None) -> os.stat_result | None:
    try:
        return os.fstat(stream.fileno()) if stream is not None else None
    except (AttributeError, OSError, ValueError):
        return None  # no descriptor (an in-memory stream in tests)


def readable_on_loop(stdin: BinaryIO, stdout: BinaryIO | None) -> bool:
    """True for a pipe or socket that is not also stdout: reading on the loop makes the
    descriptor non-blocking, and replies are written to stdout with blocking writes."""
    found = _identity(stdin)
    if found is None or not (stat.S_ISFIFO(found.st_mode) or stat.S_ISSOCK(found.st_mode)):
        return False
    out = _identity(stdout)
    return out is None or (out.st_dev, out.st_ino) != (found.st_dev, found.st_ino)


async def open_reader(
    stdin: BinaryIO, stdout: BinaryIO | None, executor: ThreadPoolExecutor | None
) -> PipeReader | StdinAsyncReader:
    """The fastest reader `stdin` allows (call inside the running loop)."""
    if readable_on_loop(stdin, stdout):
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
        return PipeReader(stream)
    return StdinAsyncReader(stdin, executor)
