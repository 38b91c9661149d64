"""Failover through the real server: two scripted engines serve /metrics, the router scrapes
them every 50 ms, and completions follow the primary's speculative acceptance.

Nothing here waits on a clock: each step waits (bounded by the test's timeout) for the state
the server reports in copilot/stats, then checks where the completions went.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(90)


class SpeculatingEngine:
    """vLLM's cumulative spec-decode counters, moving by one batch of drafts per scrape at
    the acceptance rate the test sets."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.drafts = self.draft_tokens = self.accepted = 0

    def __call__(self) -> str:
        self.drafts += 10
        self.draft_tokens += 30
        self.accepted += round(30 * self.rate)
        return (
            f"vllm:spec_decode_num_drafts_total {self.drafts}\n"
            f"vllm:spec_decode_num_draft_tokens_total {self.draft_tokens}\n"
            f"vllm:spec_decode_num_accepted_tokens_total {self.accepted}\n"
            'vllm:num_requests_running{model_name="m"} 0\n'
        )


@pytest_asyncio.fixture
async def fallback() -> AsyncIterator[FakeEngine]:
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["from_fallback"])
    try:
        yield engine
    finally:
        await engine.stop()


async def until_stats(session: Session, check: Callable[[dict[str, Any]], bool]) -> None:
    """Ask copilot/stats until `check` holds (a liveness wait: the test's timeout bounds it)."""
    while not check(await session.stats()):
        await asyncio.sleep(0.05)


def primary_state(stats: dict[str, Any]) -> dict[str, Any]:
    endpoints = stats["engine"]["routing"]["endpoints"]
    return next(e for e in endpoints if e["role"] == "primary")


async def test_low_acceptance_moves_completions_to_the_fallback_and_back(
    session: Session, fallback: FakeEngine
) -> None:
    primary = session.engine
    counters = SpeculatingEngine(rate=0.9)
    primary.metrics = counters
    primary.default = Reply(chunks=["from_primary"])
    fallback.metrics = SpeculatingEngine(rate=0.0)  # plain decoding: never judged
    await session.initialize(
        {
            "engine": {
                "fallbackUrl": fallback.url,
                "metricsIntervalS": 0.05,
                "acceptanceWindowS": 0.5,
                "minWindowDrafts": 5,
                "tripAfter": 2,
                "recoverAfter": 2,
                "probeIntervalS": 0.1,
            }
        }
    )
    uri = session.open("x = \n")

    async def answer() -> list[str | None]:
        return [i.insert_text for i in await session.complete(uri, 0, 4)]

    assert await answer() == ["from_primary"]  # the first completion starts the monitor
    await until_stats(session, lambda s: bool((primary_state(s)["acceptance"] or {}).get("drafts")))
    assert primary_state(await session.stats())["degraded"] is False
    assert await answer() == ["from_primary"]
    served = len(fallback.requests)

    counters.rate = 0.1  # speculation stops paying on the primary
    await until_stats(session, lambda s: primary_state(s)["degraded"])
    state = primary_state(await session.stats())
    assert state["acceptance"]["acceptance_rate"] < 0.45
    assert await answer() == ["from_fallback"]
    assert await answer() == ["from_fallback"]
    assert len(fallback.requests) == served + 2
    assert (await session.stats())["engine"]["routing"]["route"] == "fallback"
    # While failed over, the primary still gets the latest request replayed (probes), so its
    # acceptance keeps being measured.
    probes = len(primary.requests)
    await until_stats(session, lambda s: len(primary.requests) > probes)

    counters.rate = 0.9  # it recovers
    await until_stats(session, lambda s: not primary_state(s)["degraded"])
    assert primary_state(await session.stats())["acceptance"]["acceptance_rate"] >= 0.55
    served = len(fallback.requests)
    assert await answer() == ["from_primary"]
    assert len(fallback.requests) == served
    assert (await session.stats())["engine"]["routing"]["route"] == "primary"
    assert primary.scrapes > 4 and fallback.scrapes > 4
