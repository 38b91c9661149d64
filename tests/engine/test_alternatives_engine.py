"""Alternatives against the real vLLM CPU engine with EAGLE: vLLM's CPU build samples word salad
with speculative decoding (serving/launcher.samples_exactly), so `engine up` records it and the
server, finding that engine, answers an explicit request with the greedy suggestion alone from
one engine request, as it answers typing. (Sampled alternatives themselves: tests/unit and
tests/lsp against scripted engines.)"""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.conftest import REPO
from tests.engine.conftest import RealEngine
from tests.lspclient import Session, server_session

pytestmark = [pytest.mark.engine, pytest.mark.timeout(600)]

SAMPLE = REPO / "examples" / "sample.py"
LINE, COLUMN = 22, 4  # the empty body line of `fibonacci`
ALTERNATIVES = 4
OPTIONS = {"completion": {"alternatives": ALTERNATIVES, "alternativesWaitMs": 60_000}}


def prompt_tokens(engine: RealEngine) -> float:
    """Prompt tokens the engine took in, counted per request at its first token (cached ones
    included: a second request for the same prompt counts it again). Finished-request counters
    would miss most requests here: the server closes a stream once the suggestion is cut,
    and vLLM counts an aborted request nowhere else."""
    return engine.metric("vllm:prompt_tokens_total")


async def settled(engine: RealEngine, before: float) -> float:
    """Prompt tokens once the engine has taken in more than `before` and runs nothing."""
    deadline = time.monotonic() + 60
    while True:
        now = prompt_tokens(engine)
        idle = (
            engine.metric("vllm:num_requests_running") == 0
            and engine.metric("vllm:num_requests_waiting") == 0
        )
        if idle and now > before:
            return now
        assert time.monotonic() < deadline, (
            f"the engine never settled after the request: prompt tokens {before} -> {now}, "
            f"idle {idle}"
        )
        await asyncio.sleep(0.1)


async def complete(
    session: Session, engine: RealEngine, uri: str, *, automatic: bool
) -> tuple[list[types.InlineCompletionItem], float]:
    """One request: its items, and the prompt tokens the engine took in for it."""
    before = prompt_tokens(engine)
    result = await asyncio.wait_for(session.request(uri, LINE, COLUMN, automatic=automatic), 120)
    items = list(result.items) if result is not None else []
    assert items, f"no suggestion (automatic: {automatic}): {(await session.stats())['recent']}"
    return items, await settled(engine, before) - before


async def test_an_explicit_request_to_a_speculative_cpu_engine_gets_greedy_only(
    real_engine: RealEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    assert real_engine.metric("vllm:spec_decode_num_drafts_total") >= 0  # it speculates
    env = {**isolated_env, "COPILOT_LSP_STATE_DIR": str(real_engine.state_dir)}
    source = SAMPLE.read_text()
    async with server_session(env, real_engine.url, real_engine.state_dir) as session:
        await session.initialize(OPTIONS)
        uri = session.open(source, uri=SAMPLE.as_uri())
        typed, typed_prompt = await complete(session, real_engine, uri, automatic=True)
        asked, asked_prompt = await complete(session, real_engine, uri, automatic=False)
        stats = await session.stats()

    # Both: one greedy suggestion from one engine request (the prompt taken in once each).
    assert len(typed) == 1 and len(asked) == 1, (typed, asked)
    assert typed_prompt > 0 and asked_prompt == typed_prompt, (typed_prompt, asked_prompt)
    assert asked[0].insert_text == typed[0].insert_text  # greedy: the same text
    text = asked[0].insert_text
    assert isinstance(text, str) and text.strip()
    lines = source.split("\n")
    after = [*lines[:LINE], lines[LINE][:COLUMN] + text + lines[LINE][COLUMN:], *lines[LINE + 1 :]]
    ast.parse("\n".join(after))
    shown = [r for r in stats["recent"] if r["outcome"] == "shown"]
    assert [r["trigger"] for r in shown] == ["automatic", "invoked"], shown
    assert all("alternatives" not in r for r in shown), shown
