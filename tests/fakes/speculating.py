"""Scripted vLLM engines and a scripted vllm-router behind httpx.MockTransport, for the
failover rule: each engine's /metrics carries vLLM's cumulative speculative-decoding counters,
advanced by what the test says; a router lists its workers at /list_workers and forwards
/metrics to one of them per scrape, round robin, as vllm-router 0.1.17 was measured to do.
Completions answer with the name of whoever served them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import httpx

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.health import Judgement
from copilot_lsp.engine.router import Router, RoutingPolicy
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.settings import EngineSettings

REQUEST = CompletionRequest(prompt="def f(", max_tokens=8)


@dataclass
class Engine:
    name: str
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    accepted_at: list[int] = field(default_factory=list)
    """Drafts whose token at position k was accepted, k = 0, 1, …"""
    up: bool = True
    engine_metrics: bool = True
    """False: /metrics answers without any vLLM metric (another proxy, a plain server)."""
    served: list[str] = field(default_factory=list)

    def speculate(self, drafts: int, proposed: int, accepted: int) -> None:
        """`drafts` verification steps of `proposed` draft tokens, `accepted` of them kept."""
        self.drafts += drafts
        self.draft_tokens += drafts * proposed
        self.accepted += drafts * accepted
        self.accepted_at += [0] * (proposed - len(self.accepted_at))
        for k in range(accepted):
            self.accepted_at[k] += drafts

    def metrics(self) -> str:
        if not self.engine_metrics:
            return "process_cpu_seconds_total 1.5\nhttp_requests_total 12\n"
        labels = 'engine="0",model_name="m"'
        lines = [
            f"vllm:spec_decode_num_drafts_total{{{labels}}} {self.drafts}",
            f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {self.draft_tokens}",
            f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {self.accepted}",
            f"vllm:num_requests_running{{{labels}}} 0",
        ]
        lines += [
            f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{k}"}} {n}'
            for k, n in enumerate(self.accepted_at)
        ]
        return "\n".join(lines) + "\n"

    def handle(self, request: httpx.Request) -> httpx.Response:
        if not self.up:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path == "/metrics":
            return httpx.Response(200, text=self.metrics())
        if request.url.path == "/v1/completions":
            self.served.append(json.loads(request.content)["prompt"])
            return completion(self.name)
        return httpx.Response(404, text="Not Found")


@dataclass
class VllmRouter:
    """vllm-router in front of `workers`: lists them, forwards /metrics to one per scrape."""

    name: str
    workers: list[Engine]
    own_metrics: bool = False
    """True: /metrics answers the router's own metric names instead of forwarding."""
    _turn: Iterator[int] = field(default_factory=itertools.count)

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/list_workers":
            return httpx.Response(200, json={"urls": [url(w.name) for w in self.workers]})
        if request.url.path == "/metrics" and self.own_metrics:
            return httpx.Response(200, text='vllm_router_requests_total{route="/metrics"} 4\n')
        worker = self.workers[next(self._turn) % len(self.workers)]
        response = worker.handle(request)
        if request.url.path == "/v1/completions":
            response = completion(f"{self.name}>{worker.name}")
        return response


def completion(text: str) -> httpx.Response:
    event = {"choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)


def url(name: str) -> str:
    return f"http://{name}.test/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Pool:
    """A Router over scripted servers; the test drives time and the polls."""

    def __init__(
        self,
        servers: dict[str, Engine | VllmRouter],
        primaries: list[str],
        fallback: str | None = "plain",
        *,
        judgements: list[Judgement] | None = None,
        replica_metrics: Sequence[str] = (),
        settings: EngineSettings | None = None,
    ) -> None:
        self.servers = servers
        if fallback is not None and fallback not in servers:
            servers[fallback] = Engine(fallback)
        self.clock = Clock()
        self.http = httpx.AsyncClient(transport=httpx.MockTransport(self._route))
        policy = RoutingPolicy.from_settings(settings or EngineSettings())
        self.router = Router(
            [url(name) for name in primaries],
            url(fallback) if fallback else None,
            make_client=lambda base: EngineClient(base, model="m", http=self.http),
            policy=policy,
            judgements=judgements,
            replica_metrics=[url(name) for name in replica_metrics],
            http=self.http,
            clock=self.clock,
        )
        # Not started by stream(): the test drives polls itself.
        self.router._ensure_polling = lambda: None  # type: ignore[method-assign]

    def _route(self, request: httpx.Request) -> httpx.Response:
        return self.servers[request.url.host.removesuffix(".test")].handle(request)

    async def complete(self) -> str:
        return "".join([chunk.text async for chunk in self.router.stream(REQUEST)])

    async def tick(
        self, seconds: float = 5.0, *, traffic: Callable[[], None] | None = None
    ) -> None:
        if traffic is not None:
            traffic()
        self.clock.now += seconds
        await self.router.poll_once()

    def primary(self, index: int = 0) -> dict[str, object]:
        snapshot: dict[str, object] = self.router.snapshot()["endpoints"][index]
        return snapshot
