"""The cross-file benchmark's arms, side by side on the same tasks and the same engine.

- `naive`: the text of file A before the cursor (its last NAIVE_PREFIX_CHARS characters,
  from a line start) sent straight to the engine, cut at the line break;
- `current-file`: the server, file A the only open document;
- `open-tabs`: the server with the modules that define what the line uses open beside A
  (didOpen before A; closed after the task);
- `workspace`: the server with its workspace index on (`context.workspace.enabled`), file A
  the only open document.

Every server arm is initialized with rootUri = the package's folder and
`context.workspace.enabled` false (true for `workspace`); one server per arm and package. The
`workspace` arm's first task waits for the index's first pass (`INDEX_WAIT_S` at most): the
arm measures what the index brings, not how fast it is built (`bench index` does).
The order of the arms alternates per task, so the engine's prefix cache favours none.
The server arms reach the engine through a relay that keeps their prompts (tap.py): a record
says whether the API's name was in the prompt's head, so a miss reads as the retrieval's or
the model's.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

from copilot_lsp.bench.crossfile.score import score
from copilot_lsp.bench.crossfile.tap import PromptTap, cross_file_part
from copilot_lsp.bench.crossfile.tasks import Task
from copilot_lsp.bench.naive import NaiveEngine
from copilot_lsp.client.driver import EditorSession, item_id
from copilot_lsp.positions import Position, offset_at, position_at

NAIVE = "naive"
SERVER_ARMS: dict[str, bool] = {"current-file": False, "open-tabs": False, "workspace": True}
"""Server arm -> `context.workspace.enabled`."""
ARMS = (NAIVE, *SERVER_ARMS)
OPEN_TABS = "open-tabs"
NAIVE_PREFIX_CHARS = 2000
"""About the server's prompt budget for the embedded model (512 tokens)."""
TIMEOUT_S = 300.0
INDEX_WAIT_S = 120.0


def options(arm: str, engine_url: str) -> dict[str, Any]:
    """The server arm's initializationOptions."""
    return {
        "engine": {"url": engine_url},
        "completion": {"debounceMs": 0},
        "telemetry": {"enableLog": False},
        "context": {"workspace": {"enabled": SERVER_ARMS[arm]}},
    }


def naive_prompt(text: str, offset: int) -> str:
    before = text[:offset]
    if len(before) <= NAIVE_PREFIX_CHARS:
        return before
    cut = before.find("\n", len(before) - NAIVE_PREFIX_CHARS)
    return before[cut + 1 :] if cut >= 0 else before[-NAIVE_PREFIX_CHARS:]


async def run_tasks(
    tasks: list[Task],
    arms: list[str],
    engine_url: str,
    splits: dict[str, str],
    log: Callable[[str], None] = lambda line: None,
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """A record per task and arm, and what each server arm's servers told the user
    (window/showMessage: a setting they did not take, …), each message once."""
    records: list[dict[str, Any]] = []
    said: dict[str, list[str]] = {arm: [] for arm in arms if arm != NAIVE}
    naive = NaiveEngine(engine_url) if NAIVE in arms else None
    tap = await PromptTap(engine_url).start()
    packages: dict[str, list[Task]] = {}
    for task in tasks:
        packages.setdefault(task.package, []).append(task)
    index = 0
    try:
        for package, group in packages.items():
            sessions: dict[str, EditorSession] = {}
            try:
                for arm in said:
                    sessions[arm] = await EditorSession.start(
                        group[0].root, initialization_options=options(arm, tap.url)
                    )
                    if SERVER_ARMS[arm]:
                        log(f"{package}: {await _indexed(sessions[arm])} files indexed")
                for task in group:
                    order = arms if index % 2 == 0 else list(reversed(arms))
                    for arm in order:
                        record = await _one(task, arm, naive, sessions.get(arm), tap)
                        records.append({"split": splits.get(package, ""), **record})
                    index += 1
                    log(f"{index}/{len(tasks)} {task.task_id}")
            finally:
                for arm, session in sessions.items():
                    said[arm].extend(m for m in session.messages if m not in said[arm])
                    await session.close()
    finally:
        await tap.stop()
        if naive is not None:
            await naive.close()
    return records, said


async def _indexed(session: EditorSession) -> int | None:
    """Wait for the index's first pass; the files it holds (None: not finished in time)."""
    deadline = time.monotonic() + INDEX_WAIT_S
    while time.monotonic() < deadline:
        index = (await session.stats()).get("index") or {}
        if index.get("first_pass_s") is not None:
            return int(index.get("files") or 0)
        await asyncio.sleep(0.1)
    return None


async def _one(
    task: Task,
    arm: str,
    naive: NaiveEngine | None,
    session: EditorSession | None,
    tap: PromptTap,
) -> dict[str, Any]:
    text, offset = task.editor_text()
    record: dict[str, Any] = {
        "task_id": task.task_id,
        "package": task.package,
        "kind": task.kind,
        "arm": arm,
    }
    if naive is not None and arm == NAIVE:
        answer = await naive.first_line(naive_prompt(text, offset))
        record |= score(answer.text, task.answer, task.name)
        ms = {"first_token": answer.first_token_ms} if answer.first_token_ms is not None else {}
        return record | {
            "round_trip_ms": round(answer.round_trip_ms, 1),
            "ms": ms,
            "tokens": answer.tokens,
        }
    assert session is not None
    opened = []
    if arm == OPEN_TABS:
        for relative in task.defining:
            path = task.root / relative
            opened.append(session.open(path, path.read_text(encoding="utf-8")))
    uri = session.open(task.root / task.path, text)
    cursor = position_at(text, offset, "utf-16")
    mark = len(tap.sent)
    started = time.perf_counter()
    try:
        items = await session.complete(uri, cursor.line, cursor.character, timeout_s=TIMEOUT_S)
    finally:
        for document in (uri, *opened):
            session.close_document(document)
    round_trip = (time.perf_counter() - started) * 1000.0
    completion = ""
    timeline: dict[str, Any] = {}
    if items:
        completion = _applied(text, offset, items[0])
        wanted = item_id(items[0])
        recent = (await session.stats()).get("recent") or []
        timeline = next((r for r in recent if r.get("id") == wanted), {})
    record |= score(completion, task.answer, task.name)
    prompt = tap.completion_since(mark)
    return record | {
        "round_trip_ms": round(round_trip, 1),
        "api_in_head": None if prompt is None else in_head(prompt, task),
        "ms": timeline.get("ms", {}),
        "tokens": timeline.get("tokens"),
        "mode": timeline.get("mode"),
        "outcome": timeline.get("outcome"),
    }


def in_head(prompt: str, task: Task) -> bool:
    """Whether the API's name is in the prompt before the current file's code (its imports
    are after that): put there by the retrieval, or by the file's own definitions."""
    whole_name = re.compile(rf"(?<!\w){re.escape(task.name)}(?!\w)")
    return whole_name.search(cross_file_part(prompt, task.path)) is not None


def _applied(text: str, offset: int, item: Any) -> str:
    """What the cursor's line holds from the cursor on once the item is applied (its range
    may start before the cursor or replace text right of it)."""
    start = end = offset
    if item.range is not None:
        first, last = item.range.start, item.range.end
        start = offset_at(text, Position(first.line, first.character), "utf-16")
        end = offset_at(text, Position(last.line, last.character), "utf-16")
    after = text[:start] + str(item.insert_text) + text[end:]
    line_start = text.rfind("\n", 0, offset) + 1
    return after[line_start:].split("\n", 1)[0][offset - line_start :]
