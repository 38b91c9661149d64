"""Next-edit suggestions over stdio (Copilot's `textDocument/copilotInlineEdit`), against the
scripted engine answering a rewritten window."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from lsprotocol import types

from copilot_lsp.client.driver import plain
from copilot_lsp.lsp import methods
from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

URI = "file:///work/shapes.py"
TEXT = (
    "class Point:\n"
    "    def __init__(self, x, y):\n"
    "        self.x = x\n"
    "        self.y = y\n"
    "\n"
    "    def norm(self):\n"
    "        return (self.x ** 2 + self.y ** 2) ** 0.5\n"
)
ON = {"nextEditSuggestions": {"enabled": True}}


def rewritten(text: str = TEXT) -> list[str]:
    """The model's answer: the window (the whole file here) with one more attribute, each
    line ended; the engine stops at the format's closing header, which it does not send."""
    lines = text.split("\n")
    lines.insert(4, "        self.z = z")
    return ["\n".join(lines[:4]) + "\n", "\n".join(lines[4:]) + "\n"]


def ask(
    session: Session, version: int, line: int = 1, character: int = 30, uri: str = URI
) -> asyncio.Future[Any]:
    params = {
        "textDocument": {"uri": uri, "version": version},
        "position": {"line": line, "character": character},
    }
    return asyncio.ensure_future(
        session.client.protocol.send_request_async(methods.INLINE_EDIT, params)
    )


async def edits(future: asyncio.Future[Any]) -> list[dict[str, Any]]:
    answer = plain(await asyncio.wait_for(future, 20))
    assert isinstance(answer["edits"], list)
    return list(answer["edits"])


def change(session: Session, version: int, line: int, character: int, text: str) -> None:
    position = types.Position(line, character)
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(version=version, uri=URI),
            content_changes=[
                types.TextDocumentContentChangePartial(types.Range(position, position), text)
            ],
        )
    )


async def test_the_rewritten_window_comes_back_as_one_edit_away_from_the_cursor(
    session: Session,
) -> None:
    result = await session.initialize(ON)
    provider = result.capabilities.execute_command_provider
    assert provider is not None and methods.ACCEPT_NEXT_EDIT_COMMAND in provider.commands
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    (edit,) = await edits(ask(session, 1))
    assert edit["text"] == "        self.z = z\n"
    position = {"line": 4, "character": 0}
    assert edit["range"] == {"start": position, "end": position}
    assert edit["textDocument"] == {"uri": URI, "version": 1}
    assert edit["command"]["command"] == methods.ACCEPT_NEXT_EDIT_COMMAND
    body = session.engine.requests[0].body
    assert body["temperature"] == 0.0
    assert "# end" in body["stop"]  # the embedded-style format: the fake model fits no other
    assert "# Lines 1-8, before the next edit:\n" + TEXT in body["prompt"]
    assert body["max_tokens"] > len(TEXT) // 4


async def test_a_version_the_server_does_not_hold_gets_no_edits(session: Session) -> None:
    await session.initialize(ON)
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    assert await edits(ask(session, 7)) == []
    change(session, 2, 0, 0, "# shapes\n")
    assert await edits(ask(session, 1)) == []
    assert session.engine.requests == []


async def test_off_by_default_no_edits_and_no_engine_request(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    assert await edits(ask(session, 1)) == []
    assert session.engine.requests == []


async def test_copilots_top_level_setting_turns_it_on(session: Session) -> None:
    await session.initialize()
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=ON)
    )
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    assert len(await edits(ask(session, 1))) == 1


async def held(session: Session) -> asyncio.Event:
    """The engine holds its answer until the returned event is set."""
    released = asyncio.Event()

    async def gate(index: int) -> None:
        await released.wait()

    session.engine.default = Reply(chunks=rewritten(), gate=gate)
    return released


async def test_a_newer_keystroke_cancels_the_request_and_its_engine_stream(
    session: Session,
) -> None:
    await session.initialize(ON)
    released = await held(session)
    session.open(TEXT, URI)
    pending = ask(session, 1)
    await until(lambda: len(session.engine.requests) == 1)
    change(session, 2, 6, 0, " ")
    assert await edits(pending) == []
    released.set()
    await until(lambda: session.engine.requests[0].disconnected, what="engine stream closed")


async def test_a_document_closed_mid_request_gets_no_edits_and_the_server_goes_on(
    session: Session,
) -> None:
    await session.initialize(ON)
    released = await held(session)
    session.open(TEXT, URI)
    pending = ask(session, 1)
    await until(lambda: len(session.engine.requests) == 1)
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(URI))
    )
    assert await edits(pending) == []
    released.set()
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    assert len(await edits(ask(session, 1))) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(chunks=rewritten()[:1], finish_reason="length"),  # cut by the token limit
        Reply(chunks=["%%%% <<<< garbage >>>> %%%%\n"]),
        Reply(chunks=[TEXT + "\n"]),  # nothing changed
    ],
    ids=["unterminated", "garbage", "unchanged"],
)
async def test_an_answer_that_is_not_a_usable_rewrite_gets_no_edits(
    session: Session, reply: Reply
) -> None:
    await session.initialize(ON)
    session.engine.default = reply
    session.open(TEXT, URI)
    assert await edits(ask(session, 1)) == []
    assert len(session.engine.requests) == 1
    assert (await session.stats())["next_edits"]["outcomes"].get(
        "empty"
    ) == 1  # answered, nothing offered


@pytest.mark.parametrize(
    "tail",
    [
        "        self.w = w\n",  # copies on, line after line, past any rewrite of the window
        "# +++ b/shapes.py\n",  # writes the prompt's history headers
    ],
    ids=["too-many-lines", "prompt-repeated"],
)
async def test_an_answer_that_runs_away_is_cut_short_and_its_stream_closed(
    session: Session, tail: str
) -> None:
    """Read to its token limit, such an answer would take 400 chunks (2 s here); the server
    stops reading once it cannot be a rewrite and the engine sees the stream closed."""
    await session.initialize(ON)
    session.engine.default = Reply(chunks=[TEXT, *[tail] * 400], delay_s=0.005)
    session.open(TEXT, URI)
    assert await edits(ask(session, 1)) == []
    (request,) = session.engine.requests
    await until(lambda: request.disconnected, what="engine stream closed")
    assert not request.finished and request.chunks_sent < 100
    assert (await session.stats())["next_edits"]["outcomes"].get("empty") == 1


def scored(probability: float) -> Reply:
    """`rewritten()` with its tokens' log-probabilities: the copied lines sure, the added
    line (the edit) at `probability`."""
    first, second = rewritten()
    added, rest = second.split("\n", 1)
    logprobs = [[(first, -0.01)], [(added + "\n", math.log(probability)), (rest, -0.01)]]
    return Reply(chunks=rewritten(), logprobs=logprobs)


async def test_an_edit_the_model_is_not_sure_of_is_not_offered(session: Session) -> None:
    await session.initialize(ON)
    session.engine.replies = [scored(0.9), scored(0.2)]
    session.open(TEXT, URI)
    (edit,) = await edits(ask(session, 1))
    assert edit["text"] == "        self.z = z\n"
    assert await edits(ask(session, 1)) == []  # the same edit, written unsure
    assert [request.body["logprobs"] for request in session.engine.requests] == [0, 0]
    stats = await session.stats()
    edits_stats = stats["next_edits"]
    assert (edits_stats["requests"], edits_stats["shown"], edits_stats["quiet"]) == (2, 1, 1)
    assert edits_stats["latency_ms"]["n"] == 2 and edits_stats["latency_ms"]["p90"] > 0
    assert stats["outcomes"] == {} and stats["stages"] == {}  # no inline completion asked


async def test_the_confidence_gate_off_asks_for_no_logprobs(session: Session) -> None:
    await session.initialize({"nextEditSuggestions": {"enabled": True, "minConfidence": 0}})
    session.engine.default = scored(0.2)
    session.open(TEXT, URI)
    assert len(await edits(ask(session, 1))) == 1
    assert "logprobs" not in session.engine.requests[0].body


async def test_shown_and_accepted_are_recorded_and_the_applied_edit_is_marked_in_history(
    session: Session,
) -> None:
    await session.initialize(ON)
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    (edit,) = await edits(ask(session, 1))
    session.client.protocol.notify(
        methods.DID_SHOW_INLINE_EDIT, {"item": {"command": edit["command"]}}
    )
    session.client.protocol.notify(methods.DID_FOCUS, {"textDocument": {"uri": URI}})
    change(session, 2, 4, 0, edit["text"])  # the editor applies it, then runs its command
    accepted = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=edit["command"]["command"], arguments=edit["command"]["arguments"]
        )
    )
    assert accepted is True
    outcomes = (await session.stats())["next_edits"]["outcomes"]
    assert outcomes["accepted"] == 1 and outcomes["displayed"] == 1
    session.engine.default = Reply(chunks=["\n"])
    assert await edits(ask(session, 2, 4, 18)) == []
    prompt = session.engine.requests[1].body["prompt"]
    assert "# (accepted suggestion)\n# --- a/shapes.py\n" in prompt
    assert "# +        self.z = z\n" in prompt


async def test_applying_the_edit_without_its_command_counts_as_accepted_once(
    session: Session,
) -> None:
    """copilotlsp-nvim applies the edit and never runs its command: the change that applies
    it is the accept. A client that runs the command as well is still counted once."""
    await session.initialize(ON)
    session.engine.default = Reply(chunks=rewritten())
    session.open(TEXT, URI)
    (edit,) = await edits(ask(session, 1))
    session.client.protocol.notify(
        methods.DID_SHOW_INLINE_EDIT, {"item": {"command": edit["command"]}}
    )
    change(session, 2, 4, 0, edit["text"])
    outcomes = (await session.stats())["next_edits"]["outcomes"]
    assert outcomes["accepted"] == 1 and outcomes["displayed"] == 1
    accepted = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=edit["command"]["command"], arguments=edit["command"]["arguments"]
        )
    )
    assert accepted is True
    assert (await session.stats())["next_edits"]["outcomes"]["accepted"] == 1


def fenced(probability: float, text: str = TEXT) -> Reply:
    """`scored(probability)` in the `fenced` format: the prompt ends with the window's first
    line, so the engine writes the rest of the answer (from that line's break on)."""
    whole = scored(probability)
    first = text.split("\n", 1)[0]
    assert whole.chunks[0].startswith(first) and whole.logprobs is not None
    rest = whole.chunks[0].removeprefix(first)
    logprobs = [[(rest, -0.01)], *whole.logprobs[1:]]
    return Reply(chunks=[rest, *whole.chunks[1:]], logprobs=logprobs)


async def test_a_format_that_starts_the_answer_counts_that_start_as_the_answers(
    session: Session,
) -> None:
    """`fenced` (the embedded model's) ends the prompt with the window's first line: the
    server reads the answer as that line and the model's text, for the diff (an unchanged
    copy is no edit) and for the confidence of the change."""
    await session.initialize({"nextEditSuggestions": {"enabled": True, "format": "fenced"}})
    # the window's lines, each ended (its last is the empty one after TEXT's final break)
    unchanged = Reply(chunks=[TEXT.removeprefix("class Point:") + "\n"])
    session.engine.replies = [fenced(0.9), unchanged, fenced(0.2)]
    session.open(TEXT, URI)
    (edit,) = await edits(ask(session, 1))
    assert edit["text"] == "        self.z = z\n"
    position = {"line": 4, "character": 0}
    assert edit["range"] == {"start": position, "end": position}
    body = session.engine.requests[0].body
    assert body["prompt"].endswith("# Lines 1-8, after the next edit:\n```\nclass Point:")
    assert "```" in body["stop"]
    assert await edits(ask(session, 1)) == []  # the window copied as it is: no edit
    assert await edits(ask(session, 1)) == []  # the edit written unsure
    assert (await session.stats())["next_edits"]["quiet"] == 2


# A CRLF document with text beyond ASCII before the edits (é: one UTF-16 unit, 🎉: two): the
# edit's columns must be UTF-16 units, its text must bring CRLF back.
WIDE = "".join(f"label_{n} = 'café 🎉 {n}'  # ñ\r\n" for n in range(30))


def wide_rewrite(first: int, last: int, changed: dict[int, str]) -> list[str]:
    """The model's answer for the window of lines first..last (the fake's `plain` format:
    the window's lines, each ended by `\\n`), lines in `changed` replaced."""
    lines = WIDE.split("\r\n")
    window = [changed.get(n, lines[n]) for n in range(first, last + 1)]
    return ["\n".join(window) + "\n"]


def applied(text: str, edit: dict[str, Any]) -> str:
    from copilot_lsp.positions import Position, offset_at

    start, end = (
        offset_at(text, Position(edit["range"][k]["line"], edit["range"][k]["character"]), "utf-16")
        for k in ("start", "end")
    )
    return text[:start] + edit["text"] + text[end:]


@pytest.mark.parametrize(
    ("cursor", "first", "last", "line"),
    [(0, 0, 10, 8), (29, 19, 30, 27)],
    ids=["window-at-the-start", "window-at-the-end"],
)
async def test_a_crlf_document_beyond_ascii_gets_an_edit_that_applies_exactly(
    session: Session, cursor: int, first: int, last: int, line: int
) -> None:
    """The window clamped at the start or at the end of the file (the last line is the
    empty one after the final CRLF); the model changes a line after the emoji: the client,
    applying the edit in UTF-16 units, gets the document the model wrote, CRLF kept."""
    await session.initialize(ON)
    old = WIDE.split("\r\n")[line]
    new = old.replace("# ñ", "# ñandú") + "\nextra = 'ü'"  # a longer line and one more
    session.engine.default = Reply(chunks=wide_rewrite(first, last, {line: new}))
    session.open(WIDE, URI)
    (edit,) = await edits(ask(session, 1, line=cursor, character=0))
    assert f"# Lines {first + 1}-{last + 1}, before" in session.engine.requests[0].body["prompt"]
    # Columns in UTF-16 units: the emoji counts two, so a code-point count is one short.
    end_of_old = {"line": line, "character": len(old.encode("utf-16-le")) // 2}
    assert edit["range"]["start"] == end_of_old == {"line": line, "character": len(old) + 1}
    assert "\r\n" in edit["text"] and "\n" not in edit["text"].replace("\r\n", "")
    expected = WIDE.replace(old + "\r\n", new.replace("\n", "\r\n") + "\r\n")
    assert applied(WIDE, edit) == expected


async def test_an_open_env_file_never_lends_its_lines_to_a_prompt(session: Session) -> None:
    key = "sk-proj-" + "Zq4" * 10
    await session.initialize(ON)
    session.engine.default = Reply(chunks=rewritten())
    env_uri = "file:///work/.env"
    session.open("DEBUG=1\n", env_uri, "dotenv")
    position = types.Position(1, 0)
    for version, text in enumerate([f"OPENAI_API_KEY={key}\n", "DB_PASSWORD=hunter22\n"], 2):
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(version=version, uri=env_uri),
                content_changes=[
                    types.TextDocumentContentChangePartial(types.Range(position, position), text)
                ],
            )
        )
    session.open(TEXT, URI)
    change(session, 2, 3, 18, "  # y")  # an edit of the code: the history holds it
    await edits(ask(session, 2))
    await session.complete(URI, 6, 8)  # a completion too: recent edits are its snippets
    assert len(session.engine.requests) == 2
    for request in session.engine.requests:
        prompt = request.body["prompt"]
        assert key not in prompt and "hunter22" not in prompt and ".env" not in prompt
    assert "# y" in session.engine.requests[0].body["prompt"]
