"""Streaming client for OpenAI-compatible `/v1/completions` (vLLM), over httpx.

Always streams: closing the response is what makes vLLM abort the request, so an abandoned
completion stops costing engine time the moment we stop reading. A completion read to its end
leaves its connection open for the next one, and one left early has a new connection opened
behind it while the user types on: the next keystroke's request waits for no TCP or TLS
handshake (a round trip or three to an engine across the network).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import json
import logging
import math
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx

from copilot_lsp.engine.sse import DONE, SSEDecoder
from copilot_lsp.engine.types import CompletionRequest, ServedModel, StreamChunk
from copilot_lsp.errors import (
    EngineError,
    EngineHTTPError,
    EngineStreamError,
    EngineUnavailable,
)

logger = logging.getLogger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")

KEEPALIVE_EXPIRY_S = 4.0
"""How long an idle connection is kept for the next request: under the 5 s after which vLLM
(uvicorn) closes one, so a request is rarely sent on a connection the engine is closing."""

SPARE_DELAY_S = 0.02
"""How long after a stream was left the spare connection is opened: the completion's answer
goes out to the editor first."""

_DRAIN_S = 0.25
"""How long to wait for the end of the body after `[DONE]` before giving the connection up."""


class EngineClient:
    """Talks to one OpenAI-compatible base URL (`…/v1`)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        http: httpx.AsyncClient | None = None,
        connect_timeout_s: float = 2.0,
        read_timeout_s: float = 30.0,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s)
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=timeout, verify=verify, limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S)
        )
        self._headers = headers
        self._spare: asyncio.Task[None] | None = None
        self._spare_connecting = False

    async def aclose(self) -> None:
        if self._spare is not None:
            self._spare.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._spare
        if self._owns_http:
            await self._http.aclose()

    samples_exactly = True
    """A client knows nothing against its engine's sampling (the provider does)."""

    async def served_models(self) -> list[ServedModel]:
        """The engine's `/v1/models`, with each model's root (weights) when it says."""
        try:
            response = await self._http.get(f"{self.base_url}/models", headers=self._headers)
        except httpx.HTTPError as error:
            raise _unavailable(self.base_url, error) from None
        if response.status_code != 200:
            raise EngineHTTPError(response.status_code, response.text[:300])
        try:
            return [_served(entry) for entry in response.json()["data"]]
        except (ValueError, KeyError, TypeError):
            raise EngineStreamError(f"{self.base_url}/models answered an unexpected body") from None

    async def served_model(self) -> ServedModel:
        """The model completions are requested from: the configured one, else the first the
        engine serves (its name is kept for every later request)."""
        models = await self.served_models()
        if self._model is None:
            if not models:
                raise EngineError(f"the engine at {self.base_url} serves no model")
            self._model = models[0].id
        for model in models:
            if model.id == self._model:
                return model
        return ServedModel(self._model)

    def model_source(self) -> object:
        return self

    async def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the served model's tokenizer (vLLM's `/tokenize`)."""
        body = {
            "model": await self._model_name(),
            "prompt": wire_text(text),
            "add_special_tokens": False,
        }
        url = f"{self.base_url.removesuffix('/v1')}/tokenize"
        try:
            response = await self._http.post(url, json=body, headers=self._headers)
        except httpx.HTTPError as error:
            raise _unavailable(self.base_url, error) from None
        if response.status_code != 200:
            raise EngineHTTPError(response.status_code, response.text[:300])
        try:
            count = response.json()["count"]
        except (ValueError, KeyError, TypeError):
            raise EngineStreamError(f"{url} answered an unexpected body") from None
        if not isinstance(count, int) or isinstance(count, bool):
            raise EngineStreamError(f"{url} answered an unexpected body")
        return count

    async def _model_name(self) -> str:
        """The name requests carry: asked of the engine once when not configured."""
        if self._model is None:
            return (await self.served_model()).id
        return self._model

    async def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        """Yield chunks as they arrive; leaving the iteration early closes the HTTP stream."""
        body: dict[str, Any] = {
            "model": await self._model_name(),
            "prompt": wire_text(request.prompt),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.n is not None:
            body["n"] = request.n
        if request.logprobs is not None:
            body["logprobs"] = request.logprobs
        body.update(request.extra)
        url = f"{self.base_url}/completions"
        await self._settle_spare()
        for attempt in (1, 2):
            answered = False
            try:
                async with self._http.stream(
                    "POST", url, json=body, headers=self._headers
                ) as response:
                    answered = True
                    if response.status_code != 200:
                        detail = (await response.aread()).decode("utf-8", "replace")[:300]
                        raise EngineHTTPError(
                            response.status_code,
                            detail,
                            retry_after_s=retry_after(response.headers.get("retry-after")),
                        )
                    async for chunk in _decode_stream(response, request.choices):
                        yield chunk
                return
            except (GeneratorExit, asyncio.CancelledError):
                if answered:  # left early: the response closed its connection
                    self._open_spare_connection()
                raise
            except httpx.TransportError as error:
                if attempt == 1 and not answered and _dropped_connection(error):
                    # A kept-alive connection the engine closed while it sat in the pool: the
                    # request never reached it, so send it once more on a new connection.
                    logger.debug("connection to %s was closed; sending again", self.base_url)
                    continue
                raise _unavailable(self.base_url, error) from None

    def _open_spare_connection(self) -> None:
        """Open a connection for the next completion now, in the background (the cheapest
        request, the model list, leaves one in the pool)."""
        if self._spare is not None and not self._spare.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # the stream was collected after its event loop stopped
        self._spare = loop.create_task(self._warm())

    async def _warm(self) -> None:
        await asyncio.sleep(SPARE_DELAY_S)
        self._spare_connecting = True
        try:
            response = await self._http.get(f"{self.base_url}/models", headers=self._headers)
        except httpx.HTTPError as error:
            logger.debug("no spare connection to %s: %s", self.base_url, error)
            return
        finally:
            self._spare_connecting = False
        await response.aclose()

    async def _settle_spare(self) -> None:
        """Before a request: a spare connection being opened is waited for (it is further
        along than a new one would be, and a second one would cost another handshake); one
        not started yet is called off (the request opens the connection itself)."""
        spare = self._spare
        if spare is None or spare.done():
            return
        if not self._spare_connecting:
            spare.cancel()
            return
        await asyncio.wait({spare})  # not cancelled with the request: it is shared


async def _payloads(response: httpx.Response) -> AsyncIterator[str]:
    """Event payloads, including one left open when the stream ended without a blank line."""
    decoder = SSEDecoder()
    async for line in response.aiter_lines():
        for payload in decoder.feed(line):
            yield payload
    for payload in decoder.flush():
        yield payload


async def _decode_stream(response: httpx.Response, choices: int = 1) -> AsyncIterator[StreamChunk]:
    """The stream's chunks; an EngineStreamError when it ends before each of the `choices`
    finished (without `[DONE]`: a stream that just stops may have been cut anywhere)."""
    finished: set[int] = set()
    payloads = _payloads(response)
    try:
        async for payload in payloads:
            if payload.strip() == DONE:
                await _read_to_end(payloads)
                return
            for chunk in _parse_event(payload):
                if chunk.finish_reason is not None:
                    finished.add(chunk.index)
                yield chunk
    except (httpx.RemoteProtocolError, httpx.ReadError) as error:
        raise EngineStreamError(f"the engine's stream was cut: {error}") from None
    if len(finished) < choices:
        raise EngineStreamError("the engine's stream ended before the completion finished")


async def _read_to_end(rest: AsyncIterator[str]) -> None:
    """Read what follows `[DONE]` (the end of the body): httpx keeps only a connection whose
    response was read to its end. An engine that sends more, or holds the body open, costs the
    connection instead of holding the completion up."""
    try:
        async with asyncio.timeout(_DRAIN_S):
            async for _ in rest:
                pass
    except (TimeoutError, httpx.HTTPError, EngineStreamError):
        pass


def _dropped_connection(error: httpx.TransportError) -> bool:
    """The connection closed under a request before any answer: what a kept-alive connection
    does when the engine closed it in the pool (a refused connection is not this)."""
    return isinstance(error, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError)


def _parse_event(payload: str) -> list[StreamChunk]:
    """The chunks of one event: one per choice it carries (vLLM sends one), or the closing
    usage-only chunk."""
    try:
        event = json.loads(payload)
    except ValueError:
        raise EngineStreamError(f"malformed event from the engine: {payload[:120]!r}") from None
    if not isinstance(event, dict):
        raise EngineStreamError(f"unexpected event from the engine: {payload[:120]!r}")
    if "error" in event:
        error = event["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise EngineStreamError(f"the engine reported an error mid-stream: {message}")
    usage = event.get("usage") or {}
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    choices = event.get("choices") or []
    if not isinstance(choices, list):
        raise EngineStreamError(f"unexpected event from the engine: {payload[:120]!r}")
    if not choices:
        # The closing usage-only event carries the final token count.
        return [StreamChunk("", tokens, None)] if tokens is not None else []
    chunks = []
    for choice in choices:
        if not isinstance(choice, dict):
            raise EngineStreamError(f"unexpected event from the engine: {payload[:120]!r}")
        index = choice.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise EngineStreamError(f"unexpected choice index from the engine: {index!r}")
        chunks.append(
            StreamChunk(
                text=str(choice.get("text") or ""),
                completion_tokens=tokens,
                finish_reason=choice.get("finish_reason"),
                index=index,
                logprobs=token_logprobs(choice.get("logprobs")),
            )
        )
    return chunks


def token_logprobs(value: Any) -> tuple[tuple[str, float], ...]:
    """(token, log-probability) pairs from a choice's OpenAI-completions `logprobs` object
    (`tokens` and `token_logprobs` side by side, as vLLM streams them); none from anything
    else: an engine that sends other shapes is not judged by them."""
    if not isinstance(value, dict):
        return ()
    tokens, logprobs = value.get("tokens"), value.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(logprobs, list):
        return ()
    if len(tokens) != len(logprobs):
        return ()
    pairs = []
    for token, logprob in zip(tokens, logprobs, strict=True):
        if (
            not isinstance(token, str)
            or not isinstance(logprob, int | float)
            or isinstance(logprob, bool)
            or math.isnan(logprob)
        ):
            return ()
        pairs.append((token, max(float(logprob), -1e9)))  # a -Infinity kept finite
    return tuple(pairs)


def retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if any."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())


def wire_text(text: str) -> str:
    """`text` as valid Unicode for the engine's JSON: surrogate halves that an editor's
    UTF-16 buffer holds side by side become one character, lone ones U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _served(entry: Any) -> ServedModel:
    identifier = entry["id"]
    if not isinstance(identifier, str):
        raise TypeError("model id")
    root = entry.get("root")
    length = entry.get("max_model_len")
    return ServedModel(
        identifier,
        root if isinstance(root, str) else None,
        length if isinstance(length, int) and not isinstance(length, bool) else None,
    )


def _unavailable(base_url: str, error: httpx.HTTPError) -> EngineUnavailable:
    kind = type(error).__name__
    return EngineUnavailable(f"cannot reach the engine at {base_url} ({kind}: {error})")
