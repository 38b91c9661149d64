"""The prefix warm-up's rules: a new head waits for the engine to be idle, one answered by a
completion needs nothing, a completion taking the engine closes the warm-up, and a busy or
failing engine is left alone."""

from __future__ import annotations

import asyncio

from copilot_lsp.completion.admission import InflightLimiter
from copilot_lsp.completion.prefix_warmup import MIN_HEAD_CHARS, PrefixWarmer
from tests.fakes.scripted import ScriptedEngine

HEAD = "# imported module (pkg/helpers.py):\n" + "# def helper(x: int) -> int: ...\n" * 6
OTHER = HEAD.replace("helper", "another")


def warmer(engine: ScriptedEngine, busy: list[bool] | None = None) -> PrefixWarmer:
    flags = busy if busy is not None else [False]
    return PrefixWarmer(engine, lambda: flags[0])


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_new_head_goes_out_at_the_next_idle_moment_for_one_token() -> None:
    engine = ScriptedEngine(["x"])
    warm = warmer(engine)
    warm.offer(HEAD, {"model": "m", "max_tokens": 99, "n": 3})
    await settle()
    assert engine.requests == []  # offered while the completion carrying it runs
    warm.on_idle()
    await settle()
    assert [(r.prompt, r.max_tokens, r.extra, r.n) for r in engine.requests] == [
        (HEAD, 1, {"model": "m"}, None)
    ]
    assert warm.counts.sent == warm.counts.done == 1
    warm.offer(HEAD, {})  # in the cache now: not sent again
    warm.on_idle()
    await settle()
    assert len(engine.requests) == 1


async def test_a_head_answered_by_its_completion_or_too_short_is_not_sent() -> None:
    engine = ScriptedEngine(["x"])
    warm = warmer(engine)
    warm.offer(HEAD, {})
    warm.answered(HEAD)
    warm.offer("# short\n" * (MIN_HEAD_CHARS // 10), {})
    warm.on_idle()
    await settle()
    assert engine.requests == []
    assert warm.counts.skipped_answered == 1 and warm.counts.sent == 0


async def test_only_the_newest_head_goes_out_and_a_busy_engine_is_left_alone() -> None:
    engine = ScriptedEngine(["x"])
    busy = [True]
    warm = warmer(engine, busy)
    warm.offer(HEAD, {})
    warm.offer(OTHER, {})
    warm.on_idle()
    await settle()
    assert engine.requests == [] and warm.counts.skipped_busy == 1
    busy[0] = False
    warm.on_idle()
    await settle()
    assert [r.prompt for r in engine.requests] == [OTHER]
    assert warm.counts.skipped_superseded == 1


async def test_a_completion_taking_a_slot_closes_the_warm_up_which_is_not_sent_again() -> None:
    engine = ScriptedEngine(["x", "y"], pause=5.0)
    slots = InflightLimiter()
    warm = PrefixWarmer(engine, lambda: slots.active > 0)
    slots.on_busy, slots.on_idle = warm.on_busy, warm.on_idle
    warm.offer(HEAD, {})
    async with slots.slot(4):
        pass  # a completion came and went: the engine is idle after it
    await settle()
    assert len(engine.requests) == 1 and warm.counts.sent == 1
    async with slots.slot(4):  # the next completion starts: the warm-up is closed
        await settle()
        assert warm.counts.cancelled == 1 and engine.closed == 1
    await settle()
    assert len(engine.requests) == 1  # idle again: the engine has begun this head already
    warm.offer(HEAD, {})
    warm.on_idle()
    await settle()
    assert len(engine.requests) == 1 and warm.counts.sent == 1
    warm.offer(OTHER, {})  # a new head is sent
    warm.on_idle()
    await settle()
    assert [r.prompt for r in engine.requests] == [HEAD, OTHER]
    await warm.close()
