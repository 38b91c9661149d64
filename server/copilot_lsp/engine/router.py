"""A pool of engine endpoints with health, load, speculative-decoding health and failover.

Completions go to the least-loaded healthy primary whose speculative decoding is doing its
job. Each primary is judged by the signal its method calls for (engine/health.py: acceptance
rate for learned drafts, mean accepted length for n-gram and suffix decoding); when it stays
below the rule's threshold for `trip_after` consecutive scrapes (with at least `min_drafts`
drafts in the window), the primary is marked degraded and completions go to the plain-decoding
`fallback` endpoint (or to the other primaries). vLLM has no switch that turns speculation off
when it stops paying, so this is how we stop paying for it.

Hysteresis: a degraded primary returns only after its signal stays at or above the rule's
recovery level for `recover_after` scrapes. While degraded it gets no user traffic, so the
router replays the latest request to it every `probe_interval_s` (output discarded) to keep
measuring it. An endpoint that cannot be reached is skipped for `retry_after_s`, then tried
again. A primary that is a router (or answers /metrics without engine metrics) is judged from
the replicas `engine.replicaMetrics` lists, else not at all (engine/replicas.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.health import SIGNAL_NAMES, HealthTracker, Judgement, Recorded, judge
from copilot_lsp.engine.monitor import scrape
from copilot_lsp.engine.pool import Endpoint
from copilot_lsp.engine.replicas import ReplicaSet, identify
from copilot_lsp.engine.tls import verify_option
from copilot_lsp.engine.types import CompletionRequest, ServedModel, StreamChunk
from copilot_lsp.errors import ConfigError, EngineError, EngineUnavailable
from copilot_lsp.settings import EngineSettings

logger = logging.getLogger(__name__)

T = TypeVar("T")
PROBE = CompletionRequest(prompt="def fibonacci(n):\n", max_tokens=48, temperature=0.0)


@dataclass(frozen=True)
class RoutingPolicy:
    """How readings turn into failover, as `engine.*` settings give them (settings.py documents
    each); the threshold each primary is held to is its Judgement's (engine/health.py)."""

    trip_after: int
    recover_after: int
    min_drafts: int
    window_s: float
    poll_interval_s: float
    probe_interval_s: float
    retry_after_s: float

    @classmethod
    def from_settings(cls, options: EngineSettings) -> RoutingPolicy:
        return cls(
            trip_after=options.trip_after,
            recover_after=options.recover_after,
            min_drafts=options.min_window_drafts,
            window_s=options.acceptance_window_s,
            poll_interval_s=options.metrics_interval_s,
            probe_interval_s=options.probe_interval_s,
            retry_after_s=options.retry_after_s,
        )


class Router:
    """Implements the pipeline's CompletionEngine over a pool of endpoints."""

    def __init__(
        self,
        primaries: Sequence[str],
        fallback: str | None = None,
        *,
        make_client: Callable[[str], EngineClient],
        policy: RoutingPolicy | None = None,
        judgements: Sequence[Judgement] | None = None,
        replica_metrics: Sequence[str] = (),
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        """`judgements`: how each primary is judged (default: the settings' defaults, an
        unknown method judged as a learned draft); `replica_metrics`: the replicas behind the
        one primary when it is a router."""
        if not primaries:
            raise ValueError("a router needs at least one primary endpoint")
        if replica_metrics and len(primaries) > 1:
            raise ValueError("replica metrics belong to one primary (a router), not to a pool")
        self.policy = policy or RoutingPolicy.from_settings(EngineSettings())
        window = self.policy.window_s
        if judgements is None:
            judgements = [judge(EngineSettings(), None)] * len(primaries)
        self.primaries = [
            Endpoint(
                url,
                make_client(url),
                "primary",
                window,
                judgement=judgement,
                tracker=self._tracker(judgement),
                replicas=ReplicaSet(replica_metrics, window) if replica_metrics else None,
            )
            for url, judgement in zip(primaries, judgements, strict=True)
        ]
        self.fallback = (
            Endpoint(fallback, make_client(fallback), "fallback", window) if fallback else None
        )
        for endpoint in self.primaries:
            if endpoint.judgement is not None and endpoint.judgement.problem is not None:
                logger.error("%s: %s", endpoint.url, endpoint.judgement.problem)
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=httpx.Timeout(5.0, connect=2.0), verify=verify
        )
        self._clock = clock
        self._turn = itertools.count()
        self._task: asyncio.Task[None] | None = None
        self._last_request: CompletionRequest | None = None
        self._last_probe = 0.0
        self._route: str = "primary"

    def _tracker(self, judgement: Judgement) -> HealthTracker | None:
        policy = self.policy
        if judgement.rule is None:
            return None
        return HealthTracker(
            judgement.rule, policy.trip_after, policy.recover_after, policy.min_drafts
        )

    samples_exactly = True
    """The pool knows nothing against its engines' sampling (the provider does)."""

    @property
    def endpoints(self) -> list[Endpoint]:
        return self.primaries + ([self.fallback] if self.fallback else [])

    @property
    def base_url(self) -> str:
        try:
            return self._choose(set()).url
        except EngineUnavailable:
            return self.primaries[0].url

    # --- routing --------------------------------------------------------------------------

    def _choose(self, tried: set[str]) -> Endpoint:
        now = self._clock()

        def usable(endpoint: Endpoint) -> bool:
            return endpoint.url not in tried and endpoint.available(now)

        turn = next(self._turn)
        order = (
            self.primaries[turn % len(self.primaries) :]
            + self.primaries[: turn % len(self.primaries)]
        )
        good = [e for e in order if usable(e) and not e.degraded]
        if good:
            return self._note_route(min(good, key=Endpoint.load), "primary")
        if self.fallback is not None and usable(self.fallback):
            return self._note_route(self.fallback, "fallback")
        degraded = [e for e in order if usable(e)]
        if degraded:  # speculation that does not pay still beats no completion
            return self._note_route(min(degraded, key=Endpoint.load), "degraded primary")
        raise EngineUnavailable(
            "no engine endpoint is reachable: "
            + "; ".join(f"{e.url}: {e.last_error}" for e in self.endpoints)
        )

    def _note_route(self, endpoint: Endpoint, route: str) -> Endpoint:
        if route != self._route:
            logger.warning("completions now go to the %s endpoint %s", route, endpoint.url)
            self._route = route
        return endpoint

    async def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        """Stream from the chosen endpoint; an unreachable one is skipped before any output."""
        self._ensure_polling()
        if request.n is None:  # probes replay a plain request, not a batch of alternatives
            self._last_request = request
        tried: set[str] = set()
        while True:
            endpoint = self._choose(tried)
            started = False
            endpoint.inflight += 1
            try:
                # Closed with this generator, not when collected: closing is what stops the
                # endpoint's generation.
                async with contextlib.aclosing(endpoint.client.stream(request)) as chunks:
                    async for chunk in chunks:
                        started = True
                        yield chunk
                endpoint.mark_up()
                return
            except EngineUnavailable as error:
                endpoint.mark_down(self._clock(), self.policy.retry_after_s, str(error))
                tried.add(endpoint.url)
                if started or len(tried) == len(self.endpoints):
                    raise
            finally:
                endpoint.inflight -= 1

    async def served_model(self) -> ServedModel:
        """What the pool serves, asked of the endpoint a completion would go to now (replicas
        and the fallback serve the same model: the prompt format must fit all of them)."""
        return await self._ask(lambda client: client.served_model())

    async def count_tokens(self, text: str) -> int:
        return await self._ask(lambda client: client.count_tokens(text))

    def model_source(self) -> object:
        return self

    async def _ask(self, question: Callable[[EngineClient], Awaitable[T]]) -> T:
        tried: set[str] = set()
        while True:
            endpoint = self._choose(tried)
            try:
                return await question(endpoint.client)
            except EngineUnavailable as error:
                endpoint.mark_down(self._clock(), self.policy.retry_after_s, str(error))
                tried.add(endpoint.url)
                if len(tried) == len(self.endpoints):
                    raise

    # --- monitoring -----------------------------------------------------------------------

    def _ensure_polling(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._poll_forever())

    async def _poll_forever(self) -> None:
        while True:
            try:
                await self.poll_once()
                await self.probe_degraded()
            except asyncio.CancelledError:
                raise
            except Exception:  # monitoring must never take completions down with it
                logger.exception("engine monitoring failed")
            await asyncio.sleep(self.policy.poll_interval_s)

    async def poll_once(self) -> None:
        """Scrape every endpoint's /metrics and update health, load and failover state."""
        await asyncio.gather(*(self._poll(endpoint) for endpoint in self.endpoints))

    async def _poll(self, endpoint: Endpoint) -> None:
        try:
            result = await scrape(self._http, endpoint.root, self._clock)
        except httpx.HTTPError as error:
            endpoint.mark_down(self._clock(), self.policy.retry_after_s, f"/metrics: {error!r}")
            return
        endpoint.mark_up()
        endpoint.scraped = True
        endpoint.metrics = result is not None
        if result is not None and endpoint.identity is None:
            endpoint.identity = await identify(self._http, endpoint.root, result)
            reason = endpoint.unread_reason()
            if reason is not None:
                logger.warning("%s", reason)
        # Only an engine's own counters make a window: a router's mix its replicas'.
        if result is not None and endpoint.identity and endpoint.identity.kind == "engine":
            endpoint.monitor.observe(result)
        if endpoint.replicas is not None:
            await endpoint.replicas.poll(self._http, self._clock)
        if endpoint.tracker is not None and endpoint.read():
            self._evaluate(endpoint, endpoint.tracker)

    def _evaluate(self, endpoint: Endpoint, tracker: HealthTracker) -> None:
        window = endpoint.health_window()
        change = tracker.observe(window)
        if change is None or window is None or endpoint.judgement is None:
            return
        rule, judgement = tracker.rule, endpoint.judgement
        what = f"{SIGNAL_NAMES[rule.signal]} {tracker.value:.2f}"
        method = judgement.method or "unknown method"
        if change == "tripped":
            logger.warning(
                "speculative decoding at %s does not pay: %s (< %s; %s, %s) over %d drafts: "
                "routing completions %s",
                endpoint.url,
                what,
                rule.threshold,
                method,
                judgement.source,
                window.drafts,
                f"to the fallback {self.fallback.url}" if self.fallback else "elsewhere",
            )
        else:
            logger.warning(
                "speculative decoding at %s pays again: %s (>= %s): routing back to it",
                endpoint.url,
                what,
                rule.recovery,
            )

    async def probe_degraded(self) -> None:
        """Replay the latest request to degraded primaries, so their acceptance is measured."""
        now = self._clock()
        if now - self._last_probe < self.policy.probe_interval_s:
            return
        targets = [e for e in self.primaries if e.degraded and e.available(now)]
        if not targets or not self._has_alternative(now):
            # With nowhere else to go the degraded primaries serve the editors' own requests,
            # which measure them; replaying one would only add load (e.g. behind a router).
            return
        self._last_probe = now
        request = self._last_request or PROBE
        await asyncio.gather(*(self._probe(endpoint, request) for endpoint in targets))

    def _has_alternative(self, now: float) -> bool:
        """Whether completions can go somewhere else than a degraded primary."""
        if self.fallback is not None and self.fallback.available(now):
            return True
        return any(not e.degraded and e.available(now) for e in self.primaries)

    async def _probe(self, endpoint: Endpoint, request: CompletionRequest) -> None:
        try:
            async for _ in endpoint.client.stream(request):
                pass
        except EngineUnavailable as error:
            endpoint.mark_down(self._clock(), self.policy.retry_after_s, str(error))
        except EngineError as error:
            logger.info("probe of %s failed: %s", endpoint.url, error)

    # --- reporting and shutdown -----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "route": self._route,
            "endpoints": [endpoint.snapshot() for endpoint in self.endpoints],
        }

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        for endpoint in self.endpoints:
            await endpoint.client.aclose()
        if self._owns_http:
            await self._http.aclose()


def router_from_settings(
    options: EngineSettings, url: str, embedded: tuple[str, Recorded] | None = None
) -> Router:
    """The router the LSP server uses: `endpoints` (else `url`) plus the optional fallback;
    `embedded` is the embedded engine's URL and what `engine up` recorded of it."""
    key = options.api_key.get_secret_value() if options.api_key else None
    try:
        verify = verify_option(options)  # engine.tls_verify / engine.ca_file (engine/tls.py)
    except ConfigError as error:  # still verify, against the default CAs: fail closed
        logger.error("%s; verifying against the default CAs instead", error)
        verify = True

    def make_client(base_url: str) -> EngineClient:
        return EngineClient(
            base_url,
            api_key=key,
            model=options.model,
            connect_timeout_s=options.connect_timeout_s,
            read_timeout_s=options.read_timeout_s,
            verify=verify,
        )

    def recorded(primary: str) -> Recorded | None:
        if embedded is None or embedded[0].rstrip("/") != primary:
            return None
        return embedded[1]

    policy = RoutingPolicy.from_settings(options)
    primaries = [u.rstrip("/") for u in options.endpoints] or [url.rstrip("/")]
    return Router(
        primaries,
        options.fallback_url,
        make_client=make_client,
        policy=policy,
        judgements=[judge(options, recorded(primary)) for primary in primaries],
        replica_metrics=options.replica_metrics,
        verify=verify,
    )
