"""The engine next edits go to: the main one, or a second one trained for them.

With `nextEditSuggestions.engine.url` unset, next edits share the completion engine, its
prompt formats and its in-flight cap, as they always did. With it set, they go to a second
engine built the way the main one is (engine/provider.py, engine/router.py: the main engine's
timeouts and TLS settings, one endpoint). The next-edit format follows the model THAT engine
serves (`/v1/models`; a Sweep next-edit model picks `qwen-repo`), asked once per engine and not
through the completion prompt formats, whose messages are about completions. It has its own
in-flight cap and its own backoff: a next-edit engine that is down or slow makes next edits
quiet and never holds up, pauses or fails over inline completions. Its failure is told once
per outage (a message for the user and a warning in the log), its recovery in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from copilot_lsp.completion.admission import Backoff, InflightLimiter
from copilot_lsp.completion.prompt_format import Notify, PromptFormats
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.engine.types import CompletionEngine, ServedModel
from copilot_lsp.errors import EngineError, EngineUnavailable
from copilot_lsp.settings import EngineSettings, Settings

logger = logging.getLogger(__name__)

MODEL_TIMEOUT_S = 3.0
"""How long the second engine may take to say what it serves (as for the main engine)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where one next-edit request goes, and what goes with that engine."""

    engine: CompletionEngine
    stop: tuple[str, ...]
    """Stop sequences on top of the format's: the main engine's `prompt.stop`, none for a
    second engine (they are meant for the main engine's model)."""
    slots: InflightLimiter
    dedicated: str | None = None
    """The second engine's URL; None: the main engine."""


def dedicated_options(settings: Settings) -> EngineSettings | None:
    """The engine settings of the next-edit engine, None when next edits use the main one.

    The main engine's settings with the URL, key and model replaced: its timeouts, backoff
    cap and TLS choices hold for both. No pool, no replica metrics, no fallback: the
    endpoint pool and failover are the completion engine's. Its speculation is not judged
    (`none`): with no fallback to fail over to, a verdict would change nothing.
    """
    options = settings.next_edit_suggestions.engine
    if not options.url:
        return None
    return settings.engine.model_copy(
        update={
            "url": options.url,
            "api_key": options.api_key,
            "model": options.model,
            "endpoints": [],
            "replica_metrics": [],
            "fallback_url": None,
            "speculative_method": "none",
        }
    )


class NextEditEngines:
    def __init__(
        self,
        main: CompletionEngine,
        formats: PromptFormats,
        slots: InflightLimiter,
        *,
        notify: Notify = lambda message: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._main = main
        self._main_formats = formats
        self._main_slots = slots
        self._notify = notify
        self._provider: EngineProvider | None = None
        self._served: tuple[object, ServedModel | None] | None = None
        """What the second engine serves, for the router it was asked through."""
        self._slots = InflightLimiter()
        self.backoff = Backoff(clock)
        """The second engine's failures in a row, and how long it is left alone."""
        self._down: str | None = None
        """The second engine's URL while it is failing (told once per outage)."""
        self._closing: set[asyncio.Task[None]] = set()

    def target(self, settings: Settings) -> Target:
        """The engine this request goes to under `settings`."""
        options = dedicated_options(settings)
        if options is None:
            self._drop_provider()
            return Target(self._main, tuple(settings.prompt.stop), self._main_slots)
        if self._provider is None:
            self._provider = EngineProvider(options)
        else:
            self._provider.configure(options)  # rebuilt only when the settings changed
        return Target(self._provider, (), self._slots, options.url)

    def _drop_provider(self) -> None:
        """The second engine was unset: close its connections and its /metrics polling."""
        provider, self._provider, self._served, self._down = self._provider, None, None, None
        self.backoff.succeeded()
        router = provider.built if provider is not None else None
        if router is None:
            return
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to close
            task = asyncio.get_running_loop().create_task(router.aclose())
            self._closing.add(task)  # keep a reference until it is done
            task.add_done_callback(self._closing.discard)

    async def model(self, target: Target, settings: Settings) -> tuple[list[str], str | None]:
        """The served model's names (id and root) and the completion prompt family, for the
        next-edit format to follow (nextedit/prompt.py `choose_format`). The second engine is
        asked what it serves once per router (a settings change rebuilds it); EngineError
        when it cannot say."""
        if target.dedicated is None:
            chosen = await self._main_formats.resolve(settings.prompt, self._main)
            served = chosen.served
            names = [served.id, served.root] if served is not None else []
            return [name for name in names if name], chosen.template.name
        source = target.engine.model_source()
        if self._served is None or self._served[0] is not source:
            try:
                served = await asyncio.wait_for(target.engine.served_model(), MODEL_TIMEOUT_S)
            except (EngineError, TimeoutError) as error:
                # Not guessed: a prompt in another format would get a dedicated model's
                # garbage back. The request fails like an engine failure (quiet, told once).
                raise EngineUnavailable(f"cannot say what it serves: {error!r}") from error
            self._served = (source, served)
            logger.info("next edits: the next-edit engine serves %s", served)
        served = self._served[1]
        if served is None:
            return [], None
        return [name for name in (served.id, served.root) if name], None

    def describe(self, settings: Settings) -> dict[str, object]:
        """For `copilot/stats`: the second engine's URL (None: next edits use the main one)
        and its failures in a row."""
        options = dedicated_options(settings)
        return {
            "url": options.url if options is not None else None,
            "failures_in_a_row": self.backoff.failures if options is not None else 0,
        }

    def paused(self, target: Target) -> float:
        """Seconds the second engine is still left alone after failures (0: ask it)."""
        return self.backoff.wait_s(automatic=True) if target.dedicated else 0.0

    def failed(self, target: Target, error: EngineError, cap_s: float) -> None:
        """A request to `target` failed: a second engine is left alone for a while, and its
        outage told once (the main engine's failures are the completions' to report)."""
        if target.dedicated is None:
            return
        if cap_s > 0:
            self.backoff.failed(cap_s, error.retry_after_s)
        if self._down == target.dedicated:
            return
        self._down = target.dedicated
        message = (
            f"next edits are quiet: the next-edit engine at {target.dedicated} failed ({error}). "
            "Inline completions are not affected. Check that engine, or unset "
            "nextEditSuggestions.engine.url to send next edits to the main engine."
        )
        logger.warning("%s", message)
        self._notify(message)

    def answered(self, target: Target) -> None:
        """A request to `target` got its answer: a second engine that was failing is back."""
        if target.dedicated is None:
            return
        self.backoff.succeeded()
        if self._down is not None:
            logger.warning("next edits: the next-edit engine at %s answers again", self._down)
            self._down = None
