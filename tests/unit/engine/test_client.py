"""Unit tests for copilot_lsp.engine.client over httpx.MockTransport (no network)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.types import CompletionRequest, StreamChunk
from copilot_lsp.errors import (
    EngineError,
    EngineHTTPError,
    EngineStreamError,
    EngineUnavailable,
)

BASE = "http://engine.test/v1"


def event(text: str | None = None, finish: str | None = None, tokens: int | None = None) -> str:
    body: dict[str, Any] = {"id": "cmpl-1", "object": "text_completion", "model": "m"}
    body["choices"] = [] if text is None else [{"index": 0, "text": text, "finish_reason": finish}]
    if tokens is not None:
        body["usage"] = {
            "prompt_tokens": 5,
            "completion_tokens": tokens,
            "total_tokens": 5 + tokens,
        }
    return f"data: {json.dumps(body)}\n\n"


def sse(*events: str) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content="".join(events).encode()
    )


GOOD_STREAM = (
    event("def", tokens=1),
    event(" f", tokens=2),
    event("():", finish="length", tokens=3),
    event(None, tokens=3),
    "data: [DONE]\n\n",
)


class Engine:
    """Records requests; answers /models and /completions with scripted handlers."""

    def __init__(
        self,
        completions: Callable[[httpx.Request], httpx.Response] | None = None,
        models: list[str] | None = None,
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.model_calls = 0
        self.models = ["served-model", "other"] if models is None else models
        self.completions = completions or (lambda request: sse(*GOOD_STREAM))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/v1/models":
            self.model_calls += 1
            return httpx.Response(
                200, json={"object": "list", "data": [{"id": m} for m in self.models]}
            )
        if request.url.path == "/v1/completions":
            return self.completions(request)
        return httpx.Response(404, text="not found")

    def completion_bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.url.path == "/v1/completions"]


def make_client(engine: Engine, **kwargs: Any) -> EngineClient:
    http = httpx.AsyncClient(transport=httpx.MockTransport(engine))
    return EngineClient(BASE, http=http, **kwargs)


async def collect(client: EngineClient, request: CompletionRequest) -> list[StreamChunk]:
    return [chunk async for chunk in client.stream(request)]


REQUEST = CompletionRequest(
    prompt="def f",
    max_tokens=17,
    temperature=0.25,
    stop=("\n\n", "<|endoftext|>"),
    extra={"top_p": 0.9, "seed": 3},
)


async def test_request_body_fields() -> None:
    engine = Engine()
    client = make_client(engine, model="configured")
    await collect(client, REQUEST)
    [body] = engine.completion_bodies()
    assert body["model"] == "configured"
    assert body["prompt"] == "def f"
    assert body["max_tokens"] == 17
    assert body["temperature"] == 0.25
    assert body["stream"] is True
    assert body["stop"] == ["\n\n", "<|endoftext|>"]
    assert body["top_p"] == 0.9
    assert body["seed"] == 3
    assert engine.requests[-1].method == "POST"
    assert str(engine.requests[-1].url) == f"{BASE}/completions"
    assert engine.model_calls == 0


async def test_no_stop_field_without_stop_sequences() -> None:
    engine = Engine()
    client = make_client(engine, model="m")
    await collect(client, CompletionRequest(prompt="x", max_tokens=1))
    [body] = engine.completion_bodies()
    assert "stop" not in body


async def test_extra_fields_override_defaults() -> None:
    engine = Engine()
    client = make_client(engine, model="m")
    await collect(client, CompletionRequest(prompt="x", max_tokens=1, extra={"temperature": 0.7}))
    assert engine.completion_bodies()[0]["temperature"] == 0.7


async def test_authorization_header_with_api_key() -> None:
    engine = Engine()
    client = make_client(engine, api_key="sk-abc", model="m")
    await collect(client, REQUEST)
    await client.served_models()
    for request in engine.requests:
        assert request.headers["authorization"] == "Bearer sk-abc"


async def test_no_authorization_header_without_api_key() -> None:
    engine = Engine()
    client = make_client(engine)
    await collect(client, REQUEST)
    assert len(engine.requests) == 2
    for request in engine.requests:
        assert "authorization" not in request.headers


async def test_model_discovered_once() -> None:
    engine = Engine(models=["first-model", "second-model"])
    client = make_client(engine)
    await collect(client, REQUEST)
    await collect(client, REQUEST)
    assert engine.model_calls == 1  # asked once, kept for every later request
    assert (await client.served_model()).id == "first-model"
    assert [b["model"] for b in engine.completion_bodies()] == ["first-model", "first-model"]


async def test_no_model_served_raises() -> None:
    client = make_client(Engine(models=[]))
    with pytest.raises(EngineError, match="serves no model"):
        await collect(client, REQUEST)


async def test_base_url_trailing_slash_is_stripped() -> None:
    engine = Engine()
    http = httpx.AsyncClient(transport=httpx.MockTransport(engine))
    client = EngineClient(BASE + "/", http=http, model="m")
    await collect(client, REQUEST)
    assert str(engine.requests[0].url) == f"{BASE}/completions"


async def test_text_chunks_and_tokens_parsed() -> None:
    chunks = await collect(make_client(Engine(), model="m"), REQUEST)
    assert chunks == [
        StreamChunk("def", 1, None),
        StreamChunk(" f", 2, None),
        StreamChunk("():", 3, "length"),
        StreamChunk("", 3, None),
    ]
    assert "".join(c.text for c in chunks) == "def f():"


async def test_stream_without_usage() -> None:
    engine = Engine(lambda r: sse(event("a"), event("b", finish="stop"), "data: [DONE]\n\n"))
    chunks = await collect(make_client(engine, model="m"), REQUEST)
    assert chunks == [StreamChunk("a", None, None), StreamChunk("b", None, "stop")]


async def test_crlf_sse_stream() -> None:
    body = event("x", finish="stop").replace("\n", "\r\n") + "data: [DONE]\r\n\r\n"
    chunks = await collect(make_client(Engine(lambda r: sse(body)), model="m"), REQUEST)
    assert chunks == [StreamChunk("x", None, "stop")]


async def test_finish_reason_without_done_is_accepted() -> None:
    engine = Engine(lambda r: sse(event("a"), event("b", finish="stop")))
    chunks = await collect(make_client(engine, model="m"), REQUEST)
    assert [c.text for c in chunks] == ["a", "b"]


async def test_done_without_finish_reason_is_accepted() -> None:
    engine = Engine(lambda r: sse(event("a"), "data: [DONE]\n\n"))
    chunks = await collect(make_client(engine, model="m"), REQUEST)
    assert [c.text for c in chunks] == ["a"]


@pytest.mark.parametrize("status", [500, 429, 400, 503])
async def test_http_error_status(status: int) -> None:
    engine = Engine(lambda r: httpx.Response(status, text=f"boom {status}"))
    with pytest.raises(EngineHTTPError) as info:
        await collect(make_client(engine, model="m"), REQUEST)
    assert info.value.status_code == status
    assert f"boom {status}" in info.value.detail


async def test_models_http_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text="unauthorized")

    client = EngineClient(BASE, http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    with pytest.raises(EngineHTTPError) as info:
        await client.served_models()
    assert info.value.status_code == 401


async def test_models_unexpected_body() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"models": []})

    client = EngineClient(BASE, http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    with pytest.raises(EngineStreamError):
        await client.served_models()


async def test_malformed_json_event() -> None:
    engine = Engine(lambda r: sse(event("a"), "data: {not json\n\n", event("b", finish="stop")))
    client = make_client(engine, model="m")
    received: list[str] = []
    with pytest.raises(EngineStreamError, match="malformed"):
        async for chunk in client.stream(REQUEST):
            received.append(chunk.text)
    assert received == ["a"]


@pytest.mark.parametrize("payload", ["[1, 2]", '"text"', '{"choices": ["x"]}'])
async def test_unexpected_event_shape(payload: str) -> None:
    engine = Engine(lambda r: sse(f"data: {payload}\n\n"))
    with pytest.raises(EngineStreamError):
        await collect(make_client(engine, model="m"), REQUEST)


async def test_stream_ending_without_finish_or_done() -> None:
    engine = Engine(lambda r: sse(event("a"), event("b")))
    client = make_client(engine, model="m")
    received: list[str] = []
    with pytest.raises(EngineStreamError, match="ended before"):
        async for chunk in client.stream(REQUEST):
            received.append(chunk.text)
    assert received == ["a", "b"]


async def test_empty_stream_is_an_error() -> None:
    engine = Engine(lambda r: sse())
    with pytest.raises(EngineStreamError):
        await collect(make_client(engine, model="m"), REQUEST)


async def test_error_event_mid_stream() -> None:
    error = {"error": {"message": "out of KV cache", "type": "InternalServerError", "code": 500}}
    engine = Engine(lambda r: sse(event("a"), f"data: {json.dumps(error)}\n\n"))
    with pytest.raises(EngineStreamError, match="out of KV cache"):
        await collect(make_client(engine, model="m"), REQUEST)


async def test_error_event_with_string_error() -> None:
    engine = Engine(lambda r: sse('data: {"error": "plain failure"}\n\n'))
    with pytest.raises(EngineStreamError, match="plain failure"):
        await collect(make_client(engine, model="m"), REQUEST)


async def test_connect_error_is_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = EngineClient(BASE, http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    with pytest.raises(EngineUnavailable, match="ConnectError"):
        await collect(client, REQUEST)  # model discovery fails first
    client = EngineClient(
        BASE, model="m", http=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    with pytest.raises(EngineUnavailable, match=r"engine\.test"):
        await collect(client, REQUEST)


async def test_read_timeout_is_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client = EngineClient(
        BASE, model="m", http=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    with pytest.raises(EngineUnavailable):
        await collect(client, REQUEST)


async def test_stop_reading_early_closes_the_stream() -> None:
    closed: list[bool] = []

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield event("a").encode()
            yield event("b").encode()
            yield event("c", finish="stop").encode()

        async def aclose(self) -> None:
            closed.append(True)

    engine = Engine(lambda r: httpx.Response(200, stream=Body()))
    client = make_client(engine, model="m")
    stream = client.stream(REQUEST)
    async for chunk in stream:
        assert chunk.text == "a"
        break
    await stream.aclose()
    assert closed == [True]


async def test_aclose_leaves_a_passed_in_client_open() -> None:
    engine = Engine()
    http = httpx.AsyncClient(transport=httpx.MockTransport(engine))
    client = EngineClient(BASE, http=http, model="m")
    await client.aclose()
    assert not http.is_closed
    await http.aclose()


async def test_final_event_without_blank_line_is_delivered() -> None:
    final = event("b", finish="stop").rstrip("\n")  # the server closed right after the data
    engine = Engine(lambda r: sse(event("a"), final))
    chunks = await collect(make_client(engine, model="m"), REQUEST)
    assert [c.text for c in chunks] == ["a", "b"]
    assert chunks[-1].finish_reason == "stop"


async def test_final_done_without_blank_line_is_accepted() -> None:
    engine = Engine(lambda r: sse(event("a"), "data: [DONE]"))
    chunks = await collect(make_client(engine, model="m"), REQUEST)
    assert [c.text for c in chunks] == ["a"]


def logprob_event(text: str, logprobs: Any, finish: str | None = None) -> str:
    choice = {"index": 0, "text": text, "finish_reason": finish, "logprobs": logprobs}
    return f"data: {json.dumps({'id': 'cmpl-1', 'choices': [choice]})}\n\n"


async def test_token_logprobs_asked_for_and_parsed_as_vllm_streams_them() -> None:
    """vLLM (CPU build, suffix decoding) streams several tokens per event when speculation
    lands; each event's `logprobs` has them side by side (checked against a real engine)."""
    two = {
        "text_offset": [4, 5],
        "token_logprobs": [-0.15, -1.25],
        "tokens": ["\n", "This"],
        "top_logprobs": [{"\n": -0.15}, {"This": -1.25}],
    }
    engine = Engine(
        lambda r: sse(
            logprob_event("\nThis", two),
            logprob_event("!", {"tokens": ["!"], "token_logprobs": [True]}),  # not a number
            logprob_event("?", {"tokens": ["?", "?"], "token_logprobs": [-1.0]}),  # uneven
            logprob_event("", None, finish="stop"),
            "data: [DONE]\n\n",
        )
    )
    request = CompletionRequest(prompt="x", max_tokens=4, logprobs=0)
    chunks = await collect(make_client(engine, model="m"), request)
    assert engine.completion_bodies()[0]["logprobs"] == 0
    assert [chunk.logprobs for chunk in chunks] == [(("\n", -0.15), ("This", -1.25)), (), (), ()]
    await collect(make_client(engine := Engine(), model="m"), REQUEST)
    assert "logprobs" not in engine.completion_bodies()[0]
