"""The server over stdio: capabilities, completions, encodings, cancellation, faults."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import free_port, until
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

FIB = (
    'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n    \n\nprint(fibonacci(3))\n'
)
BODY = [
    "\n    if n < 2:\n",
    "        return n\n",
    "    return fibonacci(n - 1)",
    " + fibonacci(n - 2)\n",
]
AFTER_BODY = ["\n", "def unrelated():\n", "    pass\n"] * 20


async def test_initialize_advertises_inline_completion(session: Session) -> None:
    result = await session.initialize()
    capabilities = result.capabilities
    assert capabilities.inline_completion_provider is not None
    sync = capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert sync.open_close is True
    assert capabilities.execute_command_provider is not None
    assert methods.ACCEPT_COMMAND in capabilities.execute_command_provider.commands
    assert capabilities.position_encoding == types.PositionEncodingKind.Utf16


async def test_multiline_completion_is_cut_at_block_end_and_stream_closed(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=BODY + AFTER_BODY, delay_s=0.01)
    uri = session.open(FIB)
    items = await session.complete(uri, 2, 4)
    assert len(items) == 1
    assert items[0].insert_text == (
        "if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)"
    )
    assert items[0].range == types.Range(types.Position(2, 4), types.Position(2, 4))
    assert items[0].command.command == methods.ACCEPT_COMMAND
    request = session.engine.requests[0]
    assert request.body["stream"] is True
    assert request.body["prompt"] == FIB[: FIB.index("    \n") - 1]  # trailing blanks held back
    # The answer was final at `def unrelated`: the server hung up instead of reading on.
    await until(lambda: request.disconnected)
    assert request.chunks_sent < len(BODY + AFTER_BODY)


async def test_single_line_completion_stops_at_newline(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["fib", "onacci(10)", "\nprint(2)\n"])
    uri = session.open("x = 1\nresult = \n")
    items = await session.complete(uri, 1, 9)
    assert [item.insert_text for item in items] == ["fibonacci(10)"]
    assert session.engine.requests[0].body["prompt"] == "x = 1\nresult ="


async def test_closers_right_of_the_cursor_are_replaced_not_duplicated(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["'😀', 2)", "\n"])
    uri = session.open("x = foo(😀, )\n")
    column = len("x = foo(😀, ".encode("utf-16-le")) // 2
    items = await session.complete(uri, 0, column)
    assert items[0].insert_text == "'😀', 2)"
    assert items[0].range == types.Range(types.Position(0, column), types.Position(0, column + 1))


async def test_utf8_negotiated_positions_and_incremental_edits(session: Session) -> None:
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8]
        )
    )
    result = await session.initialize(capabilities=capabilities)
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    session.engine.default = Reply(chunks=["len(s)"])
    uri = session.open("s = '😀漢'\n")
    line = "s = '😀漢'"
    end = len(line.encode("utf-8"))
    # Append ` + n = ` at the end of line 0, then replace the emoji with `é`.
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, end), types.Position(0, end)),
                    text="; n = ",
                ),
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 5), types.Position(0, 9)),
                    text="é",
                ),
            ],
        )
    )
    expected_line = "s = 'é漢'; n = "
    items = await session.complete(uri, 0, len(expected_line.encode("utf-8")))
    assert session.engine.requests[0].body["prompt"] == expected_line.rstrip()
    assert items[0].insert_text == "len(s)"
    cursor = types.Position(0, len(expected_line.encode("utf-8")))
    assert items[0].range == types.Range(cursor, cursor)


async def test_utf16_range_after_emoji(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["'ok'"])
    uri = session.open("a = '😀'; b = \n")
    column = len("a = '😀'; b = ".encode("utf-16-le")) // 2
    items = await session.complete(uri, 0, column)
    assert session.engine.requests[0].body["prompt"] == "a = '😀'; b ="
    assert items[0].range.start == types.Position(0, column)


async def test_engine_down_is_reported_once_and_recovery_is_automatic(session: Session) -> None:
    await session.initialize(engine_url=f"http://127.0.0.1:{free_port()}/v1")
    uri = session.open("x = \n")
    for _ in range(3):
        assert await session.complete(uri, 0, 4) == []
    errors = [m for m in session.client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1
    assert "engine up" in errors[0].message
    session.engine.default = Reply(chunks=["42"])
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"copilot": {"engine": {"url": session.engine.url}}}
        )
    )
    items = await session.complete(uri, 0, 4)
    assert [item.insert_text for item in items] == ["42"]
    infos = [m for m in session.client.messages if m.type == types.MessageType.Info]
    assert len(infos) == 1 and "answering" in infos[0].message


async def test_engine_faults_give_empty_answers_and_the_server_lives_on(
    session: Session,
) -> None:
    await session.initialize()
    session.engine.replies = [
        Reply(status=500),
        Reply(status=429),
        Reply(raw_events=['{"choices": [{"text": "ab', "[DONE]"]),
        Reply(chunks=["abc", "def", "ghi"], cut_after=2),
        Reply(raw_events=['{"error": {"message": "boom"}}']),
        Reply(chunks=["recovered"]),
    ]
    uri = session.open("value = \n")
    for _ in range(5):
        assert await session.complete(uri, 0, 8) == []
    items = await session.complete(uri, 0, 8)
    assert [item.insert_text for item in items] == ["recovered"]
    errors = [m for m in session.client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1, [m.message for m in errors]
    stats = await session.stats()
    assert stats["outcomes"]["error"] == 5
    assert stats["outcomes"]["shown"] == 1


async def test_newer_request_for_the_same_document_cancels_the_older(session: Session) -> None:
    await session.initialize()
    session.engine.replies = [
        Reply(chunks=["slow"] * 50, delay_s=0.05),
        Reply(chunks=["fast"]),
    ]
    uri = session.open("x = \n")
    older = session.request(uri, 0, 4)
    await until(lambda: session.engine.requests and session.engine.requests[0].chunks_sent >= 2)
    newer = await session.complete(uri, 0, 4)
    assert [item.insert_text for item in newer] == ["fast"]
    assert list((await asyncio.wait_for(older, 10)).items) == []
    await until(lambda: session.engine.requests[0].disconnected)
    stats = await session.stats()
    assert stats["outcomes"].get("superseded") == 1


async def test_cancel_request_stops_the_engine_stream(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["tick"] * 100, delay_s=0.05)
    uri = session.open("x = \n")
    pending = session.request(uri, 0, 4, msg_id="to-cancel")
    await until(lambda: session.engine.requests and session.engine.requests[0].chunks_sent >= 2)
    session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="to-cancel"))
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(pending, 10)
    assert raised.value.code == -32800
    await until(lambda: session.engine.requests[0].disconnected)
    assert session.engine.requests[0].chunks_sent < 100
    stats = await session.stats()
    assert stats["outcomes"].get("cancelled") == 1


async def test_debounce_lets_typing_supersede_without_engine_requests(session: Session) -> None:
    await session.initialize({"completion": {"debounceMs": 300}})
    session.engine.default = Reply(chunks=["done"])
    uri = session.open("x = \n")
    first = session.request(uri, 0, 4, automatic=True)
    second = session.request(uri, 0, 4, automatic=True)
    third = await asyncio.wait_for(session.request(uri, 0, 4, automatic=True), 10)
    assert [item.insert_text for item in third.items] == ["done"]
    assert list((await first).items) == [] and list((await second).items) == []
    assert len(session.engine.requests) == 1


async def test_mid_word_automatic_request_is_skipped(session: Session) -> None:
    await session.initialize()
    uri = session.open("value = compute(x)\n")
    assert await session.complete(uri, 0, 10, automatic=True) == []
    assert session.engine.requests == []


async def test_stats_accept_and_log_hold_no_source(session: Session) -> None:
    await session.initialize({"engine": {"apiKey": "sk-secret-123"}})
    session.engine.default = Reply(chunks=["secret_value_42"])
    uri = session.open("zebra = \n")
    shown = []
    for _ in range(3):
        shown += await session.complete(uri, 0, 8)
    assert session.engine.requests[0].headers["authorization"] == "Bearer sk-secret-123"
    stats = await session.stats()
    assert stats["stages"]["first_token"]["n"] == 3
    for stage in ("debounced", "prompt_built", "request_sent", "first_token", "finished"):
        row = stats["stages"][stage]
        assert row["p50"] <= row["p90"] <= row["p99"]
    assert stats["stages"]["prompt_built"]["p50"] <= stats["stages"]["finished"]["p50"]
    command = shown[0].command
    accepted = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )
    assert accepted is True
    log = (session.state_dir / "completions.jsonl").read_text()
    records = [json.loads(line) for line in log.splitlines()]
    assert len([r for r in records if r.get("outcome") == "shown"]) == 3
    assert {"id": command.arguments[0], "feedback": "accepted", "chars_accepted": 15} in records
    assert "secret_value_42" not in log and "zebra" not in log and "sk-secret" not in log


async def test_unknown_document_is_a_clear_error(session: Session) -> None:
    await session.initialize()
    with pytest.raises(JsonRpcException) as raised:
        await session.complete("file:///nowhere.py", 0, 0)
    assert "not open" in str(raised.value)
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    assert [i.insert_text for i in await session.complete(uri, 0, 4)] == ["1"]


async def test_invalid_options_fall_back_to_defaults_with_a_message(session: Session) -> None:
    await session.initialize({"completion": {"maxTokens": "many"}})
    errors = [m for m in session.client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1 and "max_tokens" in errors[0].message
    assert "ignored" in errors[0].message
    session.engine.default = Reply(chunks=["ok"])
    uri = session.open("x = \n")
    assert [i.insert_text for i in await session.complete(uri, 0, 4)] == ["ok"]


@pytest.mark.parametrize("editor", ["neovim@v0.11.0", "visual-studio-code@v1.65.2"])
async def test_workspace_configuration_overrides_initialization_options(
    session: Session, editor: str
) -> None:
    """Real editors' captured capabilities: the server pulls section `copilot` at start."""
    session.client.set_configuration(
        {"completion": {"singleLineMaxTokens": 7}, "prompt": {"stop": ["<|end|>"]}},
        section="copilot",
    )
    await session.initialize(
        {"completion": {"singleLineMaxTokens": 5, "temperature": 0.2}},
        capabilities=client_capabilities(editor),
    )
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    for _ in range(50):  # the pull is asynchronous: wait until it has landed
        await session.complete(uri, 0, 4)
        if session.engine.requests[-1].body["max_tokens"] == 7:
            break
        await asyncio.sleep(0.05)
    body = session.engine.requests[-1].body
    assert body["max_tokens"] == 7  # workspace/configuration beats initializationOptions
    assert body["temperature"] == 0.2  # what the higher layer leaves unset still applies
    assert body["stop"] == ["<|endoftext|>", "<|im_end|>", "<|end|>"]  # the family's, then ours


async def test_prompt_carries_definitions_from_other_open_documents(session: Session) -> None:
    await session.initialize(capabilities=types.ClientCapabilities())
    session.engine.default = Reply(chunks=["\n    return total"])
    session.open(
        "def shipping_cost(weight, rate):\n    return weight * rate\n",
        uri="file:///work/util.py",
    )
    uri = session.open(
        "def order_total(items):\n    total = shipping_cost(3, 2)\n    \n",
        uri="file:///work/shop.py",
    )
    items = await session.complete(uri, 2, 4)
    assert [i.insert_text for i in items] == ["return total"]
    prompt = session.engine.requests[0].body["prompt"]
    assert prompt.startswith("# definition (util.py):\n# def shipping_cost(weight, rate):\n")
    assert prompt.endswith("total = shipping_cost(3, 2)")


async def test_typing_through_a_suggestion_needs_no_engine_request(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["compute(1, 2)"])
    uri = session.open("x = \n")
    assert [i.insert_text for i in await session.complete(uri, 0, 4, automatic=True)] == [
        "compute(1, 2)"
    ]
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 4), types.Position(0, 4)), text="comp"
                )
            ],
        )
    )
    items = await session.complete(uri, 0, 8, automatic=True)
    assert [i.insert_text for i in items] == ["ute(1, 2)"]
    assert items[0].range.start == types.Position(0, 8)
    assert len(session.engine.requests) == 1
