"""The debounce that follows the engine: configured while the engine is fast, longer (bounded)
while its time to first token is far above the gaps between keystrokes."""

from __future__ import annotations

import asyncio

import pytest

from copilot_lsp.completion.pacing import EnginePace
from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.settings import Settings
from tests.fakes.scripted import ScriptedEngine


def test_nothing_seen_yet_keeps_the_configured_debounce() -> None:
    assert EnginePace().debounce_s(40, 250) == pytest.approx(0.04)


def test_a_fast_engine_keeps_the_configured_debounce() -> None:
    pace = EnginePace()
    pace.answered(0.12)
    assert pace.debounce_s(40, 250) == pytest.approx(0.04)


def test_a_slower_engine_waits_a_quarter_of_its_time_to_first_token() -> None:
    pace = EnginePace()
    pace.answered(0.6)
    assert pace.debounce_s(40, 250) == pytest.approx(0.15)


def test_requests_closed_unanswered_raise_the_estimate_up_to_the_cap() -> None:
    pace = EnginePace()
    pace.answered(0.1)
    pace.unanswered(4.0)
    assert pace.ttft_s == pytest.approx(4.0)
    assert pace.debounce_s(40, 250) == pytest.approx(0.25)
    pace.unanswered(0.1)  # a lower bound below the estimate says nothing new
    assert pace.ttft_s == pytest.approx(4.0)


def test_answers_bring_the_estimate_back_down() -> None:
    pace = EnginePace()
    pace.unanswered(4.0)
    for _ in range(8):
        pace.answered(0.1)
    assert pace.debounce_s(40, 250) == pytest.approx(0.04)


@pytest.mark.parametrize(("configured", "cap"), [(40, 0), (300, 250), (250, 250)])
def test_off_or_below_the_configured_debounce_keeps_the_configured_one(
    configured: int, cap: int
) -> None:
    pace = EnginePace()
    pace.unanswered(10.0)
    assert pace.debounce_s(configured, cap) == pytest.approx(configured / 1000.0)


def _service(engine: ScriptedEngine, settings: Settings) -> tuple[CompletionService, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(0)

    return CompletionService(engine, lambda: settings, sleep=sleep), slept


async def _superseded_before_first_token(
    service: CompletionService, engine: ScriptedEngine
) -> None:
    older = asyncio.ensure_future(
        service.complete("file:///a.py", "python", "a = \n", 4, automatic=True)
    )
    while not engine.requests:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.3)  # the engine has not answered yet
    engine.pause = 0.0
    newer = await service.complete("file:///a.py", "python", "a = \n", 4, automatic=True)
    assert await older is None
    assert newer is not None


async def test_a_request_left_unanswered_stretches_the_next_debounce() -> None:
    engine = ScriptedEngine(["1"], pause=5.0)
    settings = Settings.model_validate({"completion": {"adaptiveDebounceMaxMs": 250}})
    service, slept = _service(engine, settings)
    await _superseded_before_first_token(service, engine)
    assert slept[0] == pytest.approx(0.04)
    assert 0.075 <= slept[1] <= 0.25  # a quarter of at least 0.3 s
    assert 0.15 <= service.stages.pace.ttft_s < 0.3  # the newer one's quick answer pulled it down


async def test_by_default_a_slow_engine_keeps_the_configured_debounce() -> None:
    engine = ScriptedEngine(["1"], pause=5.0)
    service, slept = _service(engine, Settings())
    await _superseded_before_first_token(service, engine)
    assert slept == [pytest.approx(0.04)] * 2
