"""Which engine next edits go to, and what a failing second engine costs (nextedit/engine.py)."""

from __future__ import annotations

import asyncio

from copilot_lsp.completion.admission import InflightLimiter
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.errors import EngineUnavailable
from copilot_lsp.nextedit.engine import NextEditEngines, dedicated_options
from copilot_lsp.settings import Settings, apply_layer

B = "http://nes-host:8001/v1"


def settings(**next_edit: object) -> Settings:
    layer = {
        "engine": {
            "url": "http://main:8000/v1",
            "apiKey": "main-key",
            "endpoints": ["http://a/v1", "http://b/v1"],
            "fallbackUrl": "http://plain/v1",
            "readTimeoutS": 7,
            "tlsVerify": False,
        },
        "nextEditSuggestions": next_edit,
    }
    return apply_layer(Settings(), layer, "test")


def test_unset_means_the_main_engine() -> None:
    assert dedicated_options(settings()) is None
    main = EngineProvider()
    slots = InflightLimiter()
    target = NextEditEngines(main, PromptFormats(), slots).target(settings())
    assert target.engine is main and target.slots is slots and target.dedicated is None


def test_the_second_engine_keeps_the_main_timeouts_and_tls_but_not_its_key_or_pool() -> None:
    options = dedicated_options(settings(engine={"url": B, "model": "sweep"}))
    assert options is not None
    assert (options.url, options.model, options.api_key) == (B, "sweep", None)
    assert (options.read_timeout_s, options.tls_verify) == (7, False)
    assert (options.endpoints, options.fallback_url) == ([], None)
    assert options.speculative_method == "none"
    keyed = dedicated_options(settings(engine={"url": B, "apiKey": "nes-key"}))
    assert keyed is not None and keyed.api_key is not None
    assert keyed.api_key.get_secret_value() == "nes-key"


def test_a_failing_second_engine_is_told_once_and_left_alone_until_it_answers() -> None:
    now = [100.0]
    told: list[str] = []
    main_slots = InflightLimiter()
    engines = NextEditEngines(
        EngineProvider(), PromptFormats(), main_slots, notify=told.append, clock=lambda: now[0]
    )
    current = settings(engine={"url": B, "apiKey": "nes-key"})
    target = engines.target(current)
    assert target.dedicated == B and target.slots is not main_slots and target.stop == ()
    assert engines.target(current).engine is target.engine  # one provider, reconfigured

    error = EngineUnavailable("refused")
    engines.failed(target, error, cap_s=8.0)
    assert engines.paused(target) == 0.25
    engines.failed(target, error, cap_s=8.0)
    assert engines.paused(target) == 0.5  # doubled, as the completions' backoff does
    assert len(told) == 1 and B in told[0] and "nes-key" not in told[0]
    now[0] += 1.0
    assert engines.paused(target) == 0.0
    engines.answered(target)
    engines.failed(target, error, cap_s=8.0)
    assert len(told) == 2  # a new outage is told again
    assert engines.describe(current) == {"url": B, "failures_in_a_row": 1}


def test_the_main_engine_failing_is_not_the_next_edit_engines_to_tell() -> None:
    told: list[str] = []
    engines = NextEditEngines(
        EngineProvider(), PromptFormats(), InflightLimiter(), notify=told.append
    )
    target = engines.target(settings())
    engines.failed(target, EngineUnavailable("refused"), cap_s=8.0)
    assert told == [] and engines.paused(target) == 0.0


async def test_unsetting_the_second_engine_closes_it() -> None:
    engines = NextEditEngines(EngineProvider(), PromptFormats(), InflightLimiter())
    target = engines.target(settings(engine={"url": B}))
    assert isinstance(target.engine, EngineProvider)
    router = target.engine.current()
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    router.aclose = aclose  # type: ignore[method-assign]
    engines.failed(target, EngineUnavailable("refused"), cap_s=8.0)
    main = engines.target(settings())
    assert main.dedicated is None
    await asyncio.sleep(0)
    assert closed == [True]
    assert engines.paused(engines.target(settings(engine={"url": B}))) == 0.0  # a fresh start
