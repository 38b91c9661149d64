"""The cluster test's model of the server (tests/cluster/attribution.py) inside `make test`.

The real server over stdio, pointed at a scripted router (tests/fakes/router.py) in front of
two scripted replicas whose /metrics count the prompts they took, as vLLM's
`vllm:prompt_tokens_total` does. The cases are those of `make test-cluster`, where the real
router and engines are too slow for every run: the server identifies the router and its two
workers; an engine answer shows on exactly one replica's counter (checked against which
replica the router really sent it to); an answer from the suggestion on screen shows on none
and is not taken for a lost one; and after a replica stops, an explicit request after an edit
elsewhere in the module (which no suggestion can answer) is served by the other one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from lsprotocol import types

from copilot_lsp.engine.metrics import parse_metrics, total
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.cluster.attribution import (
    PROMPT_TOKENS,
    Served,
    attribute,
    netlocs,
    read,
    replicas_behind,
    risen,
    source_of,
)
from tests.fakes.router import FakeRouter
from tests.lspclient import Session, server_session

pytestmark = pytest.mark.timeout(180)

MODULE = (
    '"""Inventory helpers."""\n'
    "\n\n"
    "def inventory_average(values):\n"
    "    total = 0\n"
    "    for value in values:\n"
    "        total += value\n"
    "    result = "
)
LINE, COL = 6, len("    result = ")


@dataclass
class Replica:
    """A scripted engine as the model reads it (tests/cluster/attribution.py: Counted)."""

    name: str
    engine: FakeEngine
    alive: bool = True

    @property
    def url(self) -> str:
        return self.engine.url.removesuffix("/v1")

    def metric(self, name: str) -> float:
        return total(parse_metrics(httpx.get(f"{self.url}/metrics", timeout=5).text), name)

    def prompts(self) -> str:
        taken = sum(len(r.body.get("prompt", "")) for r in self.engine.requests)
        return f'{PROMPT_TOKENS}{{engine="0",model_name="fake-model"}} {taken}\n'


@dataclass
class Cluster:
    session: Session
    replicas: list[Replica]
    router: FakeRouter


@pytest_asyncio.fixture
async def cluster(isolated_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Cluster]:
    replicas = [Replica(name, FakeEngine()) for name in ("replica-a", "replica-b")]
    for replica in replicas:
        await replica.engine.start()
        replica.engine.metrics = replica.prompts
        # What the embedded model suggests at `result = `; it begins with `round(`.
        replica.engine.default = Reply(chunks=["round(", "total / len(values), 2)"])
    router = await FakeRouter([replica.engine for replica in replicas]).start()
    try:
        async with server_session(isolated_env, router.url, tmp_path / "state") as session:
            # One suggestion per request, as from the cluster's speculative CPU engines (they
            # sample no alternatives): a sampled request could land on the other replica.
            await session.initialize({"completion": {"alternatives": 1}})
            yield Cluster(session, replicas, router)
    finally:
        await router.stop()
        for replica in replicas:
            await replica.engine.stop()


async def ask(cluster: Cluster, uri: str, line: int, col: int) -> Served:
    before = await read(cluster.replicas)
    result = await cluster.session.complete(uri, line, col)
    return await attribute(cluster.session, cluster.replicas, result, before)


def taken(cluster: Cluster) -> dict[str, int]:
    """Completion requests each replica has received (what the router really did)."""
    return {replica.name: len(replica.engine.requests) for replica in cluster.replicas}


def edit(session: Session, uri: str, version: int, text: str, at: tuple[int, int]) -> None:
    position = types.Position(*at)
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(position, position), text=text
                )
            ],
        )
    )


async def test_engine_answers_show_on_one_replica_and_the_suggestion_on_screen_on_none(
    cluster: Cluster,
) -> None:
    session, replicas = cluster.session, cluster.replicas
    uri = session.open(MODULE, uri="file:///work/module_0.py")

    first = await ask(cluster, uri, LINE, COL)
    assert [item.insert_text for item in first.items] == ["round(total / len(values), 2)"]
    assert first.source == "engine" and len(first.replicas) == 1
    assert {name for name, n in taken(cluster).items() if n} == set(first.replicas)

    # The server found the router and its two workers (its first /metrics poll followed the
    # first completion): the counters read are those of every engine that can serve.
    behind: list[str] | None = None
    for _ in range(600):
        if (behind := replicas_behind(await session.stats())) is not None:
            break
        await asyncio.sleep(0.05)
    assert behind == netlocs(replicas)

    # Typing `round(` and asking again: answered from the suggestion on screen. No engine is
    # asked, no counter moves (what the cluster test took for a lost completion).
    edit(session, uri, 2, "round(", (LINE, COL))
    before, requests = await read(replicas), taken(cluster)
    again = await ask(cluster, uri, LINE, COL + 6)
    assert [item.insert_text for item in again.items] == ["total / len(values), 2)"]
    assert again.source == "type-through" and again.replicas == []
    assert risen(before, await read(replicas)) == [] and taken(cluster) == requests

    # One replica stops. An edit above the cursor's line leaves no suggestion that can answer
    # the next request: it goes to an engine, the one still running.
    stopped = next(r for r in replicas if r.name == first.replicas[0])
    survivor = next(r for r in replicas if r is not stopped)
    await stopped.engine.stop()
    stopped.alive = False
    edit(session, uri, 3, "    # asked again\n", (LINE, 0))
    after_stop = await ask(cluster, uri, LINE + 1, COL + 6)
    assert after_stop.items and after_stop.source == "engine"
    assert after_stop.replicas == [survivor.name]
    assert (await read(replicas))[stopped.name] is None  # down: not read, never "did not rise"


def test_the_model_tells_unread_from_not_risen_and_reads_the_servers_record() -> None:
    assert risen({"a": 1.0, "b": 5.0}, {"a": 2.0, "b": 5.0}) == ["a"]
    # Unread before or after (a replica down, or its /metrics timing out): never a rise, and
    # never a reason to call the answer unattributed by itself.
    assert risen({"a": None, "b": 5.0}, {"a": 9.0, "b": 5.0}) == []
    assert risen({"a": 1.0}, {"a": None}) == []
    engine: dict[str, Any] = {"mode": "single-line", "ms": {"request_sent": 3.0}}
    assert source_of(engine) == "engine"
    assert source_of({"mode": "type-through", "ms": {"finished": 0.4}}) == "type-through"
    assert source_of({"mode": "adopted", "ms": {"first_token": 1.0}}) == "adopted"
    assert source_of({"mode": "single-line", "ms": {"debounced": 0.1}}) == "no answer"
