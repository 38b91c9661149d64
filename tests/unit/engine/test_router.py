"""The endpoint pool: load spreading, health, and failover on low speculative acceptance.

Each engine is scripted behind httpx.MockTransport: its /metrics counters advance by what the
test says, its /v1/completions streams a text naming the engine, so the test sees where every
completion went. Time is a fake clock; polls happen when the test calls `poll_once`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.health import HealthRule, judge
from copilot_lsp.engine.router import Router, RoutingPolicy, router_from_settings
from copilot_lsp.engine.types import CompletionRequest, StreamChunk
from copilot_lsp.errors import EngineUnavailable
from copilot_lsp.settings import EngineSettings, Settings, apply_layer_leniently

REQUEST = CompletionRequest(prompt="def f(", max_tokens=8)


@dataclass
class ScriptedEngine:
    name: str
    drafts: float = 0.0
    accepted: float = 0.0
    running: float = 0.0
    up: bool = True
    has_metrics: bool = True
    completions: list[str] = field(default_factory=list)

    def speculate(self, drafts: int, rate: float, k: int = 3) -> None:
        """Advance the counters by `drafts` drafts of k tokens at acceptance `rate`."""
        self.drafts += drafts
        self.accepted += drafts * k * rate

    def metrics(self) -> str:
        labels = 'engine="0",model_name="m"'
        return "\n".join(
            [
                f"vllm:spec_decode_num_drafts_total{{{labels}}} {self.drafts}",
                f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {self.drafts * 3}",
                f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {self.accepted}",
                f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="0"}} '
                f"{self.accepted / 2}",
                f"vllm:num_requests_running{{{labels}}} {self.running}",
            ]
        )

    def handle(self, request: httpx.Request) -> httpx.Response:
        if not self.up:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path == "/metrics":
            if not self.has_metrics:
                return httpx.Response(404)
            return httpx.Response(200, text=self.metrics())
        if request.url.path == "/v1/completions":
            prompt = json.loads(request.content)["prompt"]
            self.completions.append(prompt)
            events = [
                {"choices": [{"index": 0, "text": self.name, "finish_reason": "stop"}]},
            ]
            body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)
        return httpx.Response(404)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Pool:
    def __init__(self, primaries: list[str], fallback: str | None, **policy: float) -> None:
        names = [*primaries, *([fallback] if fallback else [])]
        changes: dict[str, Any] = {
            "min_drafts": 10,
            "window_s": 30.0,
            "probe_interval_s": 0.0,
            **policy,
        }
        self.engines = {name: ScriptedEngine(name) for name in names}
        self.clock = Clock()
        transport = httpx.MockTransport(self._route)
        self.http = httpx.AsyncClient(transport=transport)
        self.router = Router(
            [self.url(p) for p in primaries],
            self.url(fallback) if fallback else None,
            make_client=lambda url: EngineClient(url, model="m", http=self.http),
            policy=dataclasses.replace(RoutingPolicy.from_settings(EngineSettings()), **changes),
            http=self.http,
            clock=self.clock,
        )

    @staticmethod
    def url(name: str) -> str:
        return f"http://{name}.test/v1"

    def _route(self, request: httpx.Request) -> httpx.Response:
        return self.engines[request.url.host.removesuffix(".test")].handle(request)

    async def complete(self) -> str:
        return "".join([chunk.text async for chunk in self.router.stream(REQUEST)])

    async def tick(self, seconds: float = 5.0) -> None:
        self.clock.now += seconds
        await self.router.poll_once()


@pytest.fixture
async def pool() -> Pool:
    pool = Pool(["spec"], "plain")
    # Not started by stream(): the test drives polls itself.
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    return pool


async def test_good_acceptance_keeps_the_primary(pool: Pool) -> None:
    for _ in range(5):
        pool.engines["spec"].speculate(50, 0.7)
        await pool.tick()
    assert await pool.complete() == "spec"
    snapshot = pool.router.snapshot()
    spec = snapshot["endpoints"][0]
    assert spec["degraded"] is False
    assert spec["acceptance"]["acceptance_rate"] == pytest.approx(0.7)
    assert snapshot["route"] == "primary"


async def test_low_acceptance_fails_over_only_after_trip_after_readings(pool: Pool) -> None:
    spec = pool.engines["spec"]
    await pool.tick()  # baseline scrape
    spec.speculate(50, 0.2)
    await pool.tick()
    spec.speculate(50, 0.2)
    await pool.tick()
    assert await pool.complete() == "spec"  # two low readings: not yet
    spec.speculate(50, 0.2)
    await pool.tick()
    assert await pool.complete() == "plain"
    assert pool.router.snapshot()["route"] == "fallback"
    assert pool.router.primaries[0].degraded


async def test_a_single_good_reading_resets_the_low_streak(pool: Pool) -> None:
    spec = pool.engines["spec"]
    await pool.tick()
    for rate in (0.2, 0.2, 0.95, 0.2, 0.2):
        spec.speculate(50, rate)
        await pool.tick(15.0)  # 30 s window: each reading sees the last two intervals
    assert await pool.complete() == "spec"


async def test_too_few_drafts_decide_nothing(pool: Pool) -> None:
    spec = pool.engines["spec"]
    await pool.tick()
    for _ in range(5):
        spec.speculate(2, 0.0)  # 2 drafts a reading, 10 needed
        await pool.tick(20.0)
    assert await pool.complete() == "spec"


async def test_recovery_needs_the_higher_threshold_and_probes_the_primary(pool: Pool) -> None:
    spec = pool.engines["spec"]
    await pool.tick()
    for _ in range(3):
        spec.speculate(50, 0.2)
        await pool.tick()
    assert await pool.complete() == "plain"

    # Between the two thresholds (0.45 .. 0.55): no flapping back.
    for _ in range(8):
        spec.speculate(50, 0.5)
        await pool.tick(10.0)
    assert await pool.complete() == "plain"

    # The degraded primary is probed with the latest request, so it keeps being measured.
    before = len(spec.completions)
    await pool.router.probe_degraded()
    assert len(spec.completions) == before + 1
    assert spec.completions[-1] == REQUEST.prompt

    for _ in range(2):
        spec.speculate(50, 0.8)
        await pool.tick(20.0)
    assert await pool.complete() == "plain"  # two good readings of three
    spec.speculate(50, 0.8)
    await pool.tick(20.0)
    assert await pool.complete() == "spec"
    assert pool.router.snapshot()["route"] == "primary"


async def test_without_a_fallback_a_degraded_primary_still_serves() -> None:
    pool = Pool(["spec"], None)
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    await pool.tick()
    for _ in range(3):
        pool.engines["spec"].speculate(50, 0.1)
        await pool.tick()
    assert pool.router.primaries[0].degraded
    assert await pool.complete() == "spec"
    assert pool.router.snapshot()["route"] == "degraded primary"


async def test_load_spreads_to_the_least_busy_replica() -> None:
    pool = Pool(["a", "b"], None)
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    pool.engines["a"].running = 6
    await pool.tick()
    assert [await pool.complete() for _ in range(3)] == ["b", "b", "b"]
    pool.engines["a"].running = 0
    pool.engines["b"].running = 6
    await pool.tick()
    assert await pool.complete() == "a"


async def test_a_degraded_replica_yields_to_a_healthy_one() -> None:
    pool = Pool(["a", "b"], "plain")
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    await pool.tick()
    for _ in range(3):
        pool.engines["a"].speculate(50, 0.1)
        pool.engines["b"].speculate(50, 0.8)
        await pool.tick()
    assert {await pool.complete() for _ in range(4)} == {"b"}


async def test_unreachable_endpoint_is_skipped_then_retried() -> None:
    pool = Pool(["a", "b"], None, retry_after_s=10.0)
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    pool.engines["a"].up = False
    results = [await pool.complete() for _ in range(4)]
    assert set(results) == {"b"}  # a's failure cost no completion: b answered instead
    assert not pool.router.primaries[0].healthy
    pool.engines["a"].up = True
    pool.engines["b"].running = 5
    await pool.tick(11.0)
    assert pool.router.primaries[0].healthy
    assert await pool.complete() == "a"


async def test_all_down_raises_engine_unavailable() -> None:
    pool = Pool(["a"], "plain")
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    pool.engines["a"].up = False
    pool.engines["plain"].up = False
    with pytest.raises(EngineUnavailable):
        await pool.complete()


async def test_engine_without_metrics_stays_usable() -> None:
    pool = Pool(["a"], None)
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    pool.engines["a"].has_metrics = False
    await pool.tick()
    endpoint = pool.router.snapshot()["endpoints"][0]
    assert endpoint["healthy"] is True and endpoint["metrics"] is False
    assert await pool.complete() == "a"


def test_router_from_settings_builds_the_pool_and_policy() -> None:
    settings = EngineSettings(
        endpoints=["http://r1/v1/", "http://r2/v1"],
        fallback_url="http://plain/v1",
        acceptance_threshold=0.5,
    )
    router = router_from_settings(settings, "http://ignored/v1")
    assert [e.url for e in router.primaries] == ["http://r1/v1", "http://r2/v1"]
    assert router.fallback is not None and router.fallback.url == "http://plain/v1"
    # Unset recovery: the threshold plus the margin.
    rules = [e.judgement.rule for e in router.primaries if e.judgement is not None]
    assert rules == [HealthRule("acceptance_rate", 0.5, 0.6)] * 2
    assert router.fallback.tracker is None  # plain decoding: never judged
    single = router_from_settings(EngineSettings(), "http://one/v1")
    assert [e.url for e in single.primaries] == ["http://one/v1"] and single.fallback is None
    judgement = single.primaries[0].judgement
    assert judgement is not None and judgement.method is None  # unknown: the seed's rule
    assert judgement.rule == HealthRule("acceptance_rate", 0.45, 0.55)


def test_a_recovery_threshold_below_the_failover_one_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValidationError) as refused:
        EngineSettings(acceptance_threshold=0.5, recovery_threshold=0.4)
    assert "recoveryThreshold" in str(refused.value) and "0.5 or more" in str(refused.value)
    kept, problems = apply_layer_leniently(
        Settings(),
        {"engine": {"acceptanceThreshold": 0.5, "recoveryThreshold": 0.4, "url": "http://e/v1"}},
        "workspace/configuration",
    )
    assert len(problems) == 1 and "recovery_threshold" in problems[0]
    # Only the contradicting field is dropped: the rest of the layer applies.
    assert kept.engine.url == "http://e/v1" and kept.engine.acceptance_threshold == 0.5
    rule = judge(kept.engine, None).rule
    assert rule is not None and rule.recovery == 0.6


async def test_leaving_a_stream_closes_the_endpoints_stream_at_once() -> None:
    """The endpoint's stream is closed with the router's, not later by the garbage collector:
    closing it is what stops the engine generating."""
    closed: list[str] = []

    class Endpoint(EngineClient):
        async def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
            try:
                for text in ("a", "b", "c"):
                    yield StreamChunk(text, None, None)
            finally:
                closed.append(self.base_url)

    router = Router(["http://one.test/v1"], make_client=lambda url: Endpoint(url, model="m"))
    router._ensure_polling = lambda: None  # type: ignore[method-assign]
    stream = router.stream(REQUEST)
    async for chunk in stream:
        assert chunk.text == "a"
        break
    await stream.aclose()
    assert closed == ["http://one.test/v1"]
    await router.aclose()
