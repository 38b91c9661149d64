"""The server reads an editor's pipe on the event loop; anything else keeps pygls' thread reader."""

from __future__ import annotations

import asyncio
import io
import os
import socket
from pathlib import Path

from pygls.io_ import StdinAsyncReader

from copilot_lsp.lsp.stdin import LINE_LIMIT, OVERLONG, PipeReader, open_reader, readable_on_loop


def test_a_pipe_is_read_on_the_loop() -> None:
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    with (
        os.fdopen(read_end, "rb") as stdin,
        os.fdopen(write_end, "wb"),
        os.fdopen(out_read, "rb"),
        os.fdopen(out_write, "wb") as stdout,
    ):
        assert readable_on_loop(stdin, stdout)


def test_a_socket_is_read_on_the_loop_unless_it_is_stdout_too() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs, ours.makefile("rb") as stdin, ours.makefile("wb") as same:
        assert readable_on_loop(stdin, None)
        # Reading on the loop makes the descriptor non-blocking, which would make the
        # blocking writes of replies to the same socket fail when it is full.
        assert not readable_on_loop(stdin, same)


def test_files_and_memory_streams_keep_the_thread_reader(tmp_path: Path) -> None:
    path = tmp_path / "messages"
    path.write_bytes(b"Content-Length: 2\r\n\r\n{}")
    with path.open("rb") as stdin:
        assert not readable_on_loop(stdin, None)
        reader = asyncio.run(open_reader(stdin, None, None))
        assert isinstance(reader, StdinAsyncReader)
    assert not readable_on_loop(io.BytesIO(b""), None)


def _read_all(data: bytes, steps: list[int | None]) -> list[bytes]:
    """Feed `data` through a real pipe; a None step reads a line, a number that many bytes."""
    read_end, write_end = os.pipe()

    async def run() -> list[bytes]:
        with os.fdopen(read_end, "rb") as stdin:
            reader = await open_reader(stdin, None, None)
            assert isinstance(reader, PipeReader)
            writer = asyncio.get_running_loop().run_in_executor(None, _write, write_end, data)
            got = [await (reader.readline() if n is None else reader.readexactly(n)) for n in steps]
            await writer
            return got

    return asyncio.run(run())


def _write(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def test_messages_are_read_line_by_line_then_by_length() -> None:
    body = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
    data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body) * 2
    got = _read_all(data, [None, None, len(body), None, None, len(body), None])
    header = b"Content-Length: %d\r\n" % len(body)
    assert got == [header, b"\r\n", body, header, b"\r\n", body, b""]


def test_an_overlong_line_is_skipped_and_reading_goes_on() -> None:
    garbage = b"x" * (LINE_LIMIT + 10)
    got = _read_all(garbage + b"\nContent-Length: 2\r\n", [None] * 4)
    # Dropped whole, or in parts (as the pipe delivers it), never buffered in one piece; the
    # header after it survives.
    assert got[0] == OVERLONG
    header = got.index(b"Content-Length: 2\r\n")
    assert all(line == OVERLONG or set(line) <= set(b"x\n") for line in got[:header])
    assert all(len(line) <= LINE_LIMIT for line in got)


def test_a_body_cut_by_the_end_of_input_comes_back_as_far_as_it_goes() -> None:
    assert _read_all(b'{"jsonr', [20, None]) == [b'{"jsonr', b""]
