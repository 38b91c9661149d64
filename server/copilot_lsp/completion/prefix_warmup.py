"""Prefix warm-up: the prompt's head sent ahead, while the engine would otherwise be idle.

With the workspace index on, a prompt starts with code from other files (the head: the
rendered prompt up to where the current file's code starts, `PromptTemplate.head`). It stays
byte-identical while the user types in one place and changes when the cursor moves to where
other code is relevant; a longer head costs prefill. vLLM's prefix cache keeps the KV of the
full blocks of every prompt it has computed, so a request for the head alone (one token
generated, as llama.vim's background `n_predict: 0` requests) leaves it there for the next
keystroke's request, which then prefills only the current file's part.

The server learns where the cursor is only from completion requests, so the heads offered
are those that requests build (`offer`, in the prepare stage). A request that got its first
token has put its whole prompt in the cache: its head needs nothing more (`answered`). One
that the next keystroke closed before that may have left its head half computed; once the
engine has no completion open (the inflight limiter's `on_idle`, during the next request's
debounce for instance), the newest such head goes out as a warm-up, once per head. It never
holds a slot of `completion.maxInflight` and never waits for one: a completion that takes a
slot closes the warm-up (the limiter's `on_busy`), and the engine aborts it after its
current step, keeping what it computed. Warm-ups are not completions: they are counted here only
(`copilot/stats` → `engine.prefix_warm_ups`), never in the completion log or its rolling
figures.

Off by default (`context.workspace.warmPrefix`): on the embedded CPU engine, where vLLM
aborts a request only between steps and a prefill is one step, it made typing pauses worse
in every repeat of the replay (docs/benchmarks/replay/README.md, "Prefix warm-up").

Behind a router (engine/router.py) a warm-up is a request like any other: whether the next
request lands on the replica that was warmed is the routing policy's call (vllm-router's
prefix-aware policies route both by the same leading text).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from copilot_lsp.engine.types import CompletionEngine, CompletionRequest
from copilot_lsp.errors import EngineError

logger = logging.getLogger(__name__)

MIN_HEAD_CHARS = 128
"""Shorter heads are not worth a request: vLLM caches whole KV blocks only, 32 tokens on the
embedded CPU profiles (`--block-size 32`, configs/profiles) and 16 by default on GPUs, so a
head under a block or two leaves nothing or next to nothing in the cache."""
NOT_FORWARDED = frozenset({"max_tokens", "n", "best_of", "stream", "prompt", "logprobs"})
"""Keys of `completion.extraBody` a warm-up leaves out: it asks for one token of one choice."""


@dataclass(slots=True)
class WarmUpCounts:
    """What happened to the heads offered (`copilot/stats` → `engine.prefix_warm_ups`)."""

    sent: int = 0
    """Warm-up requests sent to the engine."""
    done: int = 0
    """Answered: the head is in the engine's prefix cache."""
    cancelled: int = 0
    """Closed because a completion started (not sent again: what the engine began of it
    stays in the cache)."""
    failed: int = 0
    skipped_answered: int = 0
    """Heads not sent because a completion carrying them got its first token first."""
    skipped_superseded: int = 0
    """Heads not sent because a newer head came before the engine was idle."""
    skipped_busy: int = 0
    """Idle moments at which a head waited but a completion was in flight or the engine
    failing (the head stays offered)."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class PrefixWarmer:
    """The heads offered for one engine, and the warm-up request in flight (at most one)."""

    def __init__(self, engine: CompletionEngine, busy: Callable[[], bool]) -> None:
        """`busy` says whether the engine must be left alone now (a completion in flight, a
        failure being backed off)."""
        self._engine = engine
        self._busy = busy
        self.counts = WarmUpCounts()
        self._warm: str | None = None
        """The head last known to be in the engine's prefix cache."""
        self._pending: tuple[str, dict[str, Any]] | None = None
        """The head to send at the next idle moment, with the body's extra keys."""
        self._task: asyncio.Task[None] | None = None
        self._sending: str | None = None

    def offer(self, head: str, extra: dict[str, Any]) -> None:
        """A completion's prompt starts with `head` (`extra`: `completion.extraBody`, which
        may pick the model or adapter, and with it the cache)."""
        if len(head) < MIN_HEAD_CHARS or head in (self._warm, self._sending):
            return
        if self._pending is not None and self._pending[0] != head:
            self.counts.skipped_superseded += 1
        self._pending = (head, {k: v for k, v in extra.items() if k not in NOT_FORWARDED})

    def answered(self, head: str) -> None:
        """A completion whose prompt starts with `head` got its first token: the engine has
        computed the head."""
        self._warm = head
        if self._pending is not None and self._pending[0] == head:
            self._pending = None
            self.counts.skipped_answered += 1

    def on_busy(self) -> None:
        """A completion takes the engine: close the warm-up (the engine keeps what it
        computed of it)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()

    def on_idle(self) -> None:
        """The engine has no completion open: send the head waiting, if any."""
        if self._pending is None or (self._task is not None and not self._task.done()):
            return
        if self._busy():
            self.counts.skipped_busy += 1
            return
        head, extra = self._pending
        self._pending = None
        # Once per head, answered or closed: the engine aborts a closed request only after
        # its current step, so a warm-up it began has left the head's blocks in the cache,
        # and sending it again at every idle moment is a request per keystroke (measured:
        # 240 closed of 242 sent in one replay, docs/benchmarks/replay/prefix-warmup).
        self._warm = head
        self._sending = head
        self.counts.sent += 1
        request = CompletionRequest(prompt=head, max_tokens=1, temperature=0.0, extra=extra)
        self._task = asyncio.ensure_future(self._send(request))

    async def close(self) -> None:
        """Stop the warm-up in flight, if any (the server shuts down)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _send(self, request: CompletionRequest) -> None:
        stream = self._engine.stream(request)
        try:
            async for _ in stream:
                pass  # one token at most: the first chunk means the prefill is done
        except asyncio.CancelledError:
            self.counts.cancelled += 1
            raise
        except Exception as error:  # a background request: whatever fails, it ends here
            self.counts.failed += 1
            level = logging.DEBUG if isinstance(error, EngineError) else logging.WARNING
            logger.log(level, "prefix warm-up failed: %s", type(error).__name__)
        else:
            self.counts.done += 1
        finally:
            self._sending = None
            # Closing the stream closes the HTTP response: the engine aborts the request.
            await stream.aclose()
