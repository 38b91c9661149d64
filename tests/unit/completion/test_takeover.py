"""A keystroke that types what the open engine stream has produced takes that stream over."""

from __future__ import annotations

import asyncio

import pytest

from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.completion.stream import ADOPTION_GRACE_S, EngineStream
from copilot_lsp.completion.suggestion import Suggestion
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline
from tests.fakes.scripted import ScriptedEngine
from tests.unit.completion.conftest import service_for

URI = "file:///a.py"
TEXT = "def f(n):\n    \n"
CURSOR = TEXT.index("    \n") + 4
CHUNKS = ["\n    return", " n", " + 1\n", "\n", "def g():\n"]


def typed(chars: str) -> tuple[str, int]:
    return TEXT[:CURSOR] + chars + TEXT[CURSOR:], CURSOR + len(chars)


def adopting(adopt: bool = True) -> Settings:
    """No debounce; a typed stream taken over by the newer request, or (False) not."""
    return Settings.model_validate({"completion": {"debounce_ms": 0, "adopt_typed_streams": adopt}})


def request(
    service: CompletionService,
    text: str = TEXT,
    offset: int = CURSOR,
    partials: list[Suggestion] | None = None,
) -> asyncio.Future[Suggestion | None]:
    return asyncio.ensure_future(
        service.complete(
            URI,
            "python",
            text,
            offset,
            automatic=True,
            on_partial=None if partials is None else partials.append,
        )
    )


async def streamed(engine: ScriptedEngine, chunks: int) -> None:
    while engine.sent < chunks:
        await asyncio.sleep(0.005)


async def cancelled_after_its_first_chunk(
    service: CompletionService, engine: ScriptedEngine
) -> None:
    """A request cancelled by the editor (`$/cancelRequest`, as editors send it before the
    next keystroke's request) once its stream has produced something."""
    older = request(service)
    await streamed(engine, 1)
    older.cancel()
    with pytest.raises(asyncio.CancelledError):
        await older


async def test_typing_what_the_stream_produced_keeps_the_stream_for_the_newer_request() -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.05)
    service, timelines, _ = service_for(engine, adopting())
    older = request(service)
    await streamed(engine, 1)
    partials: list[Suggestion] = []
    text, offset = typed("ret")
    newer = await request(service, text, offset, partials)
    assert await older is None
    assert newer is not None
    assert (newer.text, newer.offset) == ("urn n + 1", offset)
    assert len(engine.requests) == 1, "the newer keystroke sent a prompt of its own"
    assert service.inflight == 0
    # The editor saw the rest grow under the newer request's own id, at its own cursor,
    # from what the stream had produced when the keystroke came.
    assert partials and {(p.id, p.offset) for p in partials} == {(newer.id, offset)}
    assert partials[0].text == "urn"
    assert all("urn n + 1".startswith(p.text) for p in partials)
    engine_side, answer = timelines
    assert (engine_side.outcome, engine_side.tokens) == ("adopted", 0)
    assert (answer.outcome, answer.mode, answer.id) == ("shown", "adopted", newer.id)
    assert answer.tokens == engine.sent == 5  # the stream's tokens, up to the cut at `def g`
    assert answer.chars_shown == len("urn n + 1")
    # Typing on into the answer is type-through, against the stream's suggestion.
    text, offset = typed("return n")
    after = await request(service, text, offset)
    assert after is not None and after.text == " + 1"
    assert len(engine.requests) == 1


async def test_the_editors_cancel_before_the_next_keystroke_does_not_end_the_stream() -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.05)
    service, timelines, _ = service_for(engine, adopting())
    await cancelled_after_its_first_chunk(service, engine)
    await asyncio.sleep(ADOPTION_GRACE_S / 3)
    newer = await request(service, *typed("r"))
    assert newer is not None and newer.text == "eturn n + 1"
    assert len(engine.requests) == 1 and engine.closed == 1
    assert [t.outcome for t in timelines] == ["adopted", "shown"]


async def test_a_cancelled_stream_nobody_takes_over_stops_after_the_grace() -> None:
    engine = ScriptedEngine(["\n    return"] + [" n"] * 100, pause=0.02)
    service, timelines, _ = service_for(engine, adopting())
    await cancelled_after_its_first_chunk(service, engine)
    await asyncio.sleep(ADOPTION_GRACE_S * 2)
    assert engine.closed == 1
    assert engine.sent < 30
    assert [t.outcome for t in timelines] == ["cancelled"]
    assert service.inflight == 0


@pytest.mark.parametrize(
    ("chars", "adopt", "chunks_first"),
    [
        ("x", True, 1),  # typed something else than the stream
        ("r", True, 0),  # the stream has produced nothing yet to compare with
        ("r", False, 1),  # the setting is off
    ],
)
async def test_otherwise_the_newer_keystroke_asks_the_engine_again(
    chars: str, adopt: bool, chunks_first: int
) -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.05)
    service, timelines, _ = service_for(engine, adopting(adopt))
    older = request(service)
    await streamed(engine, chunks_first)
    if not chunks_first:
        while not engine.requests:
            await asyncio.sleep(0.005)
    engine.chunks = [" = 1\n"]
    newer = await request(service, *typed(chars))
    assert await older is None
    assert len(engine.requests) == 2
    assert engine.requests[1].prompt.endswith(chars)
    assert engine.closed == 2
    assert newer is not None and newer.text == " = 1"
    assert [t.outcome for t in timelines] == ["superseded", "shown"]


async def test_an_explicit_request_gets_a_stream_of_its_own() -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.05)
    service, _, _ = service_for(engine, adopting())
    older = request(service)
    await streamed(engine, 1)
    text, offset = typed("ret")
    await service.complete(URI, "python", text, offset, automatic=False)
    assert await older is None
    assert len(engine.requests) == 2


async def test_a_stream_taken_over_twice_answers_the_latest_keystroke() -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.05)
    service, timelines, _ = service_for(engine, adopting())
    first = request(service)
    await streamed(engine, 1)
    second = request(service, *typed("r"))
    await asyncio.sleep(0)
    third = await request(service, *typed("re"))
    assert await first is None and await second is None
    assert third is not None and third.text == "turn n + 1"
    assert len(engine.requests) == 1
    outcomes = sorted((t.mode, t.outcome, t.tokens) for t in timelines)
    assert outcomes == [
        ("adopted", "shown", 5),
        ("adopted", "superseded", 0),
        ("multi-line", "adopted", 0),
    ]


def test_only_characters_typed_at_the_streams_cursor_count() -> None:
    timeline = Timeline.start(URI, "python", "automatic")
    flight = EngineStream(URI, TEXT, CURSOR, timeline, automatic=True)
    flight.relay(Suggestion(timeline.id, "return n", CURSOR, CURSOR, timeline))
    assert flight.typed_since(*typed("ret")) == "ret"
    assert flight.typed_since(*typed("return n")) == "return n"
    assert flight.typed_since(*typed("return n + 1")) is None  # past what the stream knows
    assert flight.typed_since(*typed("rx")) is None
    assert flight.typed_since(TEXT, CURSOR) is None  # nothing typed
    elsewhere = "#" + TEXT[:CURSOR] + "r" + TEXT[CURSOR:]
    assert flight.typed_since(elsewhere, CURSOR + 2) is None


async def test_a_cancelled_stream_that_ends_within_the_grace_still_answers_typing_along() -> None:
    engine = ScriptedEngine(list(CHUNKS), pause=0.01)
    service, timelines, _ = service_for(engine, adopting())
    await cancelled_after_its_first_chunk(service, engine)
    while not timelines:
        await asyncio.sleep(0.005)
    assert [t.outcome for t in timelines] == ["cancelled"]
    newer = await request(service, *typed("ret"))
    assert newer is not None and newer.text == "urn n + 1"
    assert len(engine.requests) == 1
    assert timelines[-1].mode == "type-through"
