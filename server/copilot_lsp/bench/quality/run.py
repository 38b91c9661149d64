"""Completion quality on SAFIM's Python subsets through the real server and engine.

Each task's program is opened with the hole removed, an inline completion is requested at
the hole, and the accepted suggestion is scored: block and control subsets by running the
program on its unit tests (pass@1, greedy), the api subset by exact match; edit similarity
and latency for all. Two modes run in one go against the same engine: `pipeline` (context
snippets and output filters on) and `plain` (line window and block-end cut only). `naive`
is the floor to compare latency with: no server, the text before the hole sent to the same
engine as is (prefix only) and cut at the first line break. A mode named `MODE@base` runs
MODE with the server of another checkout (`base_checkout`), to compare before and after a
change in one run against the same engine.

Besides SAFIM's subsets, `holes` are statement holes between existing statements made from the
block subset (safim.statement_holes): one line, code right below at the same indentation.
"""

from __future__ import annotations

import asyncio
import platform
import sys
import time
from pathlib import Path
from typing import Any

from copilot_lsp.bench.naive import NaiveEngine
from copilot_lsp.bench.quality.report import summarise
from copilot_lsp.bench.quality.safim import (
    DATA,
    DERIVED,
    VENDORED,
    Task,
    edit_similarity,
    exact_match,
    load_tasks,
    statement_holes,
)
from copilot_lsp.bench.quality.sandbox import UnitTest, passes
from copilot_lsp.client.driver import EditorSession, item_id
from copilot_lsp.positions import position_at

MODES: dict[str, dict[str, Any]] = {
    "pipeline": {},
    "plain": {"prompt": {"snippets": False}, "completion": {"filters": False}},
    # The first complete line answered at once (editor.earlyAnswerMs 0), the rest asked for
    # again at the same position as a plain client would: first answer and whole suggestion.
    "early": {"editor": {"earlyAnswerMs": 0}},
}
NAIVE = "naive"
BASE = "@base"


def known_mode(mode: str) -> bool:
    return mode == NAIVE or mode.removesuffix(BASE) in MODES


def _options(mode: str, engine_url: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {"completion": {"debounceMs": 0, "maxTokens": 128}}
    for section, values in MODES[mode.removesuffix(BASE)].items():
        options[section] = {**options.get(section, {}), **values}
    if engine_url:
        options["engine"] = {"url": engine_url}
    return options


def _server_command(mode: str, base_checkout: Path | None) -> list[str] | None:
    if not mode.endswith(BASE):
        return None
    if base_checkout is None:
        raise ValueError(f"mode {mode} needs the base checkout's folder")
    server = base_checkout.absolute() / "server"
    return ["env", f"PYTHONPATH={server}", sys.executable, "-m", "copilot_lsp", "--stdio"]


async def run_modes(
    modes: list[str],
    tasks: list[Task],
    engine_url: str | None,
    workdir: Path,
    base_checkout: Path | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every task in every mode, one server per mode, the order of modes alternating per
    task: the engine's prefix cache then favours no mode over another."""
    sessions = {
        mode: await EditorSession.start(
            workdir,
            server_command=_server_command(mode, base_checkout),
            initialization_options=_options(mode, engine_url),
        )
        for mode in modes
        if mode != NAIVE
    }
    naive = NaiveEngine(engine_url) if NAIVE in modes else None
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    try:
        for index, task in enumerate(tasks):
            order = modes if index % 2 == 0 else list(reversed(modes))
            for mode in order:
                if naive is not None and mode == NAIVE:
                    results[mode].append(await _naive(naive, task))
                else:
                    early = mode.removesuffix(BASE) == "early"
                    results[mode].append(
                        await _complete_one(sessions[mode], task, index, workdir, early=early)
                    )
    finally:
        for session in sessions.values():
            await session.close()
        if naive is not None:
            await naive.close()
    return results


async def _naive(naive: NaiveEngine, task: Task) -> dict[str, Any]:
    answer = await naive.first_line(task.before)
    return await _scored(
        task, answer.text, len(task.before), answer.round_trip_ms, {"tokens": answer.tokens}
    )


async def run_mode(
    mode: str, tasks: list[Task], engine_url: str | None, workdir: Path
) -> list[dict[str, Any]]:
    return (await run_modes([mode], tasks, engine_url, workdir))[mode]


async def _complete_one(
    session: EditorSession, task: Task, index: int, workdir: Path, *, early: bool = False
) -> dict[str, Any]:
    path = workdir / f"{task.subset}_{index}.py"
    uri = session.open(path, task.text)
    cursor = position_at(task.text, len(task.before), "utf-16")
    started = time.perf_counter()
    items = await session.complete(uri, cursor.line, cursor.character, timeout_s=300)
    round_trip = (time.perf_counter() - started) * 1000.0
    first_answer = round_trip
    if early:
        # Asked again at the same place: the rest of the same stream (at once if done).
        items = await session.complete(uri, cursor.line, cursor.character, timeout_s=300) or items
        round_trip = (time.perf_counter() - started) * 1000.0
    session.close_document(uri)
    record = await _score(session, task, items, round_trip)
    record["first_answer_ms"] = round(first_answer, 1)
    return record


async def _score(
    session: EditorSession, task: Task, items: list[Any], round_trip_ms: float
) -> dict[str, Any]:
    completion, end = "", len(task.before)
    timeline: dict[str, Any] = {}
    if items:
        item = items[0]
        completion = str(item.insert_text)
        if item.range is not None:
            # The range may replace closers right of the cursor (same line).
            end = len(task.before) + (item.range.end.character - item.range.start.character)
        wanted = item_id(item)
        recent = (await session.stats()).get("recent") or []
        timeline = next((r for r in recent if r.get("id") == wanted), {})
    return await _scored(task, completion, end, round_trip_ms, timeline)


async def _scored(
    task: Task, completion: str, end: int, round_trip_ms: float, timeline: dict[str, Any]
) -> dict[str, Any]:
    filled = task.before + completion + task.text[end:]
    record: dict[str, Any] = {
        "task_id": task.task_id,
        "subset": task.subset,
        "shown": bool(completion.strip()),
        "edit_similarity": round(edit_similarity(completion, task.ground_truth), 4),
        "round_trip_ms": round(round_trip_ms, 1),
        "first_token_ms": timeline.get("ms", {}).get("first_token"),
        "tokens": timeline.get("tokens"),
        "mode": timeline.get("mode"),
    }
    if task.subset == "api":
        record["exact_match"] = exact_match(completion, task.ground_truth)
    else:
        tests = [UnitTest(t["input"], t["output"]) for t in task.tests[:5]]
        record["passed"] = await asyncio.to_thread(passes, filled, tests)
    return record


async def run_quality_bench(
    data_dir: Path,
    subsets: list[str],
    limit: int,
    modes: list[str],
    engine_url: str | None,
    workdir: Path,
    base_checkout: Path | None = None,
) -> dict[str, Any]:
    tasks = [task for subset in subsets for task in _tasks(data_dir, subset, limit)]
    report: dict[str, Any] = {
        "host": platform.node(),
        # The vendored tasks by name: a report names no folder of this machine for them.
        "data": VENDORED if data_dir == DATA else str(data_dir),
        "limit_per_subset": limit,
        "base_checkout": str(base_checkout) if base_checkout else None,
        "modes": {},
    }
    started = time.perf_counter()
    results = await run_modes(modes, tasks, engine_url, workdir, base_checkout)
    report["seconds"] = round(time.perf_counter() - started, 1)
    for mode in modes:
        report["modes"][mode] = {"summary": summarise(results[mode]), "results": results[mode]}
    return report


def _tasks(data_dir: Path, subset: str, limit: int) -> list[Task]:
    if subset in DERIVED:
        return statement_holes(data_dir, limit)
    return load_tasks(data_dir, subset, limit)
