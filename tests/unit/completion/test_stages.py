"""Each stage of an inline request, driven alone (completion/stages.py)."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.mode import Mode
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import InlineRequest, inline_request
from copilot_lsp.completion.stages import InlineStages, Prepared, Streamed
from copilot_lsp.completion.suggestion import Suggestion
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline
from tests.fakes.scripted import ScriptedEngine

TEXT = "def f(n):\n    \n\nprint(f(1))\n"
CURSOR = TEXT.index("    \n") + 4


def stages_for(engine: ScriptedEngine, slept: list[float] | None = None) -> InlineStages:
    async def sleep(seconds: float) -> None:
        if slept is not None:
            slept.append(seconds)

    return InlineStages(engine, PromptFormats(), sleep=sleep)


def request_at(text: str = TEXT, offset: int = CURSOR, *, automatic: bool = True) -> InlineRequest:
    return inline_request(
        "file:///a.py", "python", text, offset, automatic=automatic, options=Settings().completion
    )


def timeline() -> Timeline:
    return Timeline.start("file:///a.py", "python", "automatic")


@pytest.mark.parametrize(
    ("text", "offset", "enable", "mode"),
    [
        (TEXT, CURSOR, True, Mode.MULTI_LINE),  # an empty line in a block
        ("value = comp\n", 10, True, Mode.SKIP),  # in the middle of a word
        ("x = \n", 4, True, Mode.SINGLE_LINE),
        (TEXT, CURSOR, False, Mode.SKIP),  # completion.enable off
    ],
)
def test_plan_picks_the_mode_from_the_cursor(
    text: str, offset: int, enable: bool, mode: Mode
) -> None:
    options = Settings.model_validate({"completion": {"enable": enable}}).completion
    assert InlineStages.plan(request_at(text, offset), options) is mode


async def test_admit_waits_out_the_debounce_for_typing_only_and_refuses_after_a_failure() -> None:
    slept: list[float] = []
    stages = stages_for(ScriptedEngine([]), slept)
    settings = Settings()
    assert await stages.admit(settings, True, timeline()) is None
    assert await stages.admit(settings, False, timeline()) is None
    assert slept == [pytest.approx(0.04)]
    stages.backoff.failed(settings.engine.backoff_max_s)
    refused = await stages.admit(settings, True, timeline())
    assert refused is not None and "next try in" in refused
    assert await stages.admit(settings, False, timeline()) is None  # the user asked: tried


async def test_prepare_builds_the_prompt_and_the_request_for_the_mode() -> None:
    engine = ScriptedEngine([])
    stages = stages_for(engine)
    settings = Settings()
    block = await stages.prepare(request_at(), Mode.MULTI_LINE, settings)
    assert block.request.prompt == "def f(n):"  # the default prefix-only family
    assert block.request.max_tokens == settings.completion.max_tokens
    assert block.offset == CURSOR
    line = await stages.prepare(request_at("x = 1 +\n", 7), Mode.SINGLE_LINE, settings)
    assert line.request.max_tokens == settings.completion.single_line_max_tokens
    engine.samples_exactly = False
    sampled = Settings.model_validate({"completion": {"temperature": 0.5}})
    greedy = await stages.prepare(request_at(), Mode.MULTI_LINE, sampled)
    assert greedy.request.temperature == 0.0  # an engine that samples wrongly gets greedy


async def test_stream_and_cut_stops_reading_at_the_block_end_and_closes_the_stream() -> None:
    engine = ScriptedEngine(["\n    return", " n + 1\n", "\n", "def g():\n", "    pass\n"])
    stages = stages_for(engine)
    settings = Settings()
    prepared = await stages.prepare(request_at(), Mode.MULTI_LINE, settings)
    previews: list[Suggestion] = []
    marks = timeline()
    streamed = await stages.stream_and_cut(
        prepared, settings.completion, True, marks, previews.append
    )
    assert streamed.text.strip() == "return n + 1"
    assert engine.sent < len(engine.chunks) and engine.closed == 1
    assert previews and all(p.offset == CURSOR for p in previews)
    assert previews[-1].text.startswith("return n + 1".rstrip()[: len(previews[-1].text)])
    assert {"request_sent", "first_token", "first_line"} <= marks.marks.keys()
    assert stages.pace.ttft_s >= 0.0 and stages.slots.active == 0


async def test_finish_fits_the_text_to_the_file_or_says_there_is_nothing() -> None:
    stages = stages_for(ScriptedEngine([]))
    settings = Settings()
    request = request_at()
    prepared: Prepared = await stages.prepare(request, Mode.MULTI_LINE, settings)
    marks = timeline()
    suggestion, outcome = await stages.finish(
        Streamed("return n + 1"), request, prepared, settings, marks
    )
    assert outcome == "shown" and suggestion is not None
    assert (suggestion.text, suggestion.offset, suggestion.id) == ("return n + 1", CURSOR, marks.id)
    assert marks.chars_shown == len("return n + 1")
    nothing, outcome = await stages.finish(Streamed("  "), request, prepared, settings, timeline())
    assert (nothing, outcome) == (None, "empty")
