"""Alternatives: `n` choices parsed from the stream, cut, de-duplicated, ordered, counted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from copilot_lsp.completion.alternatives import distinct, placed
from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.types import CompletionRequest, StreamChunk
from copilot_lsp.errors import EngineStreamError
from copilot_lsp.settings import Settings, TelemetrySettings
from copilot_lsp.telemetry.log import read_log
from copilot_lsp.telemetry.recorder import Recorder
from copilot_lsp.telemetry.stats import outcome_counts
from copilot_lsp.telemetry.timeline import Timeline, split_id
from tests.fakes.scripted import ScriptedEngine
from tests.unit.completion.conftest import service_for

# -- the engine client: `n`, and chunks told apart by `choices[].index` -------------------


def choice_event(index: int, text: str, finish: str | None = None, tokens: int = 1) -> str:
    body = {
        "choices": [{"index": index, "text": text, "finish_reason": finish}],
        "usage": {"prompt_tokens": 4, "completion_tokens": tokens, "total_tokens": 4 + tokens},
    }
    return f"data: {json.dumps(body)}\n\n"


def client_answering(*events: str) -> tuple[EngineClient, list[dict[str, object]]]:
    bodies: list[dict[str, object]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        content = "".join(events).encode()
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=content)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return EngineClient("http://engine.test/v1", http=http, model="m"), bodies


async def test_interleaved_choices_are_parsed_with_their_index() -> None:
    client, bodies = client_answering(
        choice_event(0, "a", tokens=1),
        choice_event(1, "x", tokens=1),
        choice_event(0, "b", "stop", tokens=2),
        choice_event(1, "y", "length", tokens=2),
        'data: {"choices": [], "usage": {"completion_tokens": 4}}\n\n',
        "data: [DONE]\n\n",
    )
    request = CompletionRequest("p", 8, temperature=0.4, n=2)
    chunks = [chunk async for chunk in client.stream(request)]
    assert [(c.index, c.text, c.finish_reason) for c in chunks[:4]] == [
        (0, "a", None),
        (1, "x", None),
        (0, "b", "stop"),
        (1, "y", "length"),
    ]
    assert chunks[4] == StreamChunk("", 4, None)  # the closing usage counts both choices
    assert bodies[0]["n"] == 2 and bodies[0]["temperature"] == 0.4


async def test_n_is_sent_only_when_set() -> None:
    client, bodies = client_answering(choice_event(0, "a", "stop"), "data: [DONE]\n\n")
    [_ async for _ in client.stream(CompletionRequest("p", 8))]
    assert "n" not in bodies[0]


async def test_a_stream_cut_before_every_choice_finished_is_an_error() -> None:
    # Choice 0 finished, choice 1 did not, and no [DONE]: the stream was cut.
    client, _ = client_answering(choice_event(0, "a", "stop"), choice_event(1, "x"))
    with pytest.raises(EngineStreamError, match="ended before"):
        [_ async for _ in client.stream(CompletionRequest("p", 8, n=2))]


async def test_a_bad_choice_index_is_a_clear_error() -> None:
    client, _ = client_answering(choice_event(-1, "a", "stop"), "data: [DONE]\n\n")
    with pytest.raises(EngineStreamError, match="choice index"):
        [_ async for _ in client.stream(CompletionRequest("p", 8))]


# -- de-duplication and order --------------------------------------------------------------


def test_distinct_keeps_the_first_of_each_text_and_drops_empty_ones() -> None:
    texts = ["return a", "", "return  a\n", "return b", "  \n", "return a", "returna"]
    assert distinct(texts) == ["return a", "return b", "returna"]


def test_placed_gives_the_first_the_completion_id_and_the_others_ranks() -> None:
    shown = placed("abc", ["x)", "x)", "", "y"], 10, lambda text: 1 if text.endswith(")") else 0)
    assert [(s.id, s.text, s.end_offset) for s in shown] == [
        ("abc", "x)", 11),
        ("abc#2", "y", 10),
    ]
    assert split_id("abc#2") == ("abc", 2)
    assert split_id("abc") == ("abc", 1)
    assert split_id("a#b") == ("a#b", 1)


# -- the pipeline: greedy first, sampled beside it, cut and fitted like it -----------------

TEXT = "def f(n):\n    \n"
CURSOR = TEXT.index("    \n") + 4
GREEDY = ["\n    return", " n + 1\n", "\n", "def g():\n"]


async def test_an_invoked_request_gets_distinct_alternatives_greedy_first() -> None:
    engine = ScriptedEngine(GREEDY)
    engine.choices = [
        ["\n    return", " n * 2\n", "\n", "def h():\n", "    pass\n"],  # cut at `def h`
        ["\n    return n  +  1\n"],  # the greedy answer but for whitespace: dropped
    ]
    service, timelines, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None
    assert suggestion.text == "return n + 1"
    assert [(a.id, a.text) for a in suggestion.alternatives] == [
        (f"{suggestion.id}#2", "return n * 2")
    ]
    (sampled,) = engine.sampled_requests
    assert sampled.n == 2 and sampled.temperature == Settings().completion.alternatives_temperature
    assert sampled.prompt == engine.requests[0].prompt
    assert engine.requests[0].n is None and engine.requests[0].temperature == 0.0
    assert engine.sampled_closed == 1
    (timeline,) = timelines
    assert timeline.alternatives == 2
    assert timeline.alternative_chars == [len("return n * 2")]
    assert timeline.alternative_tokens > 0


async def test_the_sampled_request_waits_for_the_greedy_first_token() -> None:
    """By then the engine holds the prompt in its prefix cache, and the greedy suggestion's
    first token was not slowed by a second prefill."""
    greedy_sent_then: list[int] = []

    class Recording(ScriptedEngine):
        def stream(self, request: CompletionRequest) -> Any:
            if request.n is not None:
                greedy_sent_then.append(self.sent)
            return super().stream(request)

    engine = Recording(GREEDY, pause=0.01)
    engine.choices = [["\n    return 0\n"], ["\n    return 1\n"]]
    service, _, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None and len(suggestion.alternatives) == 2
    assert greedy_sent_then and greedy_sent_then[0] >= 1


async def test_automatic_requests_and_alternatives_1_ask_for_one() -> None:
    engine = ScriptedEngine(GREEDY)
    engine.choices = [["\n    return 0\n"], ["\n    return 1\n"]]
    service, timelines, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=True)
    assert suggestion is not None and suggestion.alternatives == ()
    off = Settings.model_validate({"completion": {"alternatives": 1}})
    service, _, _ = service_for(engine, off)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None and suggestion.alternatives == ()
    assert engine.sampled_requests == []
    assert timelines[0].to_json().get("alternatives") is None


async def test_an_empty_greedy_answer_gives_the_first_alternative_its_place() -> None:
    engine = ScriptedEngine(["\n", "\n"])
    engine.choices = [["\n    return 0\n"], ["\n    return 1\n"]]
    service, _, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None
    assert suggestion.text == "return 0"
    assert [a.text for a in suggestion.alternatives] == ["return 1"]
    assert suggestion.alternatives[0].id == f"{suggestion.id}#2"


async def test_a_cut_sampled_stream_keeps_the_choices_complete_by_then() -> None:
    engine = ScriptedEngine(GREEDY)
    # Interleaved: c0 "return 0", c1 "return", c0 finish, c1 " 1" ... cut after 3 chunks.
    engine.choices = [["\n    return 0\n"], ["\n    return", " 1\n"]]
    engine.cut_sampled_after = 3
    service, _, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None and suggestion.text == "return n + 1"
    assert [a.text for a in suggestion.alternatives] == ["return 0"]
    assert engine.sampled_closed == 1


async def test_alternatives_still_generating_after_the_wait_are_dropped() -> None:
    """The answer waits `alternativesWaitMs` after the greedy suggestion for the sampled
    choices: the one finished by then is kept, the one still generating dropped (closed)."""
    engine = ScriptedEngine(GREEDY)
    engine.sampled_pause = 0.02
    # Interleaved: c0 ends at its second event, c1 would take 200 more (about 4 s).
    engine.choices = [["\n    return 0\n"], ["\n    return", *[" 1"] * 200, "\n"]]
    short = Settings.model_validate({"completion": {"alternatives_wait_ms": 300}})
    service, timelines, _ = service_for(engine, short)
    started = asyncio.get_running_loop().time()
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    waited = asyncio.get_running_loop().time() - started
    assert suggestion is not None and suggestion.text == "return n + 1"
    assert [a.text for a in suggestion.alternatives] == ["return 0"]
    assert engine.sampled_closed == 1
    assert engine.sampled_sent < 60  # closed at the wait's end, not run to the finish
    assert waited < 2.0
    assert timelines[0].alternatives == 2


async def test_cancelling_while_waiting_for_alternatives_closes_them() -> None:
    engine = ScriptedEngine(GREEDY)
    engine.sampled_pause = 0.01
    engine.choices = [["\n    return", *[" 0"] * 1000], ["\n    return", *[" 1"] * 1000]]
    service, timelines, _ = service_for(engine)
    task = asyncio.ensure_future(
        service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    )
    while engine.closed < 1 or engine.sampled_sent < 6:  # greedy done, sampling under way
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert engine.sampled_closed == 1
    assert engine.sampled_sent < 200
    assert [t.outcome for t in timelines] == ["cancelled"]


async def test_cancelling_closes_both_streams() -> None:
    engine = ScriptedEngine(["x"] * 100, pause=0.01)
    engine.choices = [["y"] * 100, ["z"] * 100]
    service, timelines, _ = service_for(engine)
    task = asyncio.ensure_future(
        service.complete("file:///a.py", "python", "a = \n", 4, automatic=False)
    )
    while engine.sent < 2 or engine.sampled_sent < 2:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert engine.closed == 1 and engine.sampled_closed == 1
    assert engine.sampled_sent < 200
    assert [t.outcome for t in timelines] == ["cancelled"]


async def test_no_free_engine_slot_means_no_alternatives() -> None:
    engine = ScriptedEngine(GREEDY)
    engine.choices = [["\n    return 0\n"], ["\n    return 1\n"]]
    one = Settings.model_validate({"completion": {"max_inflight": 1}})
    service, _, _ = service_for(engine, one)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None and suggestion.alternatives == ()
    assert engine.sampled_requests == []  # the greedy request never waited for it either


# -- telemetry: an accepted alternative counts as such -------------------------------------


def test_accepting_an_alternative_is_recorded_with_its_rank(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    recorder = Recorder(TelemetrySettings(log_path=path))
    timeline = Timeline.start("file:///a.py", "python", "invoked")
    timeline.chars_shown, timeline.alternatives, timeline.alternative_chars = 5, 3, [7, 9]
    assert recorder.displayed(f"{timeline.id}#2") is False  # before its timeline: kept
    timeline.finish("shown")
    recorder.record(timeline)
    assert recorder.feedback(f"{timeline.id}#3", "accepted", None)
    (record,) = list(read_log(path))
    assert record["alternatives"] == 3 and record["displayed"] is True
    assert record["feedback"] == "accepted" and record["accepted_rank"] == 3
    assert record["chars_accepted"] == 9  # the third suggestion's length, not the first's
    counts = outcome_counts([record])
    assert counts["accepted"] == 1 and counts["accepted_alternative"] == 1


def test_accepting_the_first_suggestion_is_not_an_alternative(tmp_path: Path) -> None:
    recorder = Recorder(TelemetrySettings(log_path=tmp_path / "c.jsonl"))
    timeline = Timeline.start("file:///a.py", "python", "invoked")
    timeline.chars_shown, timeline.alternatives = 5, 2
    timeline.finish("shown")
    recorder.record(timeline)
    assert recorder.feedback(timeline.id, "accepted", None)
    counts = outcome_counts(recorder.rolling.snapshot()["recent"])
    assert counts["accepted"] == 1 and "accepted_alternative" not in counts


async def test_an_engine_that_samples_wrongly_gets_greedy_requests_only() -> None:
    """vLLM's CPU build with speculative decoding samples word salad (engine/state.py): an
    explicit request then gets the greedy suggestion alone, and no sampled request is sent."""
    engine = ScriptedEngine(GREEDY)
    engine.choices = [["\n    return 0\n"], ["\n    return 1\n"]]
    engine.samples_exactly = False
    service, timelines, _ = service_for(engine)
    suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=False)
    assert suggestion is not None and suggestion.text == "return n + 1"
    assert suggestion.alternatives == ()
    assert engine.sampled_requests == []
    assert timelines[0].to_json().get("alternatives") is None


async def test_a_temperature_is_not_sent_to_an_engine_that_samples_wrongly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings.model_validate({"completion": {"temperature": 0.3}})
    engine = ScriptedEngine(GREEDY)
    service, _, _ = service_for(engine, settings)
    await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=True)
    assert engine.requests[-1].temperature == 0.3  # an engine that samples right gets it
    engine.samples_exactly = False
    for _ in range(2):
        suggestion = await service.complete("file:///a.py", "python", TEXT, CURSOR, automatic=True)
        assert suggestion is not None and suggestion.text == "return n + 1"
        assert engine.requests[-1].temperature == 0.0
    said = [r.message for r in caplog.records if "temperature" in r.message]
    assert len(said) == 1 and "greedy" in said[0]  # said once, not per keystroke
