"""Send the benchmark's requests to one engine and record everything about each of them.

A run is a list of cells; a cell is one (prompt set, concurrency, temperature, repeat) on
one profile, run alone on its engine, so the engine's speculative-decoding counters read
before and after the cell give that cell's acceptance exactly. Each request is streamed
with per-chunk usage (`continuous_usage_stats`): its record keeps the arrival time and
token count of every chunk (a speculative step may deliver several tokens in one chunk),
so time to first token, every inter-token gap and tokens/s all come from one source.
Failures are recorded with their error and counted, never raised.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from copilot_lsp.bench.engine.prompts import Prompt
from copilot_lsp.engine.monitor import Scrape, scrape, window_between
from copilot_lsp.engine.sse import DONE, SSEDecoder

MIXED = "flat+nested"
"""The set the concurrency and temperature sweeps use: flat and nested prompts alternated."""


@dataclass(frozen=True, slots=True)
class CellSpec:
    set: str
    concurrency: int
    temperature: float
    repeat: int
    requests: int


@dataclass(frozen=True, slots=True)
class Plan:
    sets: Sequence[str]
    concurrency: Sequence[int]
    temperatures: Sequence[float]
    repeats: int
    max_tokens: int

    def cells(self, prompts: Sequence[Prompt]) -> list[CellSpec]:
        """Per repeat: each set alone at concurrency 1 and temperature 0 (acceptance by kind
        of code, greedy outputs to compare), then the temperature sweep at concurrency 1 and
        the concurrency sweep at temperature 0, both on flat and nested prompts mixed."""
        counts = {name: sum(1 for p in prompts if p.set == name) for name in self.sets}
        mixed = sum(counts.get(name, 0) for name in ("flat", "nested")) or len(prompts)
        cells: list[CellSpec] = []
        for repeat in range(self.repeats):
            for name in self.sets:
                if counts[name]:
                    cells.append(CellSpec(name, 1, 0.0, repeat, counts[name]))
            for temperature in self.temperatures:
                if temperature != 0.0:
                    cells.append(CellSpec(MIXED, 1, temperature, repeat, mixed))
            for concurrency in self.concurrency:
                if concurrency != 1:
                    # Two waves where that is cheap; one full wave from 16 on.
                    requests = 2 * concurrency if concurrency < 16 else concurrency
                    cells.append(CellSpec(MIXED, concurrency, 0.0, repeat, requests))
        return cells


@dataclass(slots=True)
class RequestRecord:
    prompt: str
    ok: bool
    error: str | None = None
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    tokens: int = 0
    chunks: list[tuple[float, int]] = field(default_factory=list)
    """(ms since the request was sent, completion tokens so far) per streamed chunk."""
    text: str | None = None
    cut_at: int | None = None
    """Left early (a next-edit rewrite run past its window): the characters kept; the text
    is cut there, so greedy outputs compare whatever each engine had streamed beyond."""

    @property
    def tok_s(self) -> float | None:
        """Tokens per second seen by this request's user: all tokens over end-to-end time."""
        if not self.ok or not self.e2e_ms or not self.tokens:
            return None
        return self.tokens / (self.e2e_ms / 1000.0)


@dataclass(slots=True)
class Cell:
    profile: str
    spec: CellSpec
    wall_s: float
    acceptance: dict[str, Any] | None
    records: list[RequestRecord]

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            **asdict(self.spec),
            "wall_s": round(self.wall_s, 3),
            "acceptance": self.acceptance,
            "requests": [
                {**asdict(record), "tok_s": _round(record.tok_s, 2)} for record in self.records
            ],
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


async def stream_request(
    client: httpx.AsyncClient,
    root: str,
    model: str,
    prompt: Prompt,
    max_tokens: int,
    temperature: float,
    seed: int,
    keep_text: bool,
) -> RequestRecord:
    body: dict[str, Any] = {
        "model": model,
        "prompt": prompt.text,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
        "stream": True,
        # Every request the same length, so tokens/s compare across profiles.
        "ignore_eos": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    if prompt.stop:  # a whole answer (a next-edit rewrite): to its stop string
        body.update(stop=list(prompt.stop), ignore_eos=False)
    if prompt.max_tokens is not None:
        body["max_tokens"] = prompt.max_tokens
    record = RequestRecord(prompt=prompt.name, ok=False)
    parts: list[str] = []
    started = time.perf_counter()
    try:
        async with client.stream("POST", f"{root}/v1/completions", json=body) as response:
            if response.status_code != 200:
                detail = (await response.aread()).decode("utf-8", "replace")[:200]
                record.error = f"HTTP {response.status_code}: {detail}"
                return record
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                for payload in decoder.feed(line):
                    if payload != DONE:
                        _take(json.loads(payload), record, parts, started)
                if prompt.cut is not None and _left(prompt.cut, record, parts):
                    break  # leaving the stream closes it: the engine stops, as for the server
            else:
                for payload in decoder.flush():  # a last event without its blank line
                    if payload != DONE:
                        _take(json.loads(payload), record, parts, started)
    except (httpx.HTTPError, json.JSONDecodeError, ValueError) as error:
        record.error = f"{type(error).__name__}: {error}"[:200]
        return record
    record.e2e_ms = round((time.perf_counter() - started) * 1000.0, 2)
    record.ok = record.tokens > 0
    if not record.ok:
        record.error = "the stream ended without a token"
    if keep_text:
        text = "".join(parts)
        record.text = text if record.cut_at is None else text[: record.cut_at]
    return record


def _left(cut: Callable[[str], int | None], record: RequestRecord, parts: list[str]) -> bool:
    """Whether the answer so far is left here; its kept length goes into the record."""
    record.cut_at = cut("".join(parts))
    return record.cut_at is not None


def _take(event: dict[str, Any], record: RequestRecord, parts: list[str], started: float) -> None:
    """One streamed event into the request's record: its arrival time and token count."""
    now = round((time.perf_counter() - started) * 1000.0, 2)
    usage = event.get("usage") or {}
    tokens = int(usage.get("completion_tokens") or record.tokens)
    texts = [c.get("text") or "" for c in event.get("choices") or []]
    if tokens > record.tokens or any(texts):
        if record.ttft_ms is None:
            record.ttft_ms = now
        record.chunks.append((now, tokens))
    record.tokens = tokens
    parts.extend(texts)


async def _scrape(client: httpx.AsyncClient, root: str) -> Scrape | None:
    """The engine's counters now; None when they cannot be read (the cell has no acceptance)."""
    try:
        return await scrape(client, root)
    except httpx.HTTPError:
        return None


async def run_cell(
    client: httpx.AsyncClient,
    root: str,
    model: str,
    profile: str,
    spec: CellSpec,
    prompts: Sequence[Prompt],
    max_tokens: int,
    on_request_done: Callable[[], None] = lambda: None,
) -> Cell:
    chosen = [p for p in prompts if spec.set == MIXED and p.set in ("flat", "nested")]
    chosen = chosen or [p for p in prompts if p.set == spec.set] or list(prompts)
    if spec.set == MIXED:  # alternate the two kinds so every wave carries both
        flat = [p for p in chosen if p.set == "flat"]
        nested = [p for p in chosen if p.set == "nested"]
        chosen = [p for pair in zip(flat, nested, strict=False) for p in pair] or chosen
    gate = asyncio.Semaphore(spec.concurrency)
    keep_text = spec.concurrency == 1 and spec.temperature == 0.0

    async def one(index: int) -> RequestRecord:
        async with gate:
            record = await stream_request(
                client,
                root,
                model,
                chosen[index % len(chosen)],
                max_tokens,
                spec.temperature,
                seed=1000 * spec.repeat + index,
                keep_text=keep_text,
            )
        on_request_done()
        return record

    before = await _scrape(client, root)
    started = time.perf_counter()
    records = await asyncio.gather(*(one(i) for i in range(spec.requests)))
    wall = time.perf_counter() - started
    after = await _scrape(client, root)
    acceptance = None
    if before is not None and after is not None:
        window = window_between(before, after)
        acceptance = window.as_dict() if window.drafts else None
    return Cell(profile, spec, wall, acceptance, list(records))


async def run_profile_cells(
    root: str,
    model: str,
    profile: str,
    cells: Sequence[CellSpec],
    prompts: Sequence[Prompt],
    max_tokens: int,
    on_request_done: Callable[[], None] = lambda: None,
) -> list[Cell]:
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    timeout = httpx.Timeout(connect=10.0, read=600.0, write=30.0, pool=600.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        # One short request first: the first one after start-up pays for warming caches.
        warm = Prompt("warmup", "warmup", "import os\n\n\ndef main():\n")
        await stream_request(client, root, model, warm, 8, 0.0, 0, keep_text=False)
        results = []
        for spec in cells:
            results.append(
                await run_cell(
                    client, root, model, profile, spec, prompts, max_tokens, on_request_done
                )
            )
        return results
