"""Backoff after engine failures, the global in-flight cap, and Retry-After parsing."""

from __future__ import annotations

import asyncio
import email.utils
import time

from copilot_lsp.completion.admission import RETRY_AFTER_CAP_S, Backoff, InflightLimiter
from copilot_lsp.engine.client import retry_after, wire_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_backoff_doubles_up_to_the_cap_and_success_resets_it() -> None:
    clock = Clock()
    backoff = Backoff(clock)
    assert backoff.wait_s(automatic=True) == 0
    assert [backoff.failed(2.0) for _ in range(5)] == [0.25, 0.5, 1.0, 2.0, 2.0]
    assert backoff.wait_s(automatic=True) == 2.0
    assert backoff.wait_s(automatic=False) == 0  # the user asked explicitly: try
    clock.now += 2.0
    assert backoff.wait_s(automatic=True) == 0  # the probe may go
    backoff.succeeded()
    assert backoff.failures == 0 and backoff.failed(2.0) == 0.25


def test_retry_after_is_honoured_for_every_request_up_to_a_cap() -> None:
    clock = Clock()
    backoff = Backoff(clock)
    assert backoff.failed(1.0, retry_after_s=5.0) == 5.0
    assert backoff.wait_s(automatic=False) == 5.0
    assert backoff.failed(1.0, retry_after_s=10_000) == RETRY_AFTER_CAP_S
    assert backoff.failed(1.0, retry_after_s=None) == 1.0
    assert backoff.wait_s(automatic=False) == 0


def test_a_retry_after_pause_ends_by_itself() -> None:
    clock = Clock()
    backoff = Backoff(clock)
    assert backoff.failed(8.0, retry_after_s=60.0) == 60.0
    clock.now += 59.5
    assert backoff.wait_s(automatic=False) == 0.5 and backoff.wait_s(automatic=True) == 0.5
    clock.now += 0.5
    assert backoff.wait_s(automatic=False) == 0 and backoff.wait_s(automatic=True) == 0


def test_retry_after_header_forms() -> None:
    assert retry_after(None) is None and retry_after("") is None
    assert retry_after("3") == 3.0 and retry_after("-4") == 0.0
    assert retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after(later) or 0) <= 31


def test_wire_text_joins_surrogate_halves_and_replaces_lone_ones() -> None:
    assert wire_text("plain 😀") == "plain 😀"
    assert wire_text("\ud83d\ude00 \ud800") == "😀 \ufffd"


async def test_inflight_limiter_caps_and_survives_cancellation() -> None:
    limiter = InflightLimiter()
    release = asyncio.Event()
    entered: list[int] = []

    async def hold(index: int) -> None:
        async with limiter.slot(2):
            entered.append(index)
            await release.wait()

    tasks = [asyncio.ensure_future(hold(i)) for i in range(4)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert entered == [0, 1] and limiter.active == 2 and limiter.waiting == 2
    tasks[2].cancel()  # superseded while waiting: never gets a slot
    await asyncio.sleep(0)
    assert limiter.waiting == 1
    release.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert entered == [0, 1, 3]
    assert limiter.active == 0 and limiter.peak == 2 and limiter.waiting == 0
