"""The naive request the quality benchmarks compare with: no server, the text before the
cursor as the whole prompt, greedy, straight to the engine, cut at the first line break."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import httpx

MAX_TOKENS = 48
"""As the server's completion.singleLineMaxTokens default."""


@dataclass(frozen=True, slots=True)
class NaiveAnswer:
    text: str
    """The first line, trailing whitespace stripped."""
    tokens: int
    """Streamed chunks read (a token each, or more with speculative decoding)."""
    first_token_ms: float | None
    round_trip_ms: float


class NaiveEngine:
    """Prefix-only single-line requests to one OpenAI-compatible engine."""

    def __init__(self, engine_url: str | None) -> None:
        if not engine_url:
            raise ValueError("the naive mode needs --engine-url")
        self._url = engine_url.rstrip("/")
        self._http = httpx.AsyncClient(timeout=300.0)
        self._model: str | None = None

    async def first_line(self, prompt: str) -> NaiveAnswer:
        if self._model is None:
            models = (await self._http.get(f"{self._url}/models")).json()
            self._model = str(models["data"][0]["id"])
        started = time.perf_counter()
        first_token: float | None = None
        body = {
            "model": self._model,
            "prompt": prompt,
            "max_tokens": MAX_TOKENS,
            "temperature": 0.0,
            "stream": True,
        }
        text, tokens = "", 0
        async with self._http.stream("POST", f"{self._url}/completions", json=body) as answer:
            answer.raise_for_status()
            async for line in answer.aiter_lines():
                payload = line.removeprefix("data:").strip()
                if not line.startswith("data:") or payload == "[DONE]":
                    continue
                text += str(json.loads(payload)["choices"][0].get("text") or "")
                tokens += 1
                if first_token is None:
                    first_token = (time.perf_counter() - started) * 1000.0
                if "\n" in text:
                    break  # leaving the block closes the stream: the engine stops
        round_trip = (time.perf_counter() - started) * 1000.0
        return NaiveAnswer(text.split("\n", 1)[0].rstrip(), tokens, first_token, round_trip)

    async def close(self) -> None:
        await self._http.aclose()
