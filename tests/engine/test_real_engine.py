"""The real vLLM CPU engine with the embedded model, driven through the real server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import load_profile
from tests.conftest import REPO, until
from tests.engine.conftest import RealEngine
from tests.lspclient import server_session

pytestmark = [pytest.mark.engine, pytest.mark.timeout(600)]

SAMPLE = REPO / "examples" / "sample.py"
RUNNING = "vllm:num_requests_running"
# Literals that a small model happily continues for hundreds of tokens without a dedent.
# Greedy decoding repeats itself, so a retry needs a literal of its own.
LONG_LITERALS = tuple(
    f"{name} = {{\n    'a': 1,\n    'b': 2,\n    'c': 3,\n    \n}}\n"
    for name in ("CODES", "LEVELS", "WEIGHTS")
)


async def test_real_completion_through_the_server(
    real_engine: RealEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    async with server_session(isolated_env, real_engine.url, tmp_path / "state") as session:
        # One suggestion (explicit requests bring alternatives: test_alternatives_engine.py).
        await session.initialize({"completion": {"alternatives": 1}})
        uri = session.open(SAMPLE.read_text(), uri=SAMPLE.as_uri())
        items = await session.complete(uri, 22, 4)
        stats = await session.stats()
    assert len(items) == 1
    text = items[0].insert_text
    assert text.strip(), "the engine produced an empty suggestion"
    # The cursor sits on an indented empty line in `fibonacci`: nothing may dedent out of it.
    assert all(not line or line.startswith("    ") for line in text.split("\n")[1:]), text
    (timeline,) = [r for r in stats["recent"] if r["outcome"] == "shown"]
    assert timeline["mode"] == "multi-line"
    assert timeline["tokens"] > 0
    ms = timeline["ms"]
    assert ms["request_sent"] <= ms["first_token"] <= ms["finished"]


async def test_cancel_request_makes_the_engine_stop_generating(
    real_engine: RealEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    max_tokens = 400
    options = {"completion": {"maxTokens": max_tokens, "maxLines": 200}}
    finished_first: list[str] = []
    async with server_session(isolated_env, real_engine.url, tmp_path / "state") as session:
        await session.initialize(options)
        for attempt, literal in enumerate(LONG_LITERALS):
            # Tokens of an earlier test's stream must not count as this request's.
            await until(lambda: real_engine.metric(RUNNING) == 0, 30, "an idle engine", every=0.1)
            uri = session.open(literal, uri=f"file:///work/long{attempt}.py")
            before = real_engine.metric("vllm:generation_tokens_total")
            msg_id = f"long-{attempt}"
            pending = session.request(uri, 4, 4, msg_id=msg_id)
            # The request goes out on the loop's next turn: a cancel must not overtake it.
            await asyncio.sleep(0)
            # The token counter cannot be missed between two scrapes the way a gauge can.
            deadline = time.monotonic() + 60
            while (
                real_engine.metric("vllm:generation_tokens_total") - before < 16
                and not pending.done()
            ):
                assert time.monotonic() < deadline, "the request never started generating"
                await asyncio.sleep(0.1)
            session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            try:
                result = await asyncio.wait_for(pending, 30)
            except JsonRpcException as raised:
                assert raised.code == -32800
                break
            # The model closed the literal before the cancel arrived: nothing was cancelled.
            items = result.items if result is not None else []
            finished_first.append(repr(items[0].insert_text if items else ""))
        else:
            pytest.fail(f"every completion ended before its cancel arrived: {finished_first}")
        stopped = "the engine stopped generating after the cancel"
        await until(lambda: real_engine.metric(RUNNING) == 0, 10, stopped, every=0.1)
        settled = real_engine.metric("vllm:generation_tokens_total")
        await asyncio.sleep(1.5)
        assert real_engine.metric("vllm:generation_tokens_total") == settled
        assert settled - before < max_tokens


def test_engine_up_is_idempotent_and_status_reports_health(real_engine: RealEngine) -> None:
    port = int(real_engine.url.rsplit(":", 1)[1].split("/")[0])
    again = launcher.engine_up(
        load_profile("local-cpu"), port=port, state_dir=real_engine.state_dir
    )
    assert again.pid == real_engine.pid
    # local-cpu speculates with the shipped EAGLE head: one completion makes drafts.
    body = {"model": "smollm2-135m", "prompt": "def fibonacci(n):\n", "max_tokens": 32}
    httpx.post(f"{real_engine.root}/v1/completions", json={**body, "temperature": 0}, timeout=120)
    env = {**os.environ, "COPILOT_LSP_STATE_DIR": str(real_engine.state_dir)}
    result = subprocess.run(
        [sys.executable, "-m", "copilot_lsp", "engine", "status", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    report = json.loads(result.stdout)
    assert report["healthy"] is True
    assert report["url"] == real_engine.url
    assert report["model"] == "smollm2-135m"
    spec = report["spec_decode"]
    assert spec["drafts"] > 0
    assert spec["accepted_tokens"] > 0, "the shipped EAGLE head accepted nothing"
    assert sorted(spec["accepted_per_position"]) == ["0", "1", "2"]


def test_complete_command_prints_a_suggestion_and_its_latency(
    real_engine: RealEngine, isolated_env: dict[str, str]
) -> None:
    env = {**isolated_env, "COPILOT_LSP_ENGINE_URL": real_engine.url}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "copilot_lsp",
            "complete",
            str(SAMPLE),
            "--line",
            "23",
            "--col",
            "5",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["text"].strip()
    assert report["range"] == {"start": [22, 4], "end": [22, 4]}
    assert report["timeline"]["outcome"] == "shown"
    assert report["timeline"]["ms"]["first_token"] > 0


async def test_prompt_token_counts_match_the_engine_tokenizer(real_engine: RealEngine) -> None:
    """With no prompt settings the served model picks the family (SmolLM2: prefix only) and the
    budget counts with its own tokenizer.json, found where the engine reads the weights:
    the same counts as vLLM's."""
    import httpx

    from copilot_lsp.completion.prompt_format import PromptFormats
    from copilot_lsp.engine.client import EngineClient
    from copilot_lsp.settings import PromptSettings

    client = EngineClient(real_engine.url)
    try:
        chosen = await PromptFormats().resolve(PromptSettings(), client)
    finally:
        await client.aclose()
    assert chosen.template.name == "smollm2"
    assert chosen.origin == "served model"
    counter = chosen.counter
    assert counter.exact, counter.source
    sample = SAMPLE.read_text()
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{real_engine.root}/tokenize",
            json={"model": "smollm2-135m", "prompt": sample, "add_special_tokens": False},
        )
    answer = response.json()
    assert counter.count(sample) == answer["count"]


class _CountingTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, counting the TCP connections it opens (httpcore's trace)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.opened = 0

    async def _trace(self, event: str, info: dict[str, object]) -> None:
        if event == "connection.connect_tcp.complete":
            self.opened += 1

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.extensions["trace"] = self._trace
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_completions_keep_their_connection_to_the_engine(real_engine: RealEngine) -> None:
    """vLLM keeps a connection whose answer was read to its end: the model lookup and three
    completions open one TCP connection (no handshake, over TLS no TLS handshake, per
    keystroke), while a completion left early still closes its own (the cancel test)."""
    from copilot_lsp.engine.client import EngineClient
    from copilot_lsp.engine.types import CompletionRequest

    transport = _CountingTransport()
    http = httpx.AsyncClient(transport=transport, timeout=60)
    client = EngineClient(real_engine.url, http=http)
    try:
        for word in ("alpha", "beta", "gamma"):
            request = CompletionRequest(prompt=f"def {word}(", max_tokens=4, temperature=0.0)
            chunks = [chunk async for chunk in client.stream(request)]
            assert any(chunk.finish_reason is not None for chunk in chunks)
    finally:
        await http.aclose()
    assert transport.opened == 1
