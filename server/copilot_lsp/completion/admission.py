"""Whether a completion may go to the engine now: backoff after failures, a global cap.

A completion server sits in every keystroke; when the engine fails (refused, timed out, 429,
5xx, a broken stream) asking it again on the next keystroke only adds load to an engine that
is already in trouble. `Backoff` spaces the attempts: after the n-th failure in a row,
automatic completions skip the engine for `min(cap, 0.25 s · 2^(n-1))`, or for as long as a
`Retry-After` header asked (up to `RETRY_AFTER_CAP_S`). The first completion after the pause
is the probe: success resets the streak (recovery is automatic), failure doubles the pause.
A completion the user asked for explicitly (invoked, not automatic) is always tried, unless
the engine itself asked us to wait with `Retry-After`.

`InflightLimiter` caps the engine requests this server has open at once, over all documents
(one per document is the pipeline's own rule): a request over the cap waits for a slot, and a
newer keystroke cancels it while it waits, so it never reaches the engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

BASE_DELAY_S = 0.25
RETRY_AFTER_CAP_S = 60.0


class Backoff:
    """Consecutive engine failures and until when automatic completions leave it alone."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.failures = 0
        self._until = 0.0
        self._server_asked = False

    def wait_s(self, *, automatic: bool) -> float:
        """Seconds left before a completion of this kind may ask the engine (0: go)."""
        left = self._until - self._clock()
        if left <= 0 or (not automatic and not self._server_asked):
            return 0.0
        return left

    def failed(self, cap_s: float, retry_after_s: float | None = None) -> float:
        """Note one failure; returns the pause it starts."""
        self.failures += 1
        delay: float = min(cap_s, BASE_DELAY_S * 2.0 ** min(self.failures - 1, 30))
        self._server_asked = retry_after_s is not None and retry_after_s > 0
        if retry_after_s is not None and retry_after_s > 0:
            delay = max(delay, min(retry_after_s, RETRY_AFTER_CAP_S))
        self._until = self._clock() + delay
        return delay

    def succeeded(self) -> None:
        self.failures = 0
        self._until = 0.0
        self._server_asked = False


class InflightLimiter:
    """At most `cap` holders at once; the others wait in `slot` (cancellable). `on_busy` hears
    each holder take a slot, `on_idle` the last one leave with nobody waiting (the prefix
    warm-up runs in between: completion/prefix_warmup.py)."""

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.on_busy: Callable[[], None] = lambda: None
        self.on_idle: Callable[[], None] = lambda: None

    @property
    def waiting(self) -> int:
        """Holders waiting for a slot now (over the cap)."""
        return sum(not waiter.done() for waiter in self._waiters)

    @asynccontextmanager
    async def slot(self, cap: int) -> AsyncIterator[None]:
        while self.active >= max(cap, 1):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.on_busy()
        try:
            yield
        finally:
            self.active -= 1
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:  # each re-checks the cap; the losers wait again
                if not waiter.done():
                    waiter.set_result(None)
            if self.active == 0 and not waiters:
                self.on_idle()
