"""Bad input through the real server over stdio: clear errors, no crash, no corrupted text.

Whether the server's copy of a document equals the client's is read from the prompt the
scripted engine receives: for a short plain-text document the prompt is the text before the
cursor (trailing blanks held back).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(90)


def change(
    session: Session, uri: str, version: int, *edits: tuple[tuple[int, int, int, int] | None, str]
) -> None:
    changes: list[Any] = []
    for span, text in edits:
        if span is None:
            changes.append(types.TextDocumentContentChangeWholeDocument(text=text))
            continue
        a, b, c, d = span
        changes.append(
            types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(a, b), types.Position(c, d)), text=text
            )
        )
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri), changes
        )
    )


def raw_notify(session: Session, method: str, params: dict[str, Any]) -> None:
    """Send params exactly as given (negative numbers and all), bypassing lsprotocol."""
    session.client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


async def prompt_at(session: Session, uri: str, line: int, character: int) -> str | None:
    before = len(session.engine.requests)
    await session.complete(uri, line, character)
    if len(session.engine.requests) == before:
        return None
    return str(session.engine.requests[-1].body["prompt"])


def logged(session: Session, needle: str) -> list[str]:
    return [m.message for m in session.client.log_messages if needle in m.message]


async def test_lone_surrogates_emoji_and_cjk_stay_in_step(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("a\ud800b = 😀\n漢 = \n", language="plaintext")
    change(session, uri, 2, ((0, 2, 0, 2), "\udc00"), ((0, 7, 0, 7), "x"))
    change(session, uri, 3, ((1, 4, 1, 4), "\ud83d"))
    # The halves typed apart form one character; a lone half reaches the engine as U+FFFD.
    assert await prompt_at(session, uri, 1, 5) == "a\U00010000b = x😀\n漢 = \ufffd"


async def test_a_ten_megabyte_document(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["total"])
    line = "value = compute(1, 2)  # 漢字 padding padding padding padding padding\n"
    text = line * (10 * 1024 * 1024 // len(line.encode()))
    uri = session.open(text)
    last = text.count("\n")
    change(session, uri, 2, ((last, 0, last, 0), "result = "))
    change(session, uri, 3, ((0, 0, 1, 0), ""))
    items = await session.complete(uri, last - 1, 9)
    assert [i.insert_text for i in items] == ["total"]
    assert session.engine.requests[-1].body["prompt"].endswith(line + "result =")
    assert (await session.stats())["outcomes"]["shown"] == 1


async def test_binary_content_and_unknown_language_ids(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["ok"])
    blob = bytes(range(256)).decode("latin-1").replace("\r", "").replace("\n", "")
    uri = session.open(f"{blob}\n= ", uri="file:///work/blob.bin", language="klingon-42")
    prompt = await prompt_at(session, uri, 1, 2)
    assert prompt is not None and blob.rstrip() in prompt
    uri2 = session.open("", uri="file:///work/empty", language="")
    # An empty document with no language id: an empty prompt, a multi-line answer at (0, 0).
    items = await session.complete(uri2, 0, 0)
    assert [(i.insert_text, str(i.range)) for i in items] == [("ok", "0:0-0:0")]
    assert session.engine.requests[-1].body["prompt"] == ""
    recent = (await session.stats())["recent"]
    assert [(r["language"], r["mode"], r["outcome"]) for r in recent] == [
        ("klingon-42", "single-line", "shown"),
        ("", "multi-line", "shown"),
    ]


async def test_edits_against_unknown_documents_are_reported_and_ignored(session: Session) -> None:
    await session.initialize()
    change(session, "file:///work/never-opened.py", 2, ((0, 0, 0, 0), "x"))
    await session.stats()  # a round trip: the notification has been handled
    assert logged(session, "ignored didChange")
    with pytest.raises(JsonRpcException, match="not open"):
        await session.complete("file:///work/never-opened.py", 0, 0)


async def test_positions_past_the_end_are_clamped(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("ab\ncd", language="plaintext")
    change(session, uri, 2, ((0, 99, 0, 2**31 - 1), "X"), ((9, 0, 99, 5), "!"))
    raw_notify(
        session,
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 2**40, "character": 0},
                        "end": {"line": 2**40, "character": 2**53},
                    },
                    "text": "?",
                }
            ],
        },
    )
    assert await prompt_at(session, uri, 5, 0) == "abX\ncd!?"
    assert not logged(session, "lost track")


async def test_a_reversed_range_pauses_the_document_until_its_full_text_comes(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("first\nsecond = \n", language="plaintext")
    change(session, uri, 2, ((1, 3, 0, 1), "x"))
    assert await prompt_at(session, uri, 1, 9) is None  # no completion from a stale text
    assert logged(session, "lost track") and logged(session, "ends before it starts")
    change(session, uri, 3, ((0, 0, 0, 0), "ignored"))
    assert await prompt_at(session, uri, 1, 9) is None
    change(session, uri, 4, (None, "fresh\nsecond = \n"))
    assert await prompt_at(session, uri, 1, 9) == "fresh\nsecond ="


async def test_negative_numbers(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n", language="plaintext")
    answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    # pygls files asyncio futures in this table too (json_rpc.py), whatever its annotation says.
    session.client.protocol._request_futures["negative"] = answer  # type: ignore[assignment]
    session.client.protocol._send_data(
        {
            "jsonrpc": "2.0",
            "id": "negative",
            "method": types.TEXT_DOCUMENT_INLINE_COMPLETION,
            "params": {
                "textDocument": {"uri": uri},
                "position": {"line": -1, "character": 4},
                "context": {"triggerKind": 1},
            },
        }
    )
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(answer, 20)
    assert raised.value.code == -32602 and "position" in str(raised.value)
    raw_notify(
        session,
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 0, "character": -3},
                        "end": {"line": 0, "character": 0},
                    },
                    "text": "lost",
                }
            ],
        },
    )
    assert await prompt_at(session, uri, 0, 4) is None
    assert logged(session, "lost track") and logged(session, "invalid params")
    session.open("y = \n", uri=uri, language="plaintext")  # reopening resynchronises
    assert await prompt_at(session, uri, 0, 4) == "y ="


# --- raw bytes on stdin -------------------------------------------------------------------


class RawServer:
    """The server as a subprocess, spoken to in raw bytes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def start(cls, env: dict[str, str]) -> RawServer:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "copilot_lsp",
            "--stdio",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        return cls(process)

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        length = 0
        while True:
            line = await stdout.readline()
            assert line, "the server closed its stdout"
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line in (b"\r\n", b"\n"):
                break
        message: dict[str, Any] = json.loads(await stdout.readexactly(length))
        self.seen.append(message)
        return message

    async def response(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = await asyncio.wait_for(self.read(), 20)
            if message.get("id") == msg_id and "method" not in message:
                return message


async def test_malformed_json_rpc_gets_clear_errors_and_the_server_lives_on(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    server = await RawServer.start(isolated_env)
    try:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"capabilities": {}, "initializationOptions": {"engine": {"url": ""}}},
            }
        )
        assert "capabilities" in (await server.response(1))["result"]
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        stats = {"jsonrpc": "2.0", "method": methods.STATS_REQUEST}  # params omitted: allowed

        server.write(b"Content-Length: 9\r\n\r\n{bad json")  # invalid JSON, no newline after
        server.write(b"Content-Length: abc\r\n\r\n{}")  # a length that is not a number
        server.write(b"Content-Length: 99999999999\r\n\r\n")  # absurd
        server.write(b"Content-Length: 2\r\n\r\n[]")  # valid JSON, not JSON-RPC
        server.write(b'Content-Length: 11\r\n\r\n{"a": "\xff\xfe"}')  # not UTF-8
        server.write(b"random garbage between messages\r\n\r\n")
        server.send({**stats, "id": 2})
        assert "engine" in (await server.response(2))["result"]

        server.send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}})
        assert (await server.response(3))["error"]["code"] == -32601
        server.send({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}})
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "textDocument/inlineCompletion",
                "params": {"textDocument": 5, "position": "here"},
            }
        )
        error = (await server.response(4))["error"]
        assert error["code"] == -32602 and "inlineCompletion" in error["message"]
        server.send({"jsonrpc": "2.0", "id": 5, "method": "textDocument/didOpen", "params": []})
        assert "error" in await server.response(5)
        server.send({"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand"})
        assert "error" in await server.response(6)
        server.send({**stats, "id": 7, "params": None})
        assert "engine" in (await server.response(7))["result"]

        logs = [
            m["params"]["message"] for m in server.seen if m.get("method") == "window/logMessage"
        ]
        assert any("not JSON" in m for m in logs)
        assert any("absurd Content-Length" in m for m in logs)
        assert any("not a JSON-RPC object" in m for m in logs)

        server.send({"jsonrpc": "2.0", "id": 8, "method": "shutdown", "params": None})
        assert (await server.response(8)).get("result") is None
        server.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()
            await server.process.wait()
    stderr = await server.process.stderr.read() if server.process.stderr else b""
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")[-2000:]
    assert not (tmp_path / "state" / "completions.jsonl").exists()
