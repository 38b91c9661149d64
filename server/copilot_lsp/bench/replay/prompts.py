"""The server's own prompts on editing sessions: training text for draft heads.

`copilot-lsp draft prompts` types the replay's editing sessions (write, hole, edit:
bench/replay/sessions.py) into the real server over stdio and asks for a completion every
`every` keystrokes, against a scripted engine that keeps each request's prompt and answers
nothing. The prompts are written as JSON lines, one per engine request, exactly as the server
sent them (snippets, budget and layout of the served model's family). Sessions cut from the
corpus's training split are marked `train`, those from its held-out split (the files the
replay measures on) `heldout`, so a head fine-tuned on them is measured on prompts of files it
never saw. No model runs here: the target's continuations are `draft train --prompts`' job.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from copilot_lsp.bench.replay.sessions import pick_sessions, split_files
from copilot_lsp.client.driver import EditorSession
from copilot_lsp.client.replay.session import KINDS, Session
from copilot_lsp.draft import corpus
from copilot_lsp.errors import ConfigError
from copilot_lsp.testing.fake_engine import FakeEngine, Reply


async def record_prompts(
    roots: Sequence[str],
    out: Path,
    *,
    served_name: str,
    train_per_kind: int,
    heldout_per_kind: int,
    every: int = 3,
    seed: int = 17,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write the prompts of both splits' sessions to `out` (JSON lines); returns counts."""
    if every < 1 or train_per_kind < 1 or heldout_per_kind < 0:
        raise ConfigError("--every and --sessions must be positive, --heldout-sessions >= 0")
    files = corpus.collect(corpus.resolve_roots(list(roots)))
    by_split: dict[corpus.Split, list[corpus.SourceFile]] = {
        "train": split_files(files, "train"),
        "heldout": split_files(files, "heldout"),
    }
    wanted: dict[corpus.Split, int] = {"train": train_per_kind, "heldout": heldout_per_kind}
    engine = FakeEngine()
    engine.models = [served_name]
    # An empty answer: nothing to show, so no suggestion is typed through and every request
    # reaches the engine with the prompt of its own keystroke.
    engine.default = Reply(chunks=[])
    await engine.start()
    counts: dict[str, int] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="copilot-lsp-prompts-") as scratch:
            workspace = Path(scratch) / "workspace"
            workspace.mkdir()
            editor = await EditorSession.start(
                workspace,
                initialization_options={
                    "engine": {"url": engine.url},
                    "telemetry": {"enableLog": False},
                },
            )
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                with out.open("w", encoding="utf-8") as sink:
                    for split, per_kind in wanted.items():
                        if not per_kind:
                            continue
                        sessions = pick_sessions(by_split[split], per_kind, seed, KINDS)
                        log(f"{split}: {len(sessions)} sessions")
                        for session in sessions:
                            for prompt in await _type(editor, engine, session, workspace, every):
                                record = {"split": split, "session": session.id, "prompt": prompt}
                                sink.write(json.dumps(record) + "\n")
                                counts[split] = counts.get(split, 0) + 1
            finally:
                await editor.close()
    finally:
        await engine.stop()
    if not counts:
        raise ConfigError("the server sent the engine no prompt; see its log")
    return {"out": str(out), "prompts": counts, "every": every, "served_name": served_name}


async def _type(
    editor: EditorSession, engine: FakeEngine, session: Session, workspace: Path, every: int
) -> list[str]:
    """Type `session.target` key by key; a completion request every `every` keys (and at the
    start); the prompts the engine received for them."""
    path = workspace / session.path
    uri = editor.open(path, session.document)
    prompts: list[str] = []
    try:
        for typed, char in enumerate(session.target):
            line, column = session.cursor_at(typed)
            if typed % every == 0:
                prompts += await _ask(editor, engine, uri, line, column)
            editor.insert(uri, typed + 2, line, column, char)
    finally:
        editor.close_document(uri)
    return prompts


async def _ask(
    editor: EditorSession, engine: FakeEngine, uri: str, line: int, column: int
) -> list[str]:
    seen = len(engine.requests)
    await editor.complete(uri, line, column, timeout_s=60.0)
    # The answer can come back before the engine's handler files the request: wait briefly.
    for _ in range(50):
        if len(engine.requests) > seen:
            break
        await asyncio.sleep(0.01)
    return [str(r.body.get("prompt", "")) for r in engine.requests[seen:] if r.body]
