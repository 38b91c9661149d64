"""A debounce that follows the engine: wait longer before asking a slow engine.

vLLM checks for aborted requests only between engine steps, so a request whose prefill has
started costs the whole prefill even when the next keystroke closes its stream 100 ms later
(measured on the embedded CPU engine: one request aborted after 140 ms doubled the next
one's time to first token, docs/benchmarks/replay/README.md). While the engine's time to
first token is far above the typist's gaps between keystrokes, each request sent mid-burst
is doomed and holds the engine up for the request at the next pause. `EnginePace` keeps an
estimate of that time; `debounce_s` stretches the configured debounce towards a fraction of
it, bounded, so keystrokes in a burst stop reaching the engine while a fast engine (first
token within a few debounces) keeps the configured debounce.

The estimate learns from two kinds of samples: a request's time to first token, and, for a
request closed before its first token came, how long it had waited (a lower bound: the
engine took at least that long), which is all a slow engine ever shows while the user types.

Opt-in (`completion.adaptiveDebounceMaxMs`, default 0): a single typist on the embedded engine
got ghost text sooner without it (docs/benchmarks/replay/README.md); what it saves is engine
time, which counts where many typists share one slow engine.
"""

from __future__ import annotations

SHARE = 0.25
"""Fraction of the engine's time to first token waited before sending: a doomed request
holds the engine up for about half its prefill on average; waiting a quarter of it costs
less at a pause than it saves there."""
WEIGHT = 0.5
"""Weight of a new time-to-first-token sample in the running estimate."""


class EnginePace:
    """The engine's recent time to first token, and the debounce that follows it."""

    def __init__(self) -> None:
        self.ttft_s = 0.0
        """Estimated seconds from sending a request to its first token (0: nothing seen)."""

    def answered(self, ttft_s: float) -> None:
        """A request's first token came `ttft_s` seconds after it was sent."""
        if self.ttft_s <= 0.0:
            self.ttft_s = ttft_s
        else:
            self.ttft_s += WEIGHT * (ttft_s - self.ttft_s)

    def unanswered(self, waited_s: float) -> None:
        """A request was closed after `waited_s` seconds without a first token."""
        self.ttft_s = max(self.ttft_s, waited_s)

    def debounce_s(self, configured_ms: int, cap_ms: int) -> float:
        """Seconds to wait before sending an automatic request: the configured debounce, or
        up to `cap_ms` more while the engine is slow (`cap_ms` 0 or below the configured
        debounce: the configured one)."""
        configured = configured_ms / 1000.0
        if cap_ms <= configured_ms:
            return configured
        return min(cap_ms / 1000.0, max(configured, SHARE * self.ttft_s))
