"""README promises through the real server over stdio, each checked once end to end:
an invalid field costs only that field (every settings layer), `completion.filters: false`,
`editor.partialIntervalMs`, `telemetry.logSource`, Copilot's `textDocument/didShowCompletion`,
`--log-file` and `-vv`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session
from tests.lsp.conftest import fake_session
from tests.lspclient import collect_partials

pytestmark = pytest.mark.timeout(90)

# One field of the wrong type and two good ones, in every layer below.
BAD_AND_GOOD = {"completion": {"debounceMs": "soon", "singleLineMaxTokens": 7}}
GOOD_STOP = "<|layer-stop|>"


async def settle(condition: Callable[[], object]) -> None:
    """Wait for something the server sends after its answer (bounded by the test timeout)."""
    while not condition():
        await asyncio.sleep(0.02)


def errors(session: Session) -> list[str]:
    return [m.message for m in session.client.messages if m.type == types.MessageType.Error]


async def check_good_fields_apply(session: Session) -> None:
    """The layer's good fields are in force, its bad one reported once and ignored."""
    session.engine.default = Reply(chunks=["ok"])
    uri = session.open("x = \n")
    assert [i.insert_text for i in await session.complete(uri, 0, 4, automatic=True)] == ["ok"]
    body = session.engine.requests[-1].body
    assert body["max_tokens"] == 7
    assert GOOD_STOP in body["stop"]
    reported = errors(session)
    assert len(reported) == 1, reported
    assert "debounce_ms" in reported[0] and "ignored" in reported[0]
    assert "single_line_max_tokens" not in reported[0]


async def test_a_bad_field_in_initialization_options_costs_only_that_field(
    session: Session,
) -> None:
    await session.initialize({**BAD_AND_GOOD, "prompt": {"stop": [GOOD_STOP]}})
    await check_good_fields_apply(session)


async def test_a_bad_field_in_workspace_configuration_costs_only_that_field(
    session: Session,
) -> None:
    await session.initialize()
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            {"copilot": {**BAD_AND_GOOD, "prompt": {"stop": [GOOD_STOP]}}}
        )
    )
    await session.stats()  # a round trip: the notification has been handled
    await check_good_fields_apply(session)


async def test_a_bad_field_in_the_settings_file_costs_only_that_field(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text(
        '[completion]\ndebounce_ms = "soon"\nsingle_line_max_tokens = 7\n\n'
        f'[prompt]\nstop = ["{GOOD_STOP}"]\n'
    )
    env = {**isolated_env, "COPILOT_LSP_SETTINGS_FILE": str(settings)}
    async with fake_session(env, tmp_path) as session:
        await session.initialize({"completion": {}})
        await check_good_fields_apply(session)


async def test_a_bad_field_in_the_environment_costs_only_that_field(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    env = {
        **isolated_env,
        "COPILOT_LSP_COMPLETION_DEBOUNCE_MS": "soon",
        "COPILOT_LSP_COMPLETION_SINGLE_LINE_MAX_TOKENS": "7",
        "COPILOT_LSP_PROMPT_STOP": json.dumps([GOOD_STOP]),
    }
    async with fake_session(env, tmp_path) as session:
        await session.initialize()
        await check_good_fields_apply(session)


@pytest.mark.parametrize(
    ("chunks", "filtered"),
    [
        # The model repeats itself: filters stop at the first repetition.
        (["\n    y = 1\n    y = 1\n    y = 1\n    return y"], "y = 1"),
        # The model writes the line that is already below the cursor: filters drop it.
        (["\n    print(f(1))"], None),
    ],
)
async def test_filters_off_keeps_what_the_filters_drop(
    session: Session, chunks: list[str], filtered: str | None
) -> None:
    source = "def f(x):\n    \n\nprint(f(1))\n"
    raw = chunks[0].removeprefix("\n    ")
    await session.initialize()
    session.engine.default = Reply(chunks=chunks)
    uri = session.open(source)
    assert [i.insert_text for i in await session.complete(uri, 1, 4)] == (
        [filtered] if filtered else []
    )
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams({"copilot": {"completion": {"filters": False}}})
    )
    await session.stats()
    assert [i.insert_text for i in await session.complete(uri, 1, 4)] == [raw]


STREAM_SOURCE = "def total(items):\n    \n\nprint(total([1]))\n"
STREAM_CHUNKS = ["\n    result", " = 0\n", "    result +=", " len(items)\n", "    return result\n"]
STREAM_FULL = "result = 0\n    result += len(items)\n    return result"


async def test_partial_interval_coalesces_notifications(session: Session) -> None:
    partials = collect_partials(session)
    await session.initialize({"editor": {"streaming": True, "partialIntervalMs": 1000}})

    async def after_the_first_partial(index: int) -> None:
        if index == 1:  # then the rest of the stream at once, faster than the interval
            await settle(lambda: partials)

    session.engine.default = Reply(chunks=STREAM_CHUNKS, gate=after_the_first_partial)
    uri = session.open(STREAM_SOURCE)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert [i.insert_text for i in await session.complete(uri, 1, 4)] == [STREAM_FULL]
    elapsed = loop.time() - started
    await settle(lambda: partials and partials[-1]["done"])
    growing = [p["text"] for p in partials if not p["done"]]
    # A second apart at least: however slow the host, no more than one per second of the
    # time this request took (with no interval, each of these chunks is its own partial:
    # test_streaming.py); the last state always goes out.
    assert growing[0] == "result"
    assert len(growing) <= 1 + int(elapsed), (growing, elapsed)
    assert all(STREAM_FULL.startswith(text) for text in growing)
    assert (partials[-1]["text"], partials[-1]["done"]) == (STREAM_FULL, True)


def log_records(session: Session) -> list[dict[str, Any]]:
    path = session.state_dir / "completions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("log_source", [True, False])
async def test_log_source_puts_the_completion_text_in_the_log(
    session: Session, log_source: bool
) -> None:
    await session.initialize({"telemetry": {"logSource": log_source}})
    session.engine.default = Reply(chunks=["value_42"])
    uri = session.open("x = \n")
    items = await session.complete(uri, 0, 4)
    assert [i.insert_text for i in items] == ["value_42"]
    completion_id = items[0].command.arguments[0]
    records = [r for r in log_records(session) if r["id"] == completion_id]
    assert len(records) == 1
    if log_source:
        assert records[0]["text"] == "value_42"
    else:
        assert "text" not in records[0]
        assert "value_42" not in (session.state_dir / "completions.jsonl").read_text()


async def test_copilots_did_show_completion_counts_as_displayed(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["shown_1"])
    uri = session.open("x = \n")
    items = await session.complete(uri, 0, 4)
    completion_id = items[0].command.arguments[0]
    command = {"title": "a", "command": methods.ACCEPT_COMMAND, "arguments": [completion_id]}
    item = {"insertText": "shown_1", "command": command}
    notify = session.client.protocol.notify
    notify(methods.COPILOT_DID_SHOW, {"item": item})
    notify(methods.COPILOT_DID_SHOW, {"item": item})  # a redraw: still one
    stats = await session.stats()
    assert stats["outcomes"]["displayed"] == 1
    await settle(lambda: {"id": completion_id, "displayed": True} in log_records(session))


async def test_log_file_and_vv_put_debug_logs_in_the_file(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    args = ["-vv", "--log-file", str(log)]
    async with fake_session(isolated_env, tmp_path, args) as session:
        session.engine.default = Reply(chunks=["ok"])
        await session.initialize()
        uri = session.open("x = \n")
        # The session works: nothing but JSON-RPC went to stdout.
        assert [i.insert_text for i in await session.complete(uri, 0, 4)] == ["ok"]
    text = log.read_text()
    assert " DEBUG pygls" in text  # -vv: pygls' own message log too
    assert " DEBUG copilot_lsp" in text or " INFO copilot_lsp" in text
    assert "textDocument/inlineCompletion" in text


async def test_log_file_without_v_holds_warnings_only(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    async with fake_session(isolated_env, tmp_path, ["--log-file", str(log)]) as session:
        await session.initialize({"completion": {"maxTokens": "many"}})
        uri = session.open("x = \n")
        assert [i.insert_text for i in await session.complete(uri, 0, 4)] == ["pass"]
    lines = log.read_text().splitlines()
    assert any(" WARNING copilot_lsp" in line and "max_tokens" in line for line in lines), lines
    assert not [line for line in lines if " DEBUG " in line or " INFO " in line]
