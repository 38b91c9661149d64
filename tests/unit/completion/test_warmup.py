"""The warm-up at start pays what the first completion would (completion/warmup.py)."""

from __future__ import annotations

from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.warmup import WarmUp, warm_up
from copilot_lsp.context import languages, snippets
from copilot_lsp.engine.types import ServedModel
from copilot_lsp.errors import EngineUnavailable
from copilot_lsp.settings import PromptSettings
from tests.fakes.scripted import ScriptedEngine


async def test_the_prompt_format_the_count_and_every_grammar_are_ready_after_it() -> None:
    snippets.definition_query.cache_clear()
    formats = PromptFormats()
    record = await warm_up(formats, ScriptedEngine([]), PromptSettings(), WarmUp())
    assert record.done
    assert formats.current is not None  # the first keystroke finds the format chosen
    steps = set(record.steps_ms)
    assert {"engine_client", "prompt_format", "token_count"} <= steps
    assert {f"grammar_{name}" for name in languages.supported_languages()} <= steps
    assert snippets.definition_query.cache_info().currsize == len(languages.supported_languages())
    assert record.as_dict()["done"] is True


async def test_an_unreachable_engine_leaves_the_rest_warm_and_the_format_for_later() -> None:
    class Down(ScriptedEngine):
        async def served_model(self) -> ServedModel | None:
            raise EngineUnavailable("cannot reach the engine")

    formats = PromptFormats()
    record = await warm_up(formats, Down([]), PromptSettings(), WarmUp())
    assert record.done and "grammar_python" in record.steps_ms
    assert formats.current is None  # asked again by the first completion
