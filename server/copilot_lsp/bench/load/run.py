"""Load: replay realistic typing against the real server over stdio, measure what it costs.

The editor side (client/typing.py) is scripted like VS Code: every keystroke is a `didChange`
(one character inserted at the cursor) followed by an automatic `textDocument/inlineCompletion`
at the new cursor, and the previous completion request of that document is cancelled
(`$/cancelRequest`). Keystrokes arrive at `rate` per second on average, in bursts (fast runs
on one document) and calmer stretches, spread over `documents` open files; a seeded random
generator makes runs repeatable. Meanwhile a second stream of cheap requests
(`copilot/stats`) measures how quickly the server answers while completions run.

The engine is the scripted `FakeEngine` (in-process, loopback only, OpenAI-compatible SSE that
streams a fixed answer with a per-token delay), or a real engine URL. Figures: engine requests per
keystroke, peak engine requests in flight (seen by the scripted engine, and by the server),
p50/p99 latency of the cheap requests, the server's RSS growth, completion outcomes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_lsp.client.typing import Counts, TypingEditor
from copilot_lsp.lsp.methods import STATS_REQUEST
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

WARMUP_SAMPLES = 5
"""RSS samples (1 s apart) taken before the baseline for growth after warm-up."""
RSS_MINUTE_S = 60.0
"""Spacing of the per-minute RSS series kept for soaks (`rss_by_minute`)."""
SLOPE_WARMUP_S = 60.0
"""Samples before this many seconds of load are left out of the RSS slope (warm-up)."""


@dataclass
class Keystroke:
    at_s: float
    document: int


def typing_schedule(
    duration_s: float, rate: float, documents: int, seed: int = 7
) -> list[Keystroke]:
    """Keystroke times and documents: bursts at 3x `rate` (0.5 s), calm at ~`rate`/3 (1.5 s),
    averaging `rate`; each burst moves to another document, and one keystroke in five goes
    to a random other open document (switching files, multi-file edits)."""
    rng = random.Random(seed)
    keys: list[Keystroke] = []
    now, active = 0.0, 0
    burst = True
    phase_end = 0.5
    while now < duration_s:
        phase_rate = rate * 3.0 if burst else rate / 3.0
        now += rng.expovariate(phase_rate)
        if now >= phase_end:
            burst = not burst
            now = phase_end
            phase_end += 0.5 if burst else 1.5
            if burst:
                active = rng.randrange(documents)
            continue
        document = active if rng.random() < 0.8 else rng.randrange(documents)
        keys.append(Keystroke(now, document))
    return [k for k in keys if k.at_s < duration_s]


@dataclass
class LoadReport:
    keystrokes: int = 0
    duration_s: float = 0.0
    documents: int = 0
    completions_answered: int = 0
    completions_with_items: int = 0
    completion_errors: int = 0
    cheap_latency_ms: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    rss_by_minute: list[int] = field(default_factory=list)
    """RSS at the start and after each whole minute of load: a soak's growth curve."""
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)
    """Each RSS sample (1 s apart): seconds of load, keystrokes sent, completions answered,
    RSS KiB; the slope per keystroke and the soak's table come from these."""
    minutes: list[tuple[float, int, int, int]] = field(default_factory=list)
    """The samples that went into `rss_by_minute`."""
    server_stats: dict[str, Any] = field(default_factory=dict)


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


async def _cheap_requests(editor: TypingEditor, stop: asyncio.Event, out: list[float]) -> None:
    while not stop.is_set():
        out.append(await editor.timed_stats())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


async def _sample_rss(pid: int, stop: asyncio.Event, report: LoadReport, counts: Counts) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not stop.is_set():
        value = _rss_kib(pid)
        elapsed = loop.time() - start
        sample = (round(elapsed, 2), counts.keystrokes, counts.answered, value)
        report.rss_kib.append(value)
        if value:
            report.samples.append(sample)
        if elapsed >= RSS_MINUTE_S * len(report.rss_by_minute):
            report.rss_by_minute.append(value)
            report.minutes.append(sample)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


def _scripted_engine(tokens: int = 12) -> FakeEngine:
    """Streams `tokens` short chunks 20 ms apart after 30 ms, like a fast small engine."""
    engine = FakeEngine()
    engine.models = ["scripted"]
    engine.keep_bodies = False
    engine.default = Reply(
        chunks=[f"x{index}" for index in range(tokens)],
        first_delay_s=0.01,  # + delay_s before the first chunk: it lands at 30 ms
        delay_s=0.02,
        finish_reason="length",
    )
    return engine


async def run_load(
    *,
    duration_s: float = 60.0,
    rate: float = 50.0,
    documents: int = 10,
    engine_url: str | None = None,
    options: dict[str, Any] | None = None,
    root: Path | None = None,
    seed: int = 7,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run the load and return the report (see `render`)."""
    engine = None if engine_url else await _scripted_engine().start()
    url = engine_url or (engine.url if engine else "")
    workspace = root or Path.cwd()
    initialization = {"engine": {"url": url}, **(options or {})}
    base = os.environ if env is None else env
    server_env = {k: v for k, v in base.items() if not k.startswith("COPILOT_LSP_ENGINE")}
    report = LoadReport(documents=documents)
    stop = asyncio.Event()
    editor: TypingEditor | None = None
    try:
        editor = await TypingEditor.start(workspace, documents, initialization, server_env)
        await editor.stats()  # warm: the server is up
        report.rss_kib.append(_rss_kib(editor.pid))
        background = [
            asyncio.ensure_future(_cheap_requests(editor, stop, report.cheap_latency_ms)),
            asyncio.ensure_future(_sample_rss(editor.pid, stop, report, editor.counts)),
        ]
        schedule = typing_schedule(duration_s, rate, documents, seed)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for key in schedule:
            delay = start + key.at_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            editor.keystroke(key.document)
        await editor.drain(30.0)
        report.duration_s = loop.time() - start
        stop.set()
        await asyncio.gather(*background, return_exceptions=True)
        report.rss_kib.append(_rss_kib(editor.pid))
        counts = editor.counts
        report.samples.append(
            (round(report.duration_s, 2), counts.keystrokes, counts.answered, report.rss_kib[-1])
        )
        report.server_stats = await editor.stats()
    finally:
        stop.set()
        if editor is not None:
            await editor.close()
        if engine is not None:
            await engine.stop()
    assert editor is not None  # started, or the exception above has left already
    counts = editor.counts
    report.keystrokes = counts.keystrokes
    report.completions_answered = counts.answered
    report.completions_with_items = counts.with_items
    report.completion_errors = counts.failed
    result = _summarise(report, engine, url, rate, documents, initialization)
    result["server_log_warnings"] = sum(" WARNING " in line for line in editor.stderr_lines)
    result["server_log_errors"] = sum(" ERROR " in line for line in editor.stderr_lines)
    return result


def rss_slope(
    samples: list[tuple[float, int, int, int]], warmup_s: float = SLOPE_WARMUP_S
) -> dict[str, Any]:
    """Least-squares slope of RSS against keystrokes sent, after `warmup_s` of load:
    KiB per 1,000 keystrokes (a leak per edit or per request shows as a steady slope, the
    bounded caches filling up as a flattening one), and per minute for comparison."""
    kept = [sample for sample in samples if sample[0] >= warmup_s and sample[3]]
    result: dict[str, Any] = {"warmup_s": warmup_s, "n": len(kept)}
    keys = [float(sample[1]) for sample in kept]
    if len(kept) < 3 or max(keys) - min(keys) < 1:
        return {**result, "kib_per_1000_keystrokes": None, "kib_per_minute": None}
    times = [sample[0] for sample in kept]
    rss = [float(sample[3]) for sample in kept]
    per_key = statistics.linear_regression(keys, rss).slope
    per_second = statistics.linear_regression(times, rss).slope
    return {
        **result,
        "keystrokes": int(max(keys) - min(keys)),
        "kib_per_1000_keystrokes": round(per_key * 1000.0, 1),
        "kib_per_minute": round(per_second * 60.0, 1),
    }


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 2)
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1], 2)


def _summarise(
    report: LoadReport,
    engine: FakeEngine | None,
    url: str,
    rate: float,
    documents: int,
    options: dict[str, Any],
) -> dict[str, Any]:
    server_engine = report.server_stats.get("engine") or {}
    engine_requests = len(engine.requests) if engine is not None else None
    keystrokes = max(report.keystrokes, 1)
    rss = [value for value in report.rss_kib if value]
    # Samples are 1 s apart; the first seconds load the tokenizer, grammars and HTTP client.
    warm = rss[min(len(rss) - 1, WARMUP_SAMPLES)] if rss else None
    return {
        "host": platform.node(),
        "engine": "scripted (in-process)" if engine is not None else url,
        "settings": options,
        "target_rate_per_s": rate,
        "documents": documents,
        "duration_s": round(report.duration_s, 2),
        "keystrokes": report.keystrokes,
        "keystrokes_per_s": round(report.keystrokes / max(report.duration_s, 1e-9), 1),
        "engine_requests": engine_requests,
        "engine_requests_per_keystroke": (
            round(engine_requests / keystrokes, 3) if engine_requests is not None else None
        ),
        "engine_streams_aborted": engine.aborted if engine is not None else None,
        "peak_inflight_engine_side": engine.peak_open if engine is not None else None,
        "peak_inflight_server_side": server_engine.get("requests_open_peak"),
        "completions_answered": report.completions_answered,
        "completions_with_items": report.completions_with_items,
        "completion_requests_cancelled_or_failed": report.completion_errors,
        "cheap_request": {
            "method": STATS_REQUEST,
            "n": len(report.cheap_latency_ms),
            "p50_ms": _percentile(report.cheap_latency_ms, 50),
            "p99_ms": _percentile(report.cheap_latency_ms, 99),
            "max_ms": round(max(report.cheap_latency_ms), 2) if report.cheap_latency_ms else None,
        },
        "rss_kib": {
            "start": rss[0] if rss else None,
            "end": rss[-1] if rss else None,
            "peak": max(rss) if rss else None,
            "growth": (rss[-1] - rss[0]) if rss else None,
            "after_warmup": warm,
            "growth_after_warmup": (rss[-1] - warm) if rss and warm else None,
            "by_minute": report.rss_by_minute,
            # A soak's figure: from the end of its first minute to the end of the run.
            "growth_after_first_minute": (
                rss[-1] - report.rss_by_minute[1] if rss and len(report.rss_by_minute) > 1 else None
            ),
            # The soak's table: [seconds, keystrokes, completions answered, RSS KiB].
            "minutes": [list(sample) for sample in report.minutes]
            + ([list(report.samples[-1])] if report.samples else []),
            "slope_after_warmup": rss_slope(report.samples),
            "samples": [list(sample) for sample in report.samples],
        },
        "outcomes": report.server_stats.get("outcomes"),
    }
