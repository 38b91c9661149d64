"""What answers an endpoint's /metrics, and the replicas read instead when it is a router.

A speculative engine's health is a difference of its own counters between two scrapes, so
those scrapes must come from one engine. Behind vllm-router they do not: measured with
vllm-router 0.1.17, its /metrics is forwarded to one replica picked by its routing policy
(round_robin: another replica each scrape; cache_aware: whichever its tree picks), so a window
subtracts one replica's counters from another's (`make test-cluster` read 0.03 over 186
drafts of two healthy EAGLE replicas). A router is recognised by its worker list
(`GET /list_workers`, which vLLM answers 404) or by its own metric names; a /metrics without
any vLLM metric is not an engine either (another proxy, a plain OpenAI server). Either way the
health is read per replica when the settings list them (`engine.replicaMetrics`, pooled over
the replicas: the router spreads completions over all of them), else not at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from copilot_lsp.engine.monitor import AcceptanceMonitor, AcceptanceWindow, Scrape, scrape

Kind = Literal["engine", "router", "not an engine"]


@dataclass(frozen=True, slots=True)
class Identity:
    kind: Kind
    workers: tuple[str, ...] = ()
    """The replicas a router lists (as the router reaches them)."""

    def describe(self, url: str) -> str:
        if self.kind == "router":
            listed = f" (it lists {', '.join(self.workers)})" if self.workers else ""
            return (
                f"{url} is a router{listed}: its /metrics is one replica's at a time, not an "
                "engine's"
            )
        if self.kind == "not an engine":
            return f"{url} answers /metrics without any vLLM engine metric: not an engine"
        return f"{url} is a vLLM engine"


async def identify(http: httpx.AsyncClient, root: str, scraped: Scrape) -> Identity:
    """What answered `root`/metrics with `scraped`."""
    if scraped.router_metrics:
        return Identity("router")
    workers = await _listed_workers(http, root)
    if workers is not None:
        return Identity("router", tuple(workers))
    return Identity("engine" if scraped.engine_metrics else "not an engine")


async def _listed_workers(http: httpx.AsyncClient, root: str) -> list[str] | None:
    """vllm-router's `GET /list_workers` ({"urls": [...]}); None from anything else."""
    try:
        response = await http.get(f"{root}/list_workers")
        data: Any = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    urls = data.get("urls") if isinstance(data, dict) else None
    if isinstance(urls, list) and all(isinstance(url, str) for url in urls):
        return urls
    return None


@dataclass
class Replica:
    url: str
    monitor: AcceptanceMonitor
    error: str | None = None

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def snapshot(self) -> dict[str, Any]:
        window = self.monitor.window()
        return {
            "url": self.url,
            "error": self.error,
            "acceptance": window.as_dict() if window is not None else None,
        }


class ReplicaSet:
    """The replicas behind one router, each scraped and windowed on its own, then pooled."""

    def __init__(self, urls: Sequence[str], window_s: float) -> None:
        self.replicas = [Replica(url.rstrip("/"), AcceptanceMonitor(window_s)) for url in urls]

    async def poll(self, http: httpx.AsyncClient, clock: Callable[[], float]) -> None:
        await asyncio.gather(*(self._poll(replica, http, clock) for replica in self.replicas))

    @staticmethod
    async def _poll(replica: Replica, http: httpx.AsyncClient, clock: Callable[[], float]) -> None:
        try:
            result = await scrape(http, replica.root, clock)
        except httpx.HTTPError as error:
            replica.error = f"/metrics: {error!r}"
            return
        if result is None or not result.engine_metrics:
            replica.error = "/metrics has no vLLM engine metrics"
            return
        replica.error = None
        replica.monitor.observe(result)

    def window(self) -> AcceptanceWindow | None:
        """The drafts of every replica's window together (None before any has one)."""
        windows = [w for r in self.replicas if (w := r.monitor.window()) is not None]
        return pooled(windows) if windows else None

    def snapshot(self) -> list[dict[str, Any]]:
        return [replica.snapshot() for replica in self.replicas]


def pooled(windows: Sequence[AcceptanceWindow]) -> AcceptanceWindow:
    drafts = sum(w.drafts for w in windows)
    draft_tokens = sum(w.draft_tokens for w in windows)
    accepted = sum(w.accepted_tokens for w in windows)
    positions = max((len(w.per_position) for w in windows), default=0)
    accepted_at = [
        sum(w.per_position[k] * w.drafts for w in windows if k < len(w.per_position))
        for k in range(positions)
    ]
    return AcceptanceWindow(
        window_s=max(w.window_s for w in windows),
        drafts=drafts,
        draft_tokens=draft_tokens,
        accepted_tokens=accepted,
        acceptance_rate=accepted / draft_tokens if draft_tokens > 0 else None,
        mean_accepted_length=1.0 + accepted / drafts if drafts > 0 else None,
        per_position=[a / drafts if drafts > 0 else 0.0 for a in accepted_at],
    )
