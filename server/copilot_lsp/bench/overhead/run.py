"""The server's own cost per completion: the real server over stdio, an engine that answers at
once (the scripted one, loopback), a 5,000-line Python file, and a one-character edit
(didChange) before each request, as typing sends them. What is left of the round trip is the
server: decoding, the document update, the request, the prompt, the cut, the reply.

With a base checkout both servers run in one go, requests alternating between them, so the
before/after comparison sees the same machine load.
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from copilot_lsp.client.driver import EditorSession
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from copilot_lsp.testing.latency_proxy import LatencyProxy

LINES = 5_000
CURRENT = "current"
BASE = "base"


def large_file(lines: int = LINES) -> str:
    """A plausible Python module of about `lines` lines: classes with methods, functions that
    call each other, imports on top (deterministic)."""
    out = ["import os", "import sys", "from dataclasses import dataclass", ""]
    index = 0
    while len(out) < lines - 12:
        out += [
            "",
            "@dataclass",
            f"class Record{index}:",
            f'    """Record number {index}."""',
            "",
            "    name: str",
            "    count: int = 0",
            "",
            "    def total(self, factor: int) -> int:",
            f"        value = self.count * factor + {index}",
            "        if value > 100:",
            "            return value - 100",
            "        return value",
            "",
            "",
            f"def build_{index}(items: list[str]) -> list[Record{index}]:",
            f"    records = [Record{index}(name, len(name)) for name in items]",
            "    records.sort(key=lambda record: record.count)",
            f"    return records  # built by build_{index}",
        ]
        index += 1
    out += ["", "", "def main() -> None:", "    records = build_0(sys.argv[1:])", "    "]
    out += ["    print(records)", "", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(out)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def run_overhead(
    count: int,
    workdir: Path,
    base_checkout: Path | None = None,
    warmup: int = 20,
    *,
    rtt_s: float = 0.0,
    gap_s: float = 0.0,
) -> dict[str, Any]:
    """`count` edit + completion rounds per server (after `warmup` unmeasured ones), `gap_s`
    apart (typing); with `rtt_s`, the engine is that round trip away (a latency proxy)."""
    servers = {CURRENT: None} if base_checkout is None else {CURRENT: None, BASE: base_checkout}
    engines: dict[str, FakeEngine] = {}
    proxies: dict[str, LatencyProxy] = {}
    urls: dict[str, str] = {}
    for name in servers:
        engines[name] = engine = await FakeEngine().start()
        engine.keep_bodies = False
        engine.default = Reply(chunks=["records.sort()\n"])
        urls[name] = engine.url
        if rtt_s > 0:
            proxies[name] = proxy = await LatencyProxy(engine.port, rtt_s).start()
            urls[name] = proxy.relay_url(engine.url)
    text = large_file()
    lines = text.split("\n")
    # The cursor: the blank line in main(), near the end of the file; one character typed
    # there per round (a comment grows, so the completion is never typed through).
    line = lines.index("    records = build_0(sys.argv[1:])") + 1
    options = {
        "completion": {"debounceMs": 0},
        "telemetry": {"enableLog": False},
    }
    sessions: dict[str, EditorSession] = {}
    uris: dict[str, str] = {}
    round_trips: dict[str, list[float]] = {name: [] for name in servers}
    first: dict[str, dict[str, Any]] = {}
    try:
        for name, checkout in servers.items():
            command = None
            if checkout is not None:
                server = checkout.absolute() / "server"
                command = ["env", f"PYTHONPATH={server}", sys.executable, "-m", "copilot_lsp"]
                command.append("--stdio")
            session = await EditorSession.start(
                workdir,
                server_command=command,
                initialization_options={**options, "engine": {"url": urls[name]}},
            )
            sessions[name] = session
            uris[name] = session.open(workdir / f"{name}_large.py", text)
            session.insert(uris[name], 2, line, 4, "# ")
        column = 6
        for round_index in range(warmup + count):
            for name in servers if round_index % 2 == 0 else list(reversed(servers)):
                await asyncio.sleep(gap_s)
                session = sessions[name]
                session.insert(uris[name], round_index + 3, line, column, "x")
                started = time.perf_counter()
                items = await session.complete(uris[name], line, column + 1)
                elapsed = (time.perf_counter() - started) * 1000.0
                if not items:
                    said = "; ".join(session.messages[-2:]) or "nothing"
                    raise RuntimeError(
                        f"{name}: no suggestion in round {round_index} (the server said: {said})"
                    )
                if round_index >= warmup:
                    round_trips[name].append(elapsed)
                elif round_index == 0:  # the first completion after start: its stages
                    first[name] = await _first_request(session, elapsed)
            column += 1
        stats = {name: await session.stats() for name, session in sessions.items()}
    finally:
        for session in sessions.values():
            await session.close()
        for proxy in proxies.values():
            await proxy.stop()
        for engine in engines.values():
            await engine.stop()
    return {
        "host": platform.node(),
        "python": platform.python_version(),
        "file_lines": len(lines),
        "count": count,
        "warmup": warmup,
        "base_checkout": str(base_checkout) if base_checkout else None,
        "engine_rtt_ms": round(rtt_s * 1000, 1),
        "gap_ms": round(gap_s * 1000, 1),
        "servers": {
            name: {
                "round_trip_ms": _summary(round_trips[name]),
                "first_request": first.get(name, {}),
                "warm_up": stats[name].get("warm_up"),
                "stages": stats[name].get("stages", {}),
                "engine_connections": engines[name].connections_opened,
                "completions_on_new_connections": sum(
                    request.new_connection for request in engines[name].requests
                ),
                "samples_ms": [round(value, 2) for value in round_trips[name]],
            }
            for name in servers
        },
    }


async def _first_request(session: EditorSession, round_trip_ms: float) -> dict[str, Any]:
    """The first completion's round trip and stage marks: it came right after the document
    opened, while the server may still be warming up."""
    recent = (await session.stats()).get("recent") or [{}]
    return {"round_trip_ms": round(round_trip_ms, 2), "ms": recent[-1].get("ms", {})}


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": round(statistics.median(values), 2),
        "p90": round(percentile(values, 90), 2),
        "p99": round(percentile(values, 99), 2),
        "mean": round(statistics.fmean(values), 2),
    }
