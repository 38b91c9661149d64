"""Scale-out for real: `copilot-lsp --stdio` pointed at vllm-router in front of two vLLM CPU
engines (issue 13, item 4).

One test walks the phases in order, because each needs the state the previous one left:
spread over both replicas (where each module goes when asked alone is reported),
cancellation stopping generation behind the router, a replica killed in the middle of a
stream, completions recovering on the other replica, and the killed replica coming back and
taking load. Which replica served a request is read from
the engines' own counters (`vllm:prompt_tokens_total` rises on the one that prefilled it),
for the completions the server's own record says it asked an engine for; an answer from the
suggestion on screen moves no counter (tests/cluster/attribution.py, whose logic
tests/lsp/test_router_attribution.py checks inside `make test` over scripted replicas).
The figures go to $COPILOT_LSP_CLUSTER_REPORT (JSON) when set; docs/serving.md quotes them.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.errors import EngineError, EngineStreamError
from tests.cluster.attribution import (
    PROMPT_TOKENS,
    Served,
    attribute,
    netlocs,
    read,
    replicas_behind,
    risen,
)
from tests.cluster.harness import API_KEY, Cluster, Replica
from tests.lspclient import Session, server_session

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(3600)]

REPORT_ENV = "COPILOT_LSP_CLUSTER_REPORT"
GENERATED = "vllm:generation_tokens_total"
TOPICS = (
    "inventory", "invoice", "parser", "schedule", "geometry", "matrix", "weather", "graph",
    "ledger", "playlist", "recipe", "sensor",
)  # fmt: skip


def document(index: int, note: str = "") -> str:
    """A small module whose first line differs from every other's (its own prompt prefix);
    the cursor goes at the end of the last line (single-line completion). A `note` is a
    comment line just above it: the module edited away from the cursor, so that no suggestion
    made before can answer there and the server must ask an engine."""
    topic = TOPICS[index % len(TOPICS)]
    return (
        f'"""{topic.title()} helpers, part {index}: totals and averages of {topic} data."""\n'
        "\n\n"
        f"def {topic}_average(values):\n"
        f'    """Mean of the {topic} values, 0 for none."""\n'
        "    total = 0\n"
        "    for value in values:\n"
        f"        total += value * {index + 2}\n"
        + (f"    # {note}\n" if note else "")
        + "    result = "
    )


async def complete(session: Session, uri: str, line: int, col: int) -> list[Any]:
    """An invoked completion; generous timeout: two CPU engines share a busy host."""
    result = await asyncio.wait_for(session.request(uri, line, col), 180)
    return list(result.items) if result is not None else []


def cursor(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines) - 1, len(lines[-1])


LONG_DOCUMENT = (
    "class Inventory:\n"
    '    """Items in stock, by name."""\n'
    "\n"
    "    def __init__(self):\n"
    "        self.items = {}\n"
    "\n"
    "    def add(self, name, count):\n"
    "        self.items[name] = self.items.get(name, 0) + count\n"
    "\n"
    "    "
)
"""A blank line in a class body: a multi-line completion that goes on method after method."""


def counters(replicas: list[Replica], name: str) -> dict[str, float]:
    values = {}
    for replica in replicas:
        try:
            values[replica.name] = replica.metric(name)
        except httpx.HTTPError:
            values[replica.name] = math.nan
    return values


async def ask(session: Session, replicas: list[Replica], uri: str, line: int, col: int) -> Served:
    """An invoked completion and who served it (tests/cluster/attribution.py)."""
    before = await read(replicas)
    items = await complete(session, uri, line, col)
    return await attribute(session, replicas, items, before)


def replace_text(session: Session, uri: str, version: int, text: str) -> None:
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def identified_router(session: Session, within: float = 120.0) -> list[str]:
    """The workers the server found behind the router URL (`host:port`), once it has."""
    deadline = time.monotonic() + within
    while (behind := replicas_behind(await session.stats())) is None:
        assert time.monotonic() < deadline, "the server never identified the router"
        await asyncio.sleep(0.2)
    return behind


def errors_shown(session: Session) -> list[str]:
    return [m.message for m in session.client.messages if m.type == types.MessageType.Error]


async def generating(replicas: list[Replica], window_s: float = 0.3) -> Replica | None:
    """The replica whose generated-token counter rises over `window_s` (the gauge of running
    requests is not trusted: an idle engine may leave it at its last value)."""
    first = counters(replicas, GENERATED)
    await asyncio.sleep(window_s)
    after = counters(replicas, GENERATED)
    rising = [r for r in replicas if after[r.name] > first[r.name]]
    return rising[0] if len(rising) == 1 else None


async def wait_generating(replicas: list[Replica], within: float = 120.0) -> Replica:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        replica = await generating(replicas, 0.2)
        if replica is not None:
            return replica
    raise AssertionError("no replica started generating")


async def generation_stops(replica: Replica, started: float) -> dict[str, float]:
    """Seconds from `started` until the replica's token counter stopped rising, and the tokens
    it generated in the 2 s after that (0 when generation really stopped)."""
    last_value = replica.metric(GENERATED)
    last_change = time.monotonic()
    while time.monotonic() - last_change < 1.0:  # a second without a new token
        assert time.monotonic() - started < 15, "the replica is still generating 15 s after"
        await asyncio.sleep(0.05)
        value = replica.metric(GENERATED)
        if value != last_value:
            last_value, last_change = value, time.monotonic()
    stopped_after = max(0.0, last_change - started)
    await asyncio.sleep(2.0)
    after = replica.metric(GENERATED)
    return {"stopped_after_s": round(stopped_after, 2), "tokens_after": after - last_value}


async def test_router_spreads_fails_over_cancels_and_takes_a_replica_back(
    cluster: Cluster, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    began = time.monotonic()
    replicas, router = cluster.replicas, cluster.router
    by_name = {replica.name: replica for replica in replicas}
    report: dict[str, Any] = {"startup_s": round(cluster.startup_s, 1), "router": "vllm-router"}
    try:
        await _run(replicas, by_name, router.url, isolated_env, tmp_path, report)
        report["router_metric_families"] = _metric_families(router.metrics_port)
        report["wrong_key_status"] = _status_with_key(router.url, "not-the-key")
        assert report["wrong_key_status"] == 401  # checked by the replica, through the router
        assert _status_with_key(router.url, API_KEY) == 200
    finally:
        report["test_s"] = round(time.monotonic() - began, 1)
        report["total_s"] = round(report["test_s"] + cluster.startup_s, 1)
        _write_report(report)


def _metric_families(port: int) -> int:
    """The router's own Prometheus endpoint answers (what the deploy/ scrape configs read)."""
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert response.status_code == 200
    return sum(line.startswith("# TYPE") for line in response.text.splitlines())


def _status_with_key(router_url: str, key: str) -> int:
    response = httpx.post(
        f"{router_url}/v1/completions",
        json={"model": "smollm2-135m", "prompt": "def f():", "max_tokens": 2},
        headers={"Authorization": f"Bearer {key}"},
        timeout=180,
    )
    return response.status_code


def _write_report(report: dict[str, Any]) -> None:
    text = json.dumps(report, indent=2)
    print(text)
    if os.environ.get(REPORT_ENV):
        Path(os.environ[REPORT_ENV]).write_text(text + "\n", encoding="utf-8")


async def _run(
    replicas: list[Replica],
    by_name: dict[str, Replica],
    router_url: str,
    env: dict[str, str],
    tmp_path: Path,
    report: dict[str, Any],
) -> None:
    options: dict[str, Any] = {"engine": {"apiKey": API_KEY}, "telemetry": {"enableLog": False}}
    long_options: dict[str, Any] = {
        "engine": {"apiKey": API_KEY},
        "telemetry": {"enableLog": False},
        "completion": {
            "maxTokens": 400,
            "singleLineMaxTokens": 400,
            "maxLines": 200,
            "extraBody": {"min_tokens": 400, "ignore_eos": True},
        },
    }
    url = f"{router_url}/v1"
    async with (
        server_session(env, url, tmp_path / "state-1") as session,
        server_session(env, url, tmp_path / "state-2") as long_session,
    ):
        await session.initialize(options)
        await long_session.initialize(long_options)

        # 1. Spread, then where each module goes when asked alone. Eight modules completed at
        # once (several editors typing) must spread over both replicas: vllm-router sends a
        # request to the least loaded one when the loads differ. Asked one at a time (idle
        # replicas), cache_aware should send a module to the replica holding its prefix; with
        # vllm-router 0.1.17 that did not hold (8 of 8 modules on one replica in one run, 7 of
        # 8 in the next, whichever had prefilled them). Measured and reported here
        # (docs/serving.md), not asserted.
        texts = {index: document(index) for index in range(8)}
        uris = {
            index: session.open(text, uri=f"file:///work/module_{index}.py")
            for index, text in texts.items()
        }
        before = counters(replicas, PROMPT_TOKENS)
        first = await asyncio.gather(
            *(complete(session, uris[i], *cursor(texts[i])) for i in texts)
        )
        assert all(first), "a module got no completion"
        after = counters(replicas, PROMPT_TOKENS)
        prefill = {name: int(after[name] - before[name]) for name in by_name}
        assert all(tokens > 0 for tokens in prefill.values()), f"one replica got nothing: {prefill}"
        # The server recognised the router by its worker list, and it lists exactly the two
        # replicas whose counters are read: no engine serves unseen.
        assert await identified_router(session) == netlocs(replicas)
        home: dict[int, str] = {}
        sticky = engine_asked_again = 0
        for index, text in texts.items():
            line, col = cursor(text)
            served = await ask(session, replicas, uris[index], line, col)
            # Asked again where the concurrent batch answered: an explicit request at an
            # unchanged place is a fresh one (never the suggestion on screen).
            assert served.items and served.source == "engine", (index, served.summary())
            assert len(served.replicas) == 1, (index, served.summary())
            home[index] = served.replicas[0]
            session.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uris[index], version=2),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(types.Position(line, col), types.Position(line, col)),
                            text="round(",
                        )
                    ],
                )
            )
            # After typing `round(`: answered from the suggestion on screen when it began with
            # that (no engine, no replica), else by an engine, whose replica is compared.
            again = await ask(session, replicas, uris[index], line, col + 6)
            if again.source == "engine":
                engine_asked_again += 1
                sticky += again.replicas == served.replicas
        spread = {name: list(home.values()).count(name) for name in by_name}
        report["spread"] = {
            "concurrent_prefill_tokens_per_replica": prefill,
            "modules_per_replica": spread,
            "router_workers_identified": len(netlocs(replicas)),
            "asked_again_after_typing_same_replica": f"{sticky}/{engine_asked_again}",
            "asked_again_after_typing_answered_from_screen": len(texts) - engine_asked_again,
        }
        assert errors_shown(session) == []

        # 2. Cancellation behind the router: `$/cancelRequest`, then a newer keystroke.
        report["cancel_request"] = await _cancel_by_request(long_session, replicas)
        report["newer_keystroke"] = await _cancel_by_keystroke(long_session, replicas)

        # 3. A replica killed in the middle of a stream: the stream must fail, not end.
        victim, midstream = await _kill_mid_stream(url, replicas)
        report["killed_mid_stream"] = midstream
        survivor = next(name for name in by_name if name != victim.name)

        # 4. Completions go on: every module (half lived on the dead replica) answered again.
        report["recovery"] = await _recover(session, replicas, home, victim.name, survivor)
        assert len(errors_shown(session)) <= 1, errors_shown(session)
        report["errors_shown_to_editor"] = len(errors_shown(session))

        # 5. The replica comes back and takes load again.
        report["rejoin"] = await _rejoin(session, replicas, victim)

        # 6. Acceptance per replica is on each engine's /metrics (what Prometheus scrapes).
        report["acceptance_per_replica"] = {
            replica.name: _acceptance(replica) for replica in replicas
        }


async def _cancel_by_request(session: Session, replicas: list[Replica]) -> dict[str, Any]:
    for attempt in range(3):
        uri = session.open(LONG_DOCUMENT, uri=f"file:///work/cancel_{attempt}.py")
        line, col = cursor(LONG_DOCUMENT)
        pending = session.request(uri, line, col, msg_id=f"cancel-{attempt}")
        replica = await wait_generating(replicas)
        started = time.monotonic()
        session.client.protocol.notify(
            types.CANCEL_REQUEST, types.CancelParams(id=f"cancel-{attempt}")
        )
        try:
            await asyncio.wait_for(pending, 180)
        except JsonRpcException as error:
            assert error.code == -32800
        else:
            continue  # it finished by itself before the cancel arrived: try again
        figures = await generation_stops(replica, started)
        assert figures["tokens_after"] == 0, figures
        stats = await session.stats()
        assert stats["outcomes"].get("cancelled", 0) >= 1, stats["outcomes"]
        return {"replica": replica.name, "attempts": attempt + 1, **figures}
    raise AssertionError("three completions finished before they could be cancelled")


async def _cancel_by_keystroke(session: Session, replicas: list[Replica]) -> dict[str, Any]:
    for attempt in range(3):
        uri = session.open(LONG_DOCUMENT, uri=f"file:///work/typing_{attempt}.py")
        line, col = cursor(LONG_DOCUMENT)
        older = session.request(uri, line, col)
        replica = await wait_generating(replicas)
        started = time.monotonic()
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(line, col), types.Position(line, col)),
                        text="def",
                    )
                ],
            )
        )
        # The newer request for the document supersedes the older one; in the middle of a word
        # (`de|f`) it asks the engine for nothing, so any token counted after is the older's.
        newer = await asyncio.wait_for(session.request(uri, line, col + 2, automatic=True), 180)
        assert list(newer.items) == []
        if list((await asyncio.wait_for(older, 180)).items):
            continue  # it finished by itself before the keystroke: try again
        figures = await generation_stops(replica, started)
        assert figures["tokens_after"] == 0, figures
        stats = await session.stats()
        assert stats["outcomes"].get("superseded", 0) >= 1, stats["outcomes"]
        return {"replica": replica.name, "attempts": attempt + 1, **figures}
    raise AssertionError("three completions finished before a keystroke could supersede them")


async def _kill_mid_stream(url: str, replicas: list[Replica]) -> tuple[Replica, dict[str, Any]]:
    client = EngineClient(url, api_key=API_KEY, read_timeout_s=60)
    request = CompletionRequest(
        prompt="# Fibonacci numbers, three ways\ndef fibonacci(n):\n",
        max_tokens=400,
        extra={"min_tokens": 400, "ignore_eos": True},
    )
    chunks = 0
    victim: Replica | None = None
    killed_at = 0.0
    try:
        with pytest.raises(EngineError) as raised:
            async for chunk in client.stream(request):
                chunks += 1
                assert chunk.finish_reason is None, "the stream finished before the kill"
                if victim is None and chunks >= 3:
                    victim = await wait_generating(replicas)
                    killed_at = time.monotonic()
                    victim.kill()
    finally:
        await client.aclose()
    assert victim is not None
    assert isinstance(raised.value, EngineStreamError), repr(raised.value)
    return victim, {
        "replica": victim.name,
        "chunks_received": chunks,
        "error": type(raised.value).__name__,
        "message": str(raised.value)[:160],
        "failed_after_s": round(time.monotonic() - killed_at, 2),
    }


async def _recover(
    session: Session, replicas: list[Replica], home: dict[int, str], dead: str, survivor: str
) -> dict[str, Any]:
    killed = time.monotonic()
    waiting = set(home)
    attempts: list[dict[str, Any]] = []
    # One developer per module: those whose module lived on the dead replica type first.
    order = sorted(home, key=lambda index: (home[index] != dead, index))
    # Each try edits the module above the cursor's line first (version 2 was `round(`): no
    # suggestion made before can answer it, so every answer is the survivor's work.
    version = 2
    while waiting:
        # A bound for a loaded host (two engines' worth of prefill on one): the time is
        # reported, docs/serving.md quotes it.
        assert time.monotonic() - killed < 300, f"modules {sorted(waiting)} never answered again"
        for index in [i for i in order if i in waiting]:
            version += 1
            text = document(index, note=f"after the kill, try {len(attempts) + 1}") + "round("
            uri = f"file:///work/module_{index}.py"
            replace_text(session, uri, version, text)
            served = await ask(session, replicas, uri, *cursor(text))
            attempts.append(
                {
                    "module": index,
                    "was_on": home[index],
                    "t_s": round(time.monotonic() - killed, 2),
                    "ok": bool(served.items),
                    **served.summary(),
                }
            )
            if served.items:
                assert served.source == "engine", attempts[-1]
                assert served.replicas == [survivor], attempts[-1]
                waiting.discard(index)
    on_dead = [a for a in attempts if a["was_on"] == dead]
    failures = [a for a in attempts if not a["ok"]]
    return {
        "first_answer_after_s": min(a["t_s"] for a in attempts if a["ok"]),
        "all_modules_answered_after_s": max(a["t_s"] for a in attempts if a["ok"]),
        "modules_that_lived_on_the_dead_replica": len({a["module"] for a in on_dead}),
        "empty_answers_after_kill": len(failures),
        "last_empty_answer_s": max((a["t_s"] for a in failures), default=None),
        "attempts": len(attempts),
    }


async def _rejoin(session: Session, replicas: list[Replica], victim: Replica) -> dict[str, Any]:
    """Restart the killed replica on its port; new modules, a few at a time (idle replicas tie
    and the router then picks its first one), until the restarted replica prefills some."""
    victim.spawn()
    victim.wait()
    healthy = time.monotonic()
    index = 100
    batches = 0
    while True:
        assert time.monotonic() - healthy < 120, "the restarted replica took no load in 120 s"
        texts = {i: document(i) for i in range(index, index + 4)}
        index += 4
        before = await read(replicas)
        await asyncio.gather(
            *(
                complete(
                    session, session.open(text, uri=f"file:///work/rejoin_{i}.py"), *cursor(text)
                )
                for i, text in texts.items()
            )
        )
        batches += 1
        after = await read(replicas)
        prefill = {
            name: int(value - old)
            for name, value in after.items()
            if value is not None and (old := before.get(name)) is not None
        }
        if victim.name in risen(before, after):
            return {
                "replica": victim.name,
                "restart_to_healthy_s": round(victim.last_start_s, 1),
                "first_load_after_healthy_s": round(time.monotonic() - healthy, 1),
                "batches_of_4_new_modules": batches,
                "prefill_tokens_in_that_batch": prefill,
            }
        await asyncio.sleep(1.0)


def _acceptance(replica: Replica) -> dict[str, float]:
    drafted = replica.metric("vllm:spec_decode_num_draft_tokens_total")
    accepted = replica.metric("vllm:spec_decode_num_accepted_tokens_total")
    assert drafted > 0, f"{replica.name} exports no speculative-decoding counters"
    return {"draft_tokens": drafted, "accepted": accepted, "rate": round(accepted / drafted, 3)}
