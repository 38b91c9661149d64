"""The prompt format in use: the configured family, else the one the served model fits.

With `prompt.family` unset the engine is asked once what it serves (`/v1/models`), the family
is picked by name (completion/families.py) and confirmed with the engine's own tokenizer
(the family's FIM markers, and the repository markers of a repository-level format, must be
single tokens). Token counts for the prompt budget come
from a tokenizer that matches the served model: a `tokenizer.json` on this machine when one
fits, else the engine's `/tokenize`. The answer is kept until the engine or the prompt
settings change; each message reaches the user once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_lsp.completion.budget import EngineTokenCounter, TokenCounter
from copilot_lsp.completion.families import (
    FALLBACK_FAMILY,
    base_family,
    detect_family,
    looks_instruct,
    markers_present,
)
from copilot_lsp.completion.templates import PromptTemplate, available_families, load_template
from copilot_lsp.engine.types import CompletionEngine, ServedModel
from copilot_lsp.errors import EngineError
from copilot_lsp.settings import PromptSettings

logger = logging.getLogger(__name__)

Notify = Callable[[str], None]
"""Hears a message for the user (shown once per distinct message)."""


@dataclass(frozen=True, slots=True)
class PromptFormat:
    template: PromptTemplate
    counter: TokenCounter
    origin: str
    """`prompt.family` (the setting), `served model` (detected), or `default`."""
    served: ServedModel | None = None
    repo_template: PromptTemplate | None = None
    """Used instead of `template` when the prompt carries code from other files."""

    def template_for(self, other_files: bool) -> PromptTemplate:
        if other_files and self.repo_template is not None:
            return self.repo_template
        return self.template

    def describe(self) -> dict[str, Any]:
        return {
            "family": self.template.name,
            "repoFamily": self.repo_template.name if self.repo_template else None,
            "origin": self.origin,
            "servedModel": self.served.id if self.served else None,
            "servedRoot": self.served.root if self.served else None,
            "tokenCounts": self.counter.source,
        }


class PromptFormats:
    """Chooses and keeps the prompt format for the engine in use."""

    def __init__(
        self,
        *,
        notify: Notify = lambda message: None,
        embedded_tokenizer: Callable[[], Path | None] = lambda: None,
        timeout_s: float = 3.0,
    ) -> None:
        self._notify = notify
        self._embedded_tokenizer = embedded_tokenizer
        self._timeout_s = timeout_s
        self._told: set[str] = set()
        self._engine: object | None = None
        self._key: tuple[Any, ...] | None = None
        self._pending: tuple[object, tuple[Any, ...], asyncio.Task[PromptFormat]] | None = None
        """The resolution under way, for the engine and settings key it is for."""
        self.current: PromptFormat | None = None

    async def resolve(self, settings: PromptSettings, engine: CompletionEngine) -> PromptFormat:
        """The format for `engine` under `settings`: kept from the last time while neither
        changed; otherwise asked once, however many requests ask meanwhile (the warm-up at
        start and the first keystroke share one resolution)."""
        key = (settings.family, settings.tokenizer)
        source = engine.model_source()
        if self.current is not None and self._engine is source and self._key == key:
            return self.current
        pending = self._pending
        if pending is None or pending[0] is not source or pending[1] != key:
            task = asyncio.ensure_future(self._resolve(settings, engine, source, key))
            pending = self._pending = (source, key, task)
            task.add_done_callback(lambda done: self._settled(done))
        # Shielded: a request cancelled while waiting must not cancel the others' answer.
        return await asyncio.shield(pending[2])

    def _settled(self, task: asyncio.Task[PromptFormat]) -> None:
        if self._pending is not None and self._pending[2] is task:
            self._pending = None
        if not task.cancelled():
            task.exception()  # retrieved: the waiters got it already

    async def _resolve(
        self,
        settings: PromptSettings,
        engine: CompletionEngine,
        source: object,
        key: tuple[Any, ...],
    ) -> PromptFormat:
        try:
            served = await asyncio.wait_for(engine.served_model(), self._timeout_s)
        except (EngineError, TimeoutError) as error:
            # Unreachable now: the completion itself reports that; ask again next time.
            logger.info("cannot ask the engine what it serves: %s", error)
            family = settings.family or FALLBACK_FAMILY
            return PromptFormat(load_template(family), _file_counter(settings.tokenizer), "default")
        chosen = await self._choose(settings, engine, served)
        previous = self.current.counter if self.current is not None else None
        if isinstance(previous, EngineTokenCounter) and previous is not chosen.counter:
            previous.close()
        self.current, self._engine, self._key = chosen, source, key
        logger.info("prompt format: %s", chosen.describe())
        return chosen

    async def _choose(
        self, settings: PromptSettings, engine: CompletionEngine, served: ServedModel | None
    ) -> PromptFormat:
        names = [served.id, served.root] if served is not None else []
        match = detect_family(names)
        if settings.family is not None:
            template = load_template(settings.family)
            if match is not None and base_family(match.family) != base_family(template.name):
                self._tell(
                    f"prompt.family is {template.name!r} but the engine serves {match.name!r}, "
                    f"which looks like {match.family!r}: completions may come out garbled. "
                    "Unset prompt.family to follow the served model."
                )
            counter = await self._counter(settings, template, served, engine)
            return PromptFormat(template, counter, "prompt.family", served)
        if served is None:
            template = load_template(FALLBACK_FAMILY)
            counter = await self._counter(settings, template, None, engine)
            return PromptFormat(template, counter, "default")
        if match is None:
            self._tell(
                f"the engine serves {_name(served)}, which matches no known prompt family: "
                "completions use the code before the cursor only. If the model is trained for "
                "fill-in-the-middle, set prompt.family to one of "
                f"{', '.join(f for f in available_families() if f != FALLBACK_FAMILY)} "
                "(settings file, COPILOT_LSP_PROMPT_FAMILY, or the editor's copilot-lsp "
                "settings)."
            )
            template = load_template(FALLBACK_FAMILY)
            counter = await self._counter(settings, template, served, engine)
            return PromptFormat(template, counter, "served model", served)
        template = load_template(match.family)
        if template.fim_markers:
            counts = await self._marker_counts(engine, template.fim_markers)
            if counts is not None and not markers_present(counts):
                lacking = [
                    marker for marker, n in counts.items() if not markers_present({marker: n})
                ]
                self._tell(
                    f"the engine serves {_name(served)}, named like {match.family!r}, but its "
                    f"tokenizer lacks the format's markers ({', '.join(lacking)}): completions "
                    "use the code before the cursor only. Set prompt.family to override."
                )
                template = load_template(FALLBACK_FAMILY)
        if template.fim_markers and looks_instruct(match.name):
            self._tell(
                f"the engine serves {_name(served)}, an instruction-tuned model: "
                "fill-in-the-middle is what the base model is trained for (serve e.g. "
                "Qwen/Qwen2.5-Coder-32B rather than its -Instruct variant)."
            )
        repo = await self._repo_variant(engine, served, template)
        counter = await self._counter(settings, template, served, engine)
        return PromptFormat(template, counter, "served model", served, repo)

    async def _repo_variant(
        self, engine: CompletionEngine, served: ServedModel, template: PromptTemplate
    ) -> PromptTemplate | None:
        """The family's repository-level variant, when the served model's tokenizer holds its
        markers too (Qwen2.5-Coder's `<|repo_name|>`, `<|file_sep|>`); else None: code from
        other files goes in as the base family's comments."""
        if template.repo_variant is None:
            return None
        repo = load_template(template.repo_variant)
        extra = [marker for marker in repo.fim_markers if marker not in template.fim_markers]
        counts = await self._marker_counts(engine, extra) if extra else None
        if counts is not None and not markers_present(counts):
            lacking = [m for m, n in counts.items() if not markers_present({m: n})]
            self._tell(
                f"the engine serves {_name(served)}, whose tokenizer lacks the repository "
                f"markers ({', '.join(lacking)}): code from other files goes in as comments."
            )
            return None
        return repo

    async def _marker_counts(
        self, engine: CompletionEngine, markers: list[str]
    ) -> dict[str, int] | None:
        """Each marker's token count by the engine's tokenizer; None if it cannot count."""
        try:
            counts = await asyncio.wait_for(
                asyncio.gather(*(engine.count_tokens(marker) for marker in markers)),
                self._timeout_s,
            )
        except (EngineError, TimeoutError) as error:
            logger.info("cannot confirm the FIM markers with the engine's tokenizer: %s", error)
            return None
        return dict(zip(markers, counts, strict=True))

    async def _counter(
        self,
        settings: PromptSettings,
        template: PromptTemplate,
        served: ServedModel | None,
        engine: CompletionEngine,
    ) -> TokenCounter:
        if settings.tokenizer is not None:
            return _file_counter(settings.tokenizer)
        local = _local_tokenizer(served)
        if local is None and template.tokenizer == "embedded":
            local = self._embedded_tokenizer()
        if local is not None:
            return _file_counter(local)
        if served is not None:
            try:
                await asyncio.wait_for(engine.count_tokens("def"), self._timeout_s)
            except (EngineError, TimeoutError) as error:
                logger.info("the engine cannot count tokens (%s): estimating them", error)
            else:
                return EngineTokenCounter(engine.count_tokens)
        return TokenCounter()

    def _tell(self, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            logger.warning("%s", message)
            self._notify(message)


def _name(served: ServedModel) -> str:
    if served.root and served.root != served.id:
        return f"{served.id!r} ({served.root})"
    return repr(served.id)


def _local_tokenizer(served: ServedModel | None) -> Path | None:
    """The served model's tokenizer.json, when the engine reads its weights from this machine."""
    if served is None or not served.root or "://" in served.root:
        return None
    candidate = Path(served.root).expanduser() / "tokenizer.json"
    try:
        return candidate if candidate.is_file() else None
    except OSError:
        return None


@functools.cache
def _file_counter(tokenizer: Path | None) -> TokenCounter:
    return TokenCounter(tokenizer)
