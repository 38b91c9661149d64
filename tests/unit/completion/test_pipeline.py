"""The completion pipeline with an in-memory engine: superseding, cancelling, engine state."""

from __future__ import annotations

import asyncio

import pytest

from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.settings import Settings
from tests.fakes.scripted import ScriptedEngine
from tests.unit.completion.conftest import service_for

TEXT = "def f(n):\n    \n"
CURSOR = TEXT.index("    \n") + 4


async def test_block_completion_and_timeline() -> None:
    engine = ScriptedEngine(["\n    return", " n + 1\n", "\n", "def g():\n", "    pass\n"])
    service, timelines, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None
    assert suggestion.text == "return n + 1"
    assert engine.requests[0].prompt == "def f(n):"
    assert engine.requests[0].max_tokens == Settings().completion.max_tokens
    assert engine.sent < len(engine.chunks)  # stopped reading at `def g`
    assert engine.closed == 1
    (timeline,) = timelines
    assert timeline.outcome == "shown" and timeline.mode == "multi-line"
    marks = timeline.marks
    assert marks["prompt_built"] <= marks["request_sent"] <= marks["first_token"]
    assert marks["first_token"] <= marks["finished"]
    assert timeline.chars_shown == len("return n + 1")


async def test_newer_request_supersedes_older_and_closes_its_stream() -> None:
    engine = ScriptedEngine(["x"] * 100, pause=0.01)
    service, timelines, _ = service_for(engine)
    older = asyncio.ensure_future(
        service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    )
    while engine.sent < 2:
        await asyncio.sleep(0.005)
    engine.chunks = ["1"]
    newer = await service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    assert await older is None
    assert newer is not None and newer.text == "1"
    assert engine.closed == 2
    assert sorted(t.outcome for t in timelines) == ["shown", "superseded"]
    assert service.inflight == 0


async def test_other_documents_are_not_superseded() -> None:
    engine = ScriptedEngine(["ok"], pause=0.02)
    service, _, _ = service_for(engine)
    results = await asyncio.gather(
        service.complete("file:///a.py", "python", "a = \n", 4, automatic=False),
        service.complete("file:///b.py", "python", "b = \n", 4, automatic=False),
    )
    assert [r.text if r else None for r in results] == ["ok", "ok"]


async def test_caller_cancellation_propagates_and_closes_the_stream() -> None:
    engine = ScriptedEngine(["x"] * 100, pause=0.01)
    service, timelines, _ = service_for(engine)
    task = asyncio.ensure_future(
        service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    )
    while engine.sent < 2:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert engine.closed == 1
    assert [t.outcome for t in timelines] == ["cancelled"]


async def test_engine_down_is_reported_once_then_recovery_once() -> None:
    engine = ScriptedEngine(["1"], fail=True)
    service, timelines, states = service_for(engine)
    for _ in range(3):
        assert (
            await service.complete("file:///a.py", "python", "a = \n", 4, automatic=False) is None
        )
    assert [healthy for healthy, _ in states] == [False]
    assert "cannot reach" in states[0][1]
    assert [t.outcome for t in timelines] == ["error"] * 3
    engine.fail = False
    assert await service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    assert [healthy for healthy, _ in states] == [False, True]


async def test_debounce_applies_to_automatic_requests_only() -> None:
    engine = ScriptedEngine(["1"])
    settings = Settings.model_validate({"completion": {"debounce_ms": 150}})
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    service = CompletionService(engine, lambda: settings, sleep=sleep)
    await service.complete("file:///a.py", "python", "a = \n", 4, automatic=True)
    assert slept == [0.15]
    await service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    assert slept == [0.15]


async def test_mid_word_skip_and_disabled_completion_send_nothing() -> None:
    engine = ScriptedEngine(["1"])
    service, timelines, _ = service_for(engine)
    assert await service.complete("file:///a.py", "python", "abc\n", 1, automatic=True) is None
    disabled = Settings.model_validate({"completion": {"enable": False}})
    service2, _, _ = service_for(engine, disabled)
    assert await service2.complete("file:///a.py", "python", "a = \n", 4, automatic=False) is None
    assert engine.requests == []
    assert timelines[0].outcome == "skipped"


@pytest.mark.parametrize(
    ("text", "cursor_after", "chunks", "accepted"),
    [
        # An auto-closed `{}`: the model's own `}` replaces the editor's.
        (
            "int f(int x) {}\n\nint main(void) {\n    return f(1);\n}\n",
            "{",
            ["\n    return x + 1;\n}\n", "\nint g(void) {\n"],
            "int f(int x) {\n    return x + 1;\n}\n\nint main(void) {\n    return f(1);\n}\n",
        ),
        # `foo(|)`: a completion ending in `)` replaces the `)`, one that does not inserts.
        ("x = foo()\n", "foo(", ["1, 2)\n"], "x = foo(1, 2)\n"),
        ("x = foo()\n", "foo(", ["1, 2\n"], "x = foo(1, 2)\n"),
    ],
)
async def test_closers_right_of_the_cursor_are_not_duplicated(
    text: str, cursor_after: str, chunks: list[str], accepted: str
) -> None:
    engine = ScriptedEngine(chunks)
    service, _, _ = service_for(engine)
    offset = text.index(cursor_after) + len(cursor_after)
    suggestion = await service.complete("file:///a.c", "c", text, offset, automatic=False)
    assert suggestion is not None
    applied = text[: suggestion.offset] + suggestion.text + text[suggestion.end_offset :]
    assert applied == accepted


async def test_typing_the_suggestion_is_answered_without_the_engine() -> None:
    engine = ScriptedEngine(["\n    return", " n + 1\n"])
    service, timelines, _ = service_for(engine)
    first = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=True)
    assert first is not None and first.text == "return n + 1"
    typed = TEXT[:CURSOR] + "ret" + TEXT[CURSOR:]
    second = await service.complete("file:///a.py", "python", typed, CURSOR + 3, automatic=True)
    assert second is not None and second.text == "urn n + 1"
    assert len(engine.requests) == 1
    assert timelines[-1].mode == "type-through" and timelines[-1].outcome == "shown"
    # Typing something else asks the engine again.
    other = TEXT[:CURSOR] + "x" + TEXT[CURSOR:]
    engine.chunks = [" = 1\n"]
    await service.complete("file:///a.py", "python", other, CURSOR + 1, automatic=True)
    assert len(engine.requests) == 2
