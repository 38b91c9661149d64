"""Model-family templates from configs/models and the token counter."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import Snippet, available_families, load_template
from copilot_lsp.errors import ConfigError


def test_all_families_ship() -> None:
    assert {
        "smollm2",
        "qwen2.5-coder",
        "qwen2.5-coder-repo",
        "starcoder2",
        "deepseek-coder",
        "codellama",
        "codestral",
    } <= set(available_families())


def test_unknown_family_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"known: .*qwen2\.5-coder"):
        load_template("gpt-17")


def test_placeholders_in_code_are_not_substituted() -> None:
    template = load_template("qwen2.5-coder")
    prompt = template.render(
        prefix="s = '{suffix}'",
        suffix="t = '{prefix}'",
        snippets=[],
        path="a",
        repo="",
        language_id="python",
    )
    assert prompt == "<|fim_prefix|>s = '{suffix}'<|fim_suffix|>t = '{prefix}'<|fim_middle|>"


def test_comment_snippets_use_the_language_comment_leader() -> None:
    template = load_template("prefix-only")
    snippet = Snippet(path="a.ts", text="function f(): number", kind="definition")
    rendered = template.render_snippets([snippet], "typescript")
    assert rendered == "// definition (a.ts):\n// function f(): number\n\n"


def test_header_snippets_are_code_under_commented_paths() -> None:
    """The embedded model's style: other files' code as code, each under its commented path,
    then the current file's path; a header cut inside brackets stays a comment."""
    template = load_template("smollm2")
    assert template.snippet_style == "headers"
    code = Snippet(path="a.ts", text="function f(): number", kind="definition")
    cut = Snippet(path="b.ts", text="export const table = build(", kind="definition")
    rendered = template.render_snippets([code, cut], "typescript", "main.ts")
    assert rendered == (
        "// a.ts\nfunction f(): number\n\n"
        "// definition (b.ts):\n// export const table = build(\n\n// main.ts\n"
    )
    stub = Snippet(path="m.py", text="class A:\n    def f(self):\ndef g(x):", kind="definition")
    assert template.render_snippets([stub], "python", "app.py") == (
        "# m.py\nclass A:\n    def f(self): ...\ndef g(x): ...\n\n# app.py\n"
    )


def test_character_estimate_without_a_tokenizer() -> None:
    counter = TokenCounter()
    assert not counter.exact
    assert counter.count("x" * 32) == 10
    assert counter.count("") == 0


def test_broken_tokenizer_file_falls_back_to_characters(tmp_path: Path) -> None:
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json")
    counter = TokenCounter(broken)
    assert not counter.exact and counter.source == "characters"


def test_line_counts_are_memoised() -> None:
    counter = TokenCounter(cache_size=2)
    assert counter.count_line("abc") == counter.count("abc\n")
    counter.count_line("d")
    counter.count_line("e")
    assert len(counter._cache) == 2


def test_the_prompt_budget_is_the_setting_else_the_familys_else_1024() -> None:
    smollm2, qwen = load_template("smollm2"), load_template("qwen2.5-coder")
    # The embedded model on a 2-core CPU: half the budget (docs/benchmarks/replay/README.md).
    assert smollm2.budget(None) == 512
    assert qwen.budget(None) == 1024
    assert smollm2.budget(2048) == 2048 and qwen.budget(700) == 700


async def test_the_pipeline_builds_the_embedded_models_prompt_within_its_budget() -> None:
    from copilot_lsp.completion.pipeline import CompletionService
    from copilot_lsp.settings import Settings
    from tests.fakes.scripted import ScriptedEngine

    engine = ScriptedEngine(["\n"])
    text = "".join(f"value_{i} = compute_something({i}, 'a string of words')\n" for i in range(400))
    sizes = {}
    for configured in (None, 2048):
        settings = Settings.model_validate(
            {
                "prompt": {"family": "smollm2", "max_tokens": configured},
                "completion": {"prefix_lines": 2000},  # the budget, not the window, binds
            }
        )

        def current(chosen: Settings = settings) -> Settings:
            return chosen

        service = CompletionService(engine, current)
        await service.complete("file:///a.py", "python", text, len(text), automatic=False)
        sizes[configured] = TokenCounter(None).count(engine.requests[-1].prompt)
    # The window gets what the budget leaves after its reserves (completion/assembly.py), so
    # 512 gives far less than a quarter of what 2048 does.
    assert sizes[None] <= 512 and sizes[2048] <= 2048
    assert 5 * sizes[None] < sizes[2048], sizes
