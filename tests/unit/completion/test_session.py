"""A document's session: the newest request, its stream superseded or typed along with, the
suggestion on screen, the live view, closing (completion/session.py, completion/live.py)."""

from __future__ import annotations

import asyncio

from copilot_lsp.completion.live import LiveView, PartialUpdate
from copilot_lsp.completion.request import InlineRequest, inline_request
from copilot_lsp.completion.session import DocumentSession, Sessions
from copilot_lsp.completion.stream import EngineStream, Follower
from copilot_lsp.completion.suggestion import Suggestion
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline

URI = "file:///a.py"
TEXT = "def f(n):\n    \n"
CURSOR = TEXT.index("    \n") + 4


def typed(chars: str) -> tuple[str, int]:
    return TEXT[:CURSOR] + chars + TEXT[CURSOR:], CURSOR + len(chars)


async def running_stream(session: DocumentSession, produced: str = "") -> EngineStream:
    timeline = Timeline.start(URI, "python", "automatic")
    stream = EngineStream(URI, TEXT, CURSOR, timeline, automatic=True)
    stream.follow(Follower(timeline))
    stream.task = asyncio.ensure_future(asyncio.sleep(10))
    if produced:
        stream.relay(Suggestion(timeline.id, produced, CURSOR, CURSOR, timeline))
    session.stream = stream
    return stream


def request(text: str, offset: int, *, automatic: bool = True) -> InlineRequest:
    return inline_request(
        URI, "python", text, offset, automatic=automatic, options=Settings().completion
    )


async def test_each_request_is_the_newest_and_keeps_its_version() -> None:
    session = DocumentSession(URI)
    first = session.begin(3)
    second = session.begin(4)
    assert not session.is_newest(first) and session.is_newest(second)
    assert session.version == 4
    session.begin(None)  # a caller that tracks no versions leaves the last one
    assert session.version == 4


async def test_typing_along_keeps_the_stream_anything_else_stops_it() -> None:
    session = DocumentSession(URI)
    stream = await running_stream(session, "return n")
    assert session.supersede(request(*typed("ret")), adopt=True) == (stream, "ret")
    assert stream.running
    assert session.supersede(request(*typed("ret"), automatic=False), adopt=True) is None
    assert stream.stopped == "superseded" and not stream.running
    other = await running_stream(session, "return n")
    assert session.supersede(request(*typed("x")), adopt=True) is None
    assert other.stopped == "superseded"


async def test_closing_stops_a_parked_stream_and_forgets_the_suggestion() -> None:
    sessions = Sessions()
    session = sessions.of(URI)
    stream = await running_stream(session, "return n")
    stream.follower = None
    assert stream.park(10.0, lambda: None)
    session.remember(stream, "return n", CURSOR, CURSOR)
    assert session.shown.lookup(*typed("r")) is not None
    assert sessions.streaming == 1
    sessions.close(URI)
    assert stream.stopped == "cancelled" and not stream.parked
    assert session.shown.lookup(*typed("r")) is None
    assert sessions.get(URI) is None and sessions.streaming == 0


async def test_a_stream_ending_records_once_and_answers_who_took_it_over() -> None:
    session = DocumentSession(URI)
    stream = await running_stream(session, "return n")
    first = stream.follower
    assert first is not None
    newer = Follower(Timeline.start(URI, "python", "automatic"))
    stream.follow(newer)
    assert first.answer.done() and first.answer.result() is None  # taken over
    stream.timeline.tokens = 7
    recorded: list[Timeline] = []
    final = Suggestion(stream.timeline.id, "return n", CURSOR, CURSOR, stream.timeline)
    stream.conclude("shown", final, recorded.append)
    stream.conclude("shown", final, recorded.append)  # a second ending changes nothing
    assert [t.outcome for t in recorded] == ["adopted"]
    assert newer.answer.result() is final
    assert (stream.timeline.tokens, newer.timeline.tokens) == (0, 7)


async def test_a_live_view_answers_early_with_complete_lines_and_publishes_the_end() -> None:
    published: list[PartialUpdate] = []
    live = LiveView(URI, TEXT, CURSOR, 2, published.append, interval_s=0.0)
    timeline = Timeline.start(URI, "python", "automatic")
    answer: asyncio.Future[Suggestion | None] = asyncio.get_running_loop().create_future()
    live.attach(answer)
    live.grow(Suggestion(timeline.id, "return n\n    pr", CURSOR, CURSOR, timeline))
    early = await live.answer(budget_ms=0)
    assert early is not None and early.text == "return n"
    assert live.answered_early and live.has_rest
    whole = Suggestion(timeline.id, "return n\n    print(n)", CURSOR, CURSOR, timeline)
    answer.set_result(whole)
    assert await live.answer(None) is whole
    await asyncio.sleep(0)
    assert [(u.text, u.done, u.version) for u in published] == [
        ("return n\n    pr", False, 2),
        ("return n\n    print(n)", True, 2),
    ]
    superseded = LiveView(URI, TEXT, CURSOR, 2, None, interval_s=0.0)
    gone: asyncio.Future[Suggestion | None] = asyncio.get_running_loop().create_future()
    superseded.attach(gone)
    superseded.answered_early = True
    gone.set_result(None)
    assert not superseded.has_rest  # a request there asks the engine again
