"""The server's own cost per completion: the real server over stdio, an engine that answers at
once (the scripted one, loopback), a 5,000-line Python file, and before each request an edit
(didChange) of one of the classes an editor sends (edits.py). What is left of the round trip is
the server: decoding, the document update, the request, the prompt, the cut, the reply.

Each class runs on a document of its own, opened fresh from the same text. The round trip is
timed at the client from the completion request (sent right after the didChange, which the
server reads first) to its answer; the server's `prompt_built` mark (ms since the request
arrived) comes from `copilot/stats`, read every few rounds. With a base checkout both servers
run in one go, requests alternating between them, so the before/after comparison sees the same
machine load.
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_lsp.bench.overhead.edits import CLASSES, Step, content_change, large_file, plan
from copilot_lsp.bench.overhead.workspace import copy_workspace, wait_for_index
from copilot_lsp.client.driver import EditorSession
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from copilot_lsp.testing.latency_proxy import LatencyProxy

CURRENT = "current"
BASE = "base"
READ_EVERY = 16
"""Completions between two reads of `copilot/stats` (its `recent` holds the last 20)."""
DID_CHANGE = "textDocument/didChange"
OPTIONS = {"completion": {"debounceMs": 0}, "telemetry": {"enableLog": False}}


@dataclass
class _Server:
    """One server under test, its scripted engine and (with a round trip) the proxy before
    it."""

    name: str
    engine: FakeEngine
    proxy: LatencyProxy | None = None
    session: EditorSession | None = None

    async def stop(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.proxy is not None:
            await self.proxy.stop()
        await self.engine.stop()


@dataclass
class _Samples:
    """One class of edit on one server: what its measured rounds took."""

    round_trip_ms: list[float] = field(default_factory=list)
    prompt_built_ms: list[float] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)


async def run_overhead(
    count: int,
    workdir: Path,
    base_checkout: Path | None = None,
    warmup: int = 20,
    *,
    edits: Sequence[str] = CLASSES,
    seed: int = 1,
    rtt_s: float = 0.0,
    gap_s: float = 0.0,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """`count` edit + completion rounds of each class in `edits`, per server (after `warmup`
    unmeasured ones), `gap_s` apart (typing); with `rtt_s`, the engine is that round trip away
    (a latency proxy); with `workspace`, a copy of that folder's code is the workspace, indexed
    (`context.workspace.enabled`) before the first round, and the edited file lies in it."""
    indexed: dict[str, Any] | None = None
    if workspace is not None:
        workdir = copy_workspace(workspace, workdir / "workspace")
    names = [CURRENT] if base_checkout is None else [CURRENT, BASE]
    plans = {kind: plan(kind, count, warmup, seed) for kind in edits}
    servers: dict[str, _Server] = {}
    samples = {name: {kind: _Samples() for kind in edits} for name in names}
    first: dict[str, dict[str, Any]] = {}
    try:
        for name in names:
            servers[name] = _Server(name, await FakeEngine().start())
            await _start(
                servers[name],
                workdir,
                base_checkout if name == BASE else None,
                rtt_s,
                workspace is not None,
            )
            if workspace is not None:
                indexed = await wait_for_index(_session(servers[name]))
        for kind in edits:
            await _run_class(kind, plans[kind], servers, workdir, samples, first, gap_s)
        stats = {name: await _session(server).stats() for name, server in servers.items()}
    finally:
        for server in servers.values():
            await server.stop()
    return {
        "host": platform.node(),
        "python": platform.python_version(),
        "file_lines": len(large_file().split("\n")),
        "count": count,
        "warmup": warmup,
        "edits": list(edits),
        "seed": seed,
        "base_checkout": str(base_checkout) if base_checkout else None,
        "engine_rtt_ms": round(rtt_s * 1000, 1),
        "gap_ms": round(gap_s * 1000, 1),
        "workspace": None if workspace is None else {"source": str(workspace), "index": indexed},
        "servers": {
            name: _server_report(server, stats[name], first.get(name, {}), samples[name])
            for name, server in servers.items()
        },
    }


async def _start(
    server: _Server, workdir: Path, checkout: Path | None, rtt_s: float, index: bool = False
) -> None:
    """The scripted engine answering at once (behind the proxy with `rtt_s`) and the server,
    this checkout's or `checkout`'s, connected to it (its workspace index on with `index`)."""
    engine = server.engine
    engine.keep_bodies = False
    engine.default = Reply(chunks=["records.sort()\n"])
    url = engine.url
    if rtt_s > 0:
        server.proxy = await LatencyProxy(engine.port, rtt_s).start()
        url = server.proxy.relay_url(engine.url)
    server.session = await EditorSession.start(
        workdir,
        server_command=_command(checkout),
        initialization_options={
            **OPTIONS,
            "engine": {"url": url},
            "context": {"workspace": {"enabled": index}},
        },
    )


def _command(checkout: Path | None) -> list[str] | None:
    """How to start `checkout`'s server (None: this one's)."""
    if checkout is None:
        return None
    path = checkout.absolute() / "server"
    return ["env", f"PYTHONPATH={path}", sys.executable, "-m", "copilot_lsp", "--stdio"]


def _session(server: _Server) -> EditorSession:
    assert server.session is not None
    return server.session


async def _run_class(
    kind: str,
    steps: list[Step],
    servers: dict[str, _Server],
    workdir: Path,
    samples: dict[str, dict[str, _Samples]],
    first: dict[str, dict[str, Any]],
    gap_s: float,
) -> None:
    """Every step of `kind` on each server, the servers' order swapped each step; the first
    completion of the run (right after the document opened) kept in `first` with its stages."""
    text = large_file()
    sessions = {name: _session(server) for name, server in servers.items()}
    uris = {name: s.open(workdir / f"{name}_{kind}.py", text) for name, s in sessions.items()}
    unread: dict[str, list[bool]] = {name: [] for name in servers}
    order = list(servers)
    for index, step in enumerate(steps):
        for name in order if index % 2 == 0 else order[::-1]:
            session = sessions[name]
            elapsed = await _round(session, uris[name], index + 2, step, gap_s)
            if name not in first:
                first[name] = await _first_request(session, elapsed)
            if step.measured:
                samples[name][kind].round_trip_ms.append(elapsed)
            unread[name].append(step.measured)
        if len(unread[order[0]]) >= READ_EVERY or index == len(steps) - 1:
            for name, session in sessions.items():
                await _read_marks(session, unread[name], samples[name][kind], f"{name}, {kind}")
                unread[name] = []
    for name, session in sessions.items():
        session.close_document(uris[name])


async def _round(session: EditorSession, uri: str, version: int, step: Step, gap_s: float) -> float:
    """The step's didChange, then a completion at its cursor: ms from the request to the
    answer."""
    await asyncio.sleep(gap_s)
    params = {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [content_change(step)],
    }
    # The typed message from its JSON, as the client's protocol reads one.
    message = session.client.protocol.structure_message(
        {"jsonrpc": "2.0", "method": DID_CHANGE, "params": params}
    )
    session.client.text_document_did_change(message.params)
    started = time.perf_counter()
    await session.complete(uri, *step.cursor)
    return (time.perf_counter() - started) * 1000.0


async def _read_marks(
    session: EditorSession, measured: list[bool], samples: _Samples, label: str
) -> None:
    """The records of the last `len(measured)` completions (one each, made before its answer
    went out): the prompt_built mark and outcome of those `measured` says to keep."""
    if not measured:
        return
    recent = (await session.stats()).get("recent") or []
    if len(recent) < len(measured):
        raise RuntimeError(f"{label}: {len(recent)} completions recorded, {len(measured)} sent")
    for keep, record in zip(measured, recent[-len(measured) :], strict=True):
        if not keep:
            continue
        built = record.get("ms", {}).get("prompt_built")
        if built is None:
            said = "; ".join(session.messages[-2:]) or "nothing"
            raise RuntimeError(
                f"{label}: a completion without a prompt (outcome {record.get('outcome')}, "
                f"error {record.get('error')}; the server said: {said})"
            )
        samples.prompt_built_ms.append(float(built))
        samples.outcomes[str(record.get("outcome"))] += 1


async def _first_request(session: EditorSession, round_trip_ms: float) -> dict[str, Any]:
    """The first completion's round trip and stage marks: it came right after the document
    opened, while the server may still be warming up."""
    recent = (await session.stats()).get("recent") or [{}]
    return {"round_trip_ms": round(round_trip_ms, 2), "ms": recent[-1].get("ms", {})}


def _server_report(
    server: _Server,
    stats: dict[str, Any],
    first: dict[str, Any],
    samples: dict[str, _Samples],
) -> dict[str, Any]:
    engine = server.engine
    return {
        "edits": {
            kind: {
                "round_trip_ms": summary(data.round_trip_ms),
                "prompt_built_ms": summary(data.prompt_built_ms),
                "outcomes": dict(data.outcomes),
                "samples_ms": [round(value, 2) for value in data.round_trip_ms],
            }
            for kind, data in samples.items()
        },
        "first_request": first,
        "warm_up": stats.get("warm_up"),
        "stages": stats.get("stages", {}),
        "engine_connections": engine.connections_opened,
        "completions_on_new_connections": sum(
            request.new_connection for request in engine.requests
        ),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(statistics.median(values), 2),
        "p90": round(percentile(values, 90), 2),
        "p99": round(percentile(values, 99), 2),
        "mean": round(statistics.fmean(values), 2),
    }
