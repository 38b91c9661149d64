"""What the completion tests share: a pipeline over a scripted engine, and what it reported."""

from __future__ import annotations

from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline
from tests.fakes.scripted import ScriptedEngine


def service_for(
    engine: ScriptedEngine, settings: Settings | None = None
) -> tuple[CompletionService, list[Timeline], list[tuple[bool, str]]]:
    """A pipeline over `engine` with `settings` (the defaults when None), and the lists it
    fills: the timeline of every request, and every engine state change (healthy, message)."""
    timelines: list[Timeline] = []
    states: list[tuple[bool, str]] = []
    chosen = settings or Settings()
    service = CompletionService(
        engine,
        lambda: chosen,
        on_timeline=timelines.append,
        on_engine_state=lambda healthy, message: states.append((healthy, message)),
    )
    return service, timelines, states
