"""Engine-facing data types and the protocol the completion pipeline codes against."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One `/v1/completions` call; `extra` is merged into the JSON body last."""

    prompt: str
    max_tokens: int
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    n: int | None = None
    """Completions sampled from the one prompt (OpenAI's `n`, sent when set; unset: one);
    their chunks arrive interleaved, told apart by `StreamChunk.index`."""
    logprobs: int | None = None
    """OpenAI's `logprobs` (sent when set): each generated token's log-probability comes
    back (`StreamChunk.logprobs`), with this many alternatives' (0: none)."""

    @property
    def choices(self) -> int:
        return self.n or 1


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """Text that arrived in one event, and the engine's running count of generated tokens
    (of this choice while streaming; the closing usage-only event counts all choices)."""

    text: str
    completion_tokens: int | None = None
    finish_reason: str | None = None
    index: int = 0
    """Which of the request's `n` choices the text belongs to."""
    logprobs: tuple[tuple[str, float], ...] = ()
    """(token, log-probability) of the tokens the text came from, in order, when the request
    asked for them and the engine sent them."""


@dataclass(frozen=True, slots=True)
class ServedModel:
    """What an engine says it serves (`/v1/models`): the name to request and where from."""

    id: str
    root: str | None = None
    """The weights' repository id or folder (vLLM's `root`), when the engine says."""
    max_model_len: int | None = None


class CompletionEngine(Protocol):
    """Everything the completion side asks of an engine: the client of one server, the pool
    of endpoints (engine/router.py), the provider that follows the settings
    (engine/provider.py) and the fakes of the tests all implement it."""

    @property
    def base_url(self) -> str:
        """Where completions go now (for messages and logs)."""
        ...

    @property
    def samples_exactly(self) -> bool:
        """False for an engine whose sampled (temperature > 0) output is known to be wrong:
        vLLM's CPU build under speculative decoding (engine/state.py); its greedy output is
        exact. An engine that nothing is known against is taken at its word."""
        ...

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        """The completion's chunks as they arrive; closing the generator stops generation."""
        ...

    async def served_model(self) -> ServedModel | None:
        """The model completions are requested from; None when the engine does not say.
        Raises EngineError when the engine cannot be asked now."""
        ...

    async def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the served model's tokenizer; EngineError when it cannot."""
        ...

    def model_source(self) -> object:
        """An identity that changes when the engine behind may serve another model."""
        ...
