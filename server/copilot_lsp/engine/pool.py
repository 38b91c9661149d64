"""One endpoint of the router's pool: its client, reachability, load and speculative health."""

from __future__ import annotations

import logging
from typing import Any, Literal

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.health import HealthTracker, Judgement
from copilot_lsp.engine.monitor import AcceptanceMonitor, AcceptanceWindow
from copilot_lsp.engine.replicas import Identity, ReplicaSet

logger = logging.getLogger(__name__)

Role = Literal["primary", "fallback"]


class Endpoint:
    """One engine (or a router in front of several): its client, health, our in-flight
    requests, its load, and for a primary how its speculation is judged."""

    def __init__(
        self,
        url: str,
        client: EngineClient,
        role: Role,
        window_s: float,
        *,
        judgement: Judgement | None = None,
        tracker: HealthTracker | None = None,
        replicas: ReplicaSet | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.client = client
        self.role = role
        self.monitor = AcceptanceMonitor(window_s)
        self.judgement = judgement
        self.tracker = tracker
        """None: never failed over for its speculation (the fallback, plain decoding)."""
        self.replicas = replicas
        """The replicas behind it whose /metrics are read instead of its own."""
        self.identity: Identity | None = None
        """What answers its /metrics, found on the first scrape that answered."""
        self.healthy = True
        self.inflight = 0
        self.retry_at = 0.0
        self.last_error: str | None = None
        self.metrics = False
        """Whether the endpoint answers /metrics at all (a plain OpenAI server may not)."""
        self.scraped = False
        """Whether a scrape has reached it (answered /metrics or not)."""

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    @property
    def degraded(self) -> bool:
        return self.tracker is not None and self.tracker.degraded

    def available(self, now: float) -> bool:
        return self.healthy or now >= self.retry_at

    def load(self) -> float:
        latest = self.monitor.latest
        return self.inflight + (latest.running if latest is not None else 0.0)

    def mark_down(self, now: float, retry_after_s: float, error: str) -> None:
        if self.healthy:
            logger.warning("engine endpoint %s is unreachable: %s", self.url, error)
        self.healthy = False
        self.retry_at = now + retry_after_s
        self.last_error = error

    def mark_up(self) -> None:
        if not self.healthy:
            logger.warning("engine endpoint %s is reachable again", self.url)
        self.healthy = True
        self.last_error = None

    def health_window(self) -> AcceptanceWindow | None:
        """The window its speculation is judged on: its replicas' pooled, else its own when it
        is an engine, else none."""
        if self.replicas is not None:
            return self.replicas.window()
        if self.identity is not None and self.identity.kind == "engine":
            return self.monitor.window()
        return None

    def read(self) -> bool:
        """Whether its speculation is being judged: a rule, and an engine's counters to read."""
        if self.tracker is None:
            return False
        if self.replicas is not None:
            return True
        return self.identity is not None and self.identity.kind == "engine"

    def unread_reason(self) -> str | None:
        """Why its speculative health cannot be read (None when it is, before the first scrape
        answered, or when it is never judged)."""
        if self.tracker is None or self.replicas is not None:
            return None
        if self.identity is not None and self.identity.kind != "engine":
            return (
                f"{self.identity.describe(self.url)}: the speculative health of the engines "
                "behind it is not read, so completions never fail over for it; list the "
                "replicas in engine.replicaMetrics to read each"
            )
        if self.scraped and not self.metrics:
            return f"{self.url} answers no /metrics: its speculative health is not read"
        return None

    def snapshot(self) -> dict[str, Any]:
        window = self.monitor.window() if self.replicas is None else self.replicas.window()
        health: dict[str, Any] | None = None
        if self.judgement is not None:
            health = {
                **self.judgement.as_dict(),
                "read": self.read(),
                "unread_reason": self.unread_reason(),
                "value": self.tracker.value if self.tracker is not None else None,
                "readings": self.tracker.readings if self.tracker is not None else 0,
            }
        return {
            "url": self.url,
            "role": self.role,
            "healthy": self.healthy,
            "degraded": self.degraded,
            "inflight": self.inflight,
            "load": self.load(),
            "metrics": self.metrics,
            "kind": self.identity.kind if self.identity is not None else None,
            "workers": list(self.identity.workers) if self.identity is not None else [],
            "acceptance": window.as_dict() if window is not None else None,
            "health": health,
            "replicas": self.replicas.snapshot() if self.replicas is not None else None,
            "last_error": self.last_error,
        }
