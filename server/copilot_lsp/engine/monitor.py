"""Windowed speculative-decoding acceptance from vLLM's cumulative counters.

vLLM exports counters only (drafts, draft tokens, accepted tokens, accepted per position), so
every figure here is a difference between two scrapes: acceptance rate = Δaccepted / Δdraft
tokens, mean accepted length = 1 + Δaccepted / Δdrafts, position k = Δaccepted_k / Δdrafts.
The window keeps the scrapes of the last `window_s` seconds plus the one just before them as
the baseline. A counter that goes down means the engine restarted: the window starts over.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics, total

ROUTER_PREFIXES = ("vllm_router_", "sgl_router_")
"""vllm-router's own metric names (and those of the SGLang router it derives from)."""


@dataclass(frozen=True, slots=True)
class Scrape:
    at: float
    counters: SpecDecodeCounters
    running: float = 0.0
    """vllm:num_requests_running + waiting at that moment: the engine's load."""
    engine_metrics: bool = True
    """Whether the exposition has any vLLM metric (`vllm:…`): an engine's, or one forwarded."""
    router_metrics: bool = False
    """Whether it has a router's own metrics (engine/replicas.py): not one engine's."""


@dataclass(frozen=True, slots=True)
class AcceptanceWindow:
    window_s: float
    drafts: int
    draft_tokens: int
    accepted_tokens: int
    acceptance_rate: float | None
    mean_accepted_length: float | None
    per_position: list[float]
    """Share of drafts whose token at position k was accepted, k = 0, 1, …"""

    def as_dict(self) -> dict[str, object]:
        return {
            "window_s": round(self.window_s, 1),
            "drafts": self.drafts,
            "draft_tokens": self.draft_tokens,
            "accepted_tokens": self.accepted_tokens,
            "acceptance_rate": _round(self.acceptance_rate, 4),
            "mean_accepted_length": _round(self.mean_accepted_length, 3),
            "per_position": [round(rate, 4) for rate in self.per_position],
        }


def _round(value: float | None, digits: int) -> float | None:
    return round(value, digits) if value is not None else None


def window_between(older: Scrape, newer: Scrape) -> AcceptanceWindow:
    a, b = older.counters, newer.counters
    drafts = b.drafts - a.drafts
    draft_tokens = b.draft_tokens - a.draft_tokens
    accepted = b.accepted_tokens - a.accepted_tokens
    positions = sorted(b.accepted_per_position)
    per_position = [
        (b.accepted_per_position[k] - a.accepted_per_position.get(k, 0.0)) / drafts
        if drafts > 0
        else 0.0
        for k in positions
    ]
    return AcceptanceWindow(
        window_s=newer.at - older.at,
        drafts=int(drafts),
        draft_tokens=int(draft_tokens),
        accepted_tokens=int(accepted),
        acceptance_rate=accepted / draft_tokens if draft_tokens > 0 else None,
        mean_accepted_length=1.0 + accepted / drafts if drafts > 0 else None,
        per_position=per_position,
    )


class AcceptanceMonitor:
    """Scrapes of one engine, and the acceptance over the last `window_s` seconds."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self._scrapes: deque[Scrape] = deque()

    def observe(self, scrape: Scrape) -> None:
        last = self._scrapes[-1] if self._scrapes else None
        if last is not None and _went_down(last.counters, scrape.counters):
            self._scrapes.clear()  # the engine restarted; old counters mean nothing now
        self._scrapes.append(scrape)
        # Keep one scrape at or before the window's start as the baseline.
        while len(self._scrapes) >= 2 and self._scrapes[1].at <= scrape.at - self.window_s:
            self._scrapes.popleft()

    @property
    def latest(self) -> Scrape | None:
        return self._scrapes[-1] if self._scrapes else None

    def window(self) -> AcceptanceWindow | None:
        if len(self._scrapes) < 2:
            return None
        return window_between(self._scrapes[0], self._scrapes[-1])


def _went_down(old: SpecDecodeCounters, new: SpecDecodeCounters) -> bool:
    return new.drafts < old.drafts or new.accepted_tokens < old.accepted_tokens


async def scrape(
    http: httpx.AsyncClient, root: str, clock: Callable[[], float] = time.monotonic
) -> Scrape | None:
    """One scrape of `root`/metrics; None when the engine has no Prometheus endpoint.

    Connection errors propagate (httpx.HTTPError): the caller decides what they mean.
    """
    response = await http.get(f"{root}/metrics")
    if response.status_code != 200:
        return None
    samples = parse_metrics(response.text)
    load = total(samples, "vllm:num_requests_running") + total(samples, "vllm:num_requests_waiting")
    return Scrape(
        clock(),
        SpecDecodeCounters.from_samples(samples),
        load,
        engine_metrics=any(sample.name.startswith("vllm:") for sample in samples),
        router_metrics=any(sample.name.startswith(ROUTER_PREFIXES) for sample in samples),
    )
