"""Run the next-edit suite through the real server over stdio.

One server for the run, next edits on. Each scenario: its file opened (didOpen), the user's
edits replayed as didChange steps (so the server's edit history holds them), then one
`textDocument/copilotInlineEdit` at the cursor; the first edit offered is applied to the
buffer and scored (bench/nextedit/score.py). The document is closed after, which drops its
steps from the history: no scenario sees another's edits.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.bench.nextedit import score
from copilot_lsp.bench.nextedit.suite import Scenario
from copilot_lsp.client.driver import EditorSession, plain
from copilot_lsp.engine.client import token_logprobs
from copilot_lsp.lsp import methods
from copilot_lsp.nextedit.prompt import load_format
from copilot_lsp.positions import Encoding, Position, offset_at, position_at

ENCODING: Encoding = "utf-16"


def options(
    engine_url: str | None, prompt_format: str | None, window: tuple[int, int] | None = None
) -> dict[str, Any]:
    next_edit: dict[str, Any] = {"enabled": True}
    if prompt_format:
        next_edit["format"] = prompt_format
    if window is not None:
        next_edit["linesAbove"], next_edit["linesBelow"] = window
    result: dict[str, Any] = {"nextEditSuggestions": next_edit, "completion": {"debounceMs": 0}}
    if engine_url:
        result["engine"] = {"url": engine_url}
    return result


async def run_suite(
    scenarios: list[Scenario],
    engine_url: str | None,
    workdir: Path,
    *,
    prompt_format: str | None = None,
    timeout_s: float = 300.0,
    log: Any = None,
    server_stats: dict[str, Any] | None = None,
    completions: bool = True,
    window: tuple[int, int] | None = None,
) -> list[dict[str, Any]]:
    """Each scenario's record; with `completions`, an inline completion is asked at the
    cursor after the next edit, for its latency. `server_stats` (when given) receives the
    server's own view at the end (`copilot/stats`: next edits' counters, inline completions'
    time to answer). `window`: the lines above and below the cursor's line the server
    rewrites (None: its defaults)."""
    session = await EditorSession.start(
        workdir, initialization_options=options(engine_url, prompt_format, window)
    )
    results: list[dict[str, Any]] = []
    try:
        for index, scenario in enumerate(scenarios):
            path = workdir / f"s{index:03d}.py"
            record = await run_one(session, scenario, path, timeout_s, completions)
            results.append(record)
            if log is not None:
                log(
                    f"{index + 1}/{len(scenarios)} {scenario.id}: "
                    f"{'exact' if record['exact'] else 'miss'} "
                    f"({'edit' if record['shown'] else 'none'}, {record['latency_ms']:.0f} ms)"
                )
        if server_stats is not None:
            stats = await session.stats()
            server_stats.update(
                next_edits=stats.get("next_edits"),
                completion_finished=(stats.get("stages") or {}).get("finished"),
            )
    finally:
        await session.close()
    return results


def _change(session: EditorSession, uri: str, version: int, text: str, step: Any) -> None:
    start, end = position_at(text, step.start, ENCODING), position_at(text, step.end, ENCODING)
    session.replace(
        uri, version, (start.line, start.character), (end.line, end.character), step.text
    )


async def run_one(
    session: EditorSession,
    scenario: Scenario,
    path: Path,
    timeout_s: float = 300.0,
    completions: bool = True,
) -> dict[str, Any]:
    uri = session.open(path, scenario.before)
    text, version = scenario.before, 1
    for step in scenario.steps:
        version += 1
        _change(session, uri, version, text, step)
        text = text[: step.start] + step.text + text[step.end :]
    cursor = position_at(text, scenario.cursor, ENCODING)
    params = {
        "textDocument": {"uri": uri, "version": version},
        "position": {"line": cursor.line, "character": cursor.character},
    }
    started = time.perf_counter()
    try:
        answer = plain(
            await asyncio.wait_for(
                session.client.protocol.send_request_async(methods.INLINE_EDIT, params), timeout_s
            )
        )
        error = None
    except (TimeoutError, Exception) as failure:  # a failed request scores as no edit
        answer, error = {"edits": []}, f"{type(failure).__name__}: {failure}"
    latency_ms = (time.perf_counter() - started) * 1000.0
    completion = await _inline_completion(session, uri, cursor, timeout_s) if completions else {}
    session.close_document(uri)
    edits = list(answer.get("edits") or []) if isinstance(answer, dict) else []
    predicted = text
    offered = None
    if edits:
        edit = edits[0]
        span = edit["range"]
        start = offset_at(text, _position(span["start"]), ENCODING)
        end = offset_at(text, _position(span["end"]), ENCODING)
        predicted = score.apply_edit(text, start, end, edit["text"])
        offered = {"start": start, "end": end, "text": edit["text"]}
    return {**scored(scenario, text, predicted, offered, latency_ms, error), **completion}


async def _inline_completion(
    session: EditorSession, uri: str, cursor: Position, timeout_s: float
) -> dict[str, Any]:
    """An inline completion at the same cursor, asked as an editor does while the user types:
    its latency, beside the next edit's."""
    started = time.perf_counter()
    try:
        items = await session.complete(
            uri, cursor.line, cursor.character, timeout_s=timeout_s, automatic=True
        )
    except Exception:  # a failed request has no latency to report
        return {"completion_latency_ms": None, "completion_shown": False}
    return {
        "completion_latency_ms": round((time.perf_counter() - started) * 1000.0, 1),
        "completion_shown": bool(items),
    }


def _position(value: dict[str, int]) -> Position:
    return Position(int(value["line"]), int(value["character"]))


def scored(
    scenario: Scenario,
    current: str,
    predicted: str,
    offered: dict[str, Any] | None,
    latency_ms: float,
    error: str | None = None,
) -> dict[str, Any]:
    target = scenario.target()
    shown = offered is not None and predicted != current
    return {
        "id": scenario.id,
        "kind": scenario.kind,
        "wants_edit": scenario.wants_edit,
        "shown": shown,
        "exact": predicted == target,
        "delta_chrf": round(score.delta_chrf(current, predicted, target), 4),
        "reversal": round(score.reversal(scenario.before, current, predicted), 4) if shown else 0.0,
        "latency_ms": round(latency_ms, 1),
        "offered": offered,
        "error": error,
    }


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite's figures: over all, over the scenarios that want an edit, over those that
    want none, and per kind."""

    def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
        if not rows:
            return {"n": 0}
        shown = [r for r in rows if r["shown"]]
        quiet_rows = [r for r in rows if not r["wants_edit"]]
        latencies = sorted(r["latency_ms"] for r in rows)
        return {
            "n": len(rows),
            "exact": round(sum(r["exact"] for r in rows) / len(rows), 4),
            "delta_chrf": round(statistics.mean(r["delta_chrf"] for r in rows), 4),
            "shown": round(len(shown) / len(rows), 4),
            "quiet": round(sum(not r["shown"] for r in quiet_rows) / len(quiet_rows), 4)
            if quiet_rows
            else None,
            "reversal_ratio": round(statistics.mean(r["reversal"] for r in shown), 4)
            if shown
            else 0.0,
            "reversals": sum(r["reversal"] > 0 for r in shown),
            "errors": sum(r["error"] is not None for r in rows),
            "p50_latency_ms": round(_percentile(latencies, 0.5), 1),
            "p90_latency_ms": round(_percentile(latencies, 0.9), 1),
            **_completion_figures(rows),
        }

    kinds = sorted({r["kind"] for r in results})
    return {
        "all": figures(results),
        "want_edit": figures([r for r in results if r["wants_edit"]]),
        "want_none": figures([r for r in results if not r["wants_edit"]]),
        "kinds": {k: figures([r for r in results if r["kind"] == k]) for k in kinds},
    }


def _completion_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The inline completions asked at the scenarios' cursors: how many, p50/p90 latency."""
    latencies = sorted(
        r["completion_latency_ms"] for r in rows if r.get("completion_latency_ms") is not None
    )
    if not latencies:
        return {}
    return {
        "completions": len(latencies),
        "completion_p50_latency_ms": round(_percentile(latencies, 0.5), 1),
        "completion_p90_latency_ms": round(_percentile(latencies, 0.9), 1),
    }


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = q * (len(sorted_values) - 1)
    low = int(index)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (index - low)


async def diagnose(
    scenarios: list[Scenario],
    engine_url: str,
    prompt_format: str = "fenced",
    window: tuple[int, int] | None = None,
) -> list[dict[str, Any]]:
    """Each scenario's rewrite request sent straight to the engine (greedy, as the server
    sends it): the model's answer, and what the server makes of it (`verdict`: offered, or
    why not). Shows why the suite's numbers are what they are: a quiet model, or a model
    whose answers the gates drop."""
    from copilot_lsp.bench.nextedit.prompts import WINDOW, rewrite_request

    root = engine_url.rstrip("/").removesuffix("/v1")
    found = []
    async with httpx.AsyncClient(timeout=600.0) as client:
        model = (await client.get(f"{root}/v1/models")).json()["data"][0]["id"]
        for index, scenario in enumerate(scenarios):
            request = rewrite_request(
                scenario, prompt_format, path=f"s{index:03d}.py", window_lines=window or WINDOW
            )
            body = {
                "model": model,
                "prompt": request.prompt,
                "max_tokens": request.max_tokens,
                "temperature": 0.0,
                "stop": list(request.stop),
                "logprobs": 0,
            }
            answer = (await client.post(f"{root}/v1/completions", json=body)).json()
            choice = answer["choices"][0]
            text, finish = str(choice.get("text") or ""), choice.get("finish_reason")
            logprobs = token_logprobs(choice.get("logprobs"))
            as_is = "\n".join(request.window)
            wanted = request.expected if request.expected is not None else as_is
            got = load_format(prompt_format).answer(request.prefill + text)
            found.append(
                {
                    "id": scenario.id,
                    "verdict": request.verdict(text, finish, logprobs=logprobs),
                    "confidence": request.confidence(text, logprobs),
                    "finish": finish,
                    "tokens": (answer.get("usage") or {}).get("completion_tokens"),
                    "window_right": got == wanted,
                    "window_unchanged": got == as_is,
                    "answer": request.prefill + text,  # the prompt's start of it too
                }
            )
    return found
