"""What the first completion would otherwise pay, paid at start-up instead.

The server warms up once the editor has said `initialized` (the handshake is answered by
then): the engine's HTTP client (its TLS context), the served model's prompt format and
tokenizer (loading a `tokenizer.json` takes 0.3-0.6 s here and holds the interpreter), one
token count (a `/tokenize` round trip when the engine counts), and every grammar's queries.
A keystroke that comes meanwhile waits for the same work instead of doing it twice
(`PromptFormats.resolve` is shared), and the event loop gets a turn between the steps, so
the editor's notifications are read while it runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from copilot_lsp.completion.budget import EngineTokenCounter
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.context import languages, snippets
from copilot_lsp.engine.types import CompletionEngine
from copilot_lsp.errors import CopilotLspError
from copilot_lsp.settings import PromptSettings

logger = logging.getLogger(__name__)

PROBE_LINE = "def warm_up(self) -> None:"
"""A line to count: it loads the tokenizer's caches, or opens the `/tokenize` connection."""


@dataclass(slots=True)
class WarmUp:
    """How the warm-up went: milliseconds per step, done or not."""

    steps_ms: dict[str, float] = field(default_factory=dict)
    done: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"done": self.done, "ms": dict(self.steps_ms)}


async def warm_up(
    formats: PromptFormats,
    engine: CompletionEngine,
    settings: PromptSettings,
    record: WarmUp,
    *,
    prepare_engine: bool = True,
) -> WarmUp:
    """Warm what the first completion needs; a failure (the engine down) is left for the
    first completion to report. `prepare_engine` builds the engine's client first."""
    clock = time.perf_counter

    async def step(name: str, started: float) -> None:
        record.steps_ms[name] = round((clock() - started) * 1000.0, 1)
        await asyncio.sleep(0)  # let the editor's messages in between the steps

    if prepare_engine:
        started = clock()
        _ = engine.base_url  # builds the client (and its TLS context) for the settings
        await step("engine_client", started)
    started = clock()
    try:
        chosen = await formats.resolve(settings, engine)
    except CopilotLspError as error:
        logger.info("warm-up: no prompt format yet (%s)", error)
    else:
        await step("prompt_format", started)
        started = clock()
        counter = chosen.counter
        if isinstance(counter, EngineTokenCounter):
            await counter.prefetch_lines([PROBE_LINE], deadline_s=2.0)
        else:
            counter.count_line(PROBE_LINE)
        await step("token_count", started)
    for language in languages.supported_languages():
        started = clock()
        snippets.prepare(language)
        await step(f"grammar_{language}", started)
    record.done = True
    return record
