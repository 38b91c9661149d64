"""Engine-facing data types and the protocol the completion pipeline codes against."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


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


class CompletionEngine(Protocol):
    """What the pipeline needs from an engine: a base URL for messages and a token stream."""

    @property
    def base_url(self) -> str: ...

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]: ...


@dataclass(frozen=True, slots=True)
class ServedModel:
    """What an engine says it serves (`/v1/models`): the name to request and where from."""

    id: str
    root: str | None = None
    """The weights' repository id or folder (vLLM's `root`), when the engine says."""
    max_model_len: int | None = None


@runtime_checkable
class DescribedEngine(Protocol):
    """An engine that can name its model and count tokens with the model's own tokenizer."""

    async def served_model(self) -> ServedModel: ...

    async def count_tokens(self, text: str) -> int: ...

    def model_source(self) -> object:
        """An identity that changes when the engine behind may serve another model."""
        ...
