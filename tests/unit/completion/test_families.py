"""Which prompt family fits a served model, and the format chosen from the engine's answers."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from copilot_lsp.completion.budget import EngineTokenCounter, TokenCounter
from copilot_lsp.completion.families import (
    FALLBACK_FAMILY,
    base_family,
    detect_family,
    looks_instruct,
    markers_present,
)
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.engine.types import CompletionRequest, ServedModel, StreamChunk
from copilot_lsp.errors import ConfigError, EngineUnavailable
from copilot_lsp.settings import PromptSettings


@pytest.mark.parametrize(
    ("served_id", "root", "family"),
    [
        ("qwen2.5-coder-32b", "/models/Qwen2.5-Coder-32B", "qwen2.5-coder"),
        ("Qwen/Qwen2.5-Coder-32B", None, "qwen2.5-coder"),
        ("completions", "Qwen/Qwen2.5-Coder-7B", "qwen2.5-coder"),
        ("qwen2_5_coder_1_5b", None, "qwen2.5-coder"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", None, "qwen2.5-coder"),
        ("bigcode/starcoder2-15b", None, "starcoder2"),
        ("sc2", "/srv/models/starcoder2-3b", "starcoder2"),
        ("deepseek-ai/deepseek-coder-6.7b-base", None, "deepseek-coder"),
        ("DeepSeek-Coder-V2-Lite-Base", None, "deepseek-coder"),
        ("codellama/CodeLlama-13b-hf", None, "codellama"),
        ("code-llama-7b", None, "codellama"),
        ("mistralai/Codestral-22B-v0.1", None, "codestral"),
        ("smollm2-135m", "/root/.cache/copilot-lsp/models/smollm2-135m-instruct", "smollm2"),
        ("HuggingFaceTB/SmolLM2-360M", None, "smollm2"),
    ],
)
def test_each_family_is_detected_from_the_served_names(
    served_id: str, root: str | None, family: str
) -> None:
    match = detect_family([served_id, root])
    assert match is not None
    assert match.family == family
    assert match.name in (served_id, root)


@pytest.mark.parametrize(
    "names",
    [
        ["meta-llama/Llama-3.1-8B"],
        ["fake-model"],
        ["gpt2", "/models/gpt2"],
        ["qwen2.5-7b-instruct"],  # a Qwen chat model, not the coder: no FIM training
        [],
        [None, ""],
    ],
)
def test_models_no_family_fits_are_not_guessed(names: list[str | None]) -> None:
    assert detect_family(names) is None


def test_variants_belong_to_their_family() -> None:
    assert base_family("qwen2.5-coder-repo") == "qwen2.5-coder"
    assert base_family("qwen2.5-coder") == "qwen2.5-coder"
    assert base_family("starcoder2") == "starcoder2"


def test_instruct_checkpoints_are_recognised() -> None:
    assert looks_instruct("Qwen/Qwen2.5-Coder-32B-Instruct")
    assert looks_instruct("deepseek-coder-6.7b-chat")
    assert not looks_instruct("Qwen/Qwen2.5-Coder-32B")
    assert not looks_instruct("bigcode/starcoder2-15b")


def test_a_marker_split_into_pieces_is_not_in_the_vocabulary() -> None:
    assert markers_present({"<|fim_prefix|>": 1, "<|fim_suffix|>": 1})
    assert markers_present({"<PRE>": 2})  # a SentencePiece word-start piece may lead
    assert not markers_present({"<|fim_prefix|>": 1, "<|fim_middle|>": 7})


class Engine:
    """An engine that names its model and counts tokens like a tokenizer with `special`."""

    samples_exactly = True

    def __init__(
        self,
        served: ServedModel,
        special: frozenset[str] = frozenset(),
        tokenize: bool = True,
    ) -> None:
        self.served = served
        self.special = special
        self.tokenize = tokenize
        self.asked = 0
        self.counted: list[str] = []
        self.base_url = "http://engine/v1"

    async def served_model(self) -> ServedModel:
        self.asked += 1
        return self.served

    def model_source(self) -> object:
        return self

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        raise AssertionError("choosing a prompt format requests no completion")

    async def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        if not self.tokenize:
            raise EngineUnavailable("no /tokenize here")
        # Text that is not a special token comes apart at its punctuation: `<file_sep>` is
        # `<`, `file_sep`, `>` to a tokenizer without it.
        return 1 if text in self.special else max(1, len(re.findall(r"\w+|[^\w\s]", text)))


QWEN_FIM = frozenset({"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"})
QWEN_MARKERS = QWEN_FIM | {"<|file_sep|>", "<|repo_name|>"}
"""Qwen2.5-Coder's special tokens the formats use: fill-in-the-middle and repository."""
STARCODER2_MARKERS = frozenset(
    {"<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>", "<repo_name>"}
)


def formats(messages: list[str], embedded: Path | None = None) -> PromptFormats:
    return PromptFormats(notify=messages.append, embedded_tokenizer=lambda: embedded)


async def test_a_qwen_coder_engine_gets_the_qwen_fim_format_confirmed_by_its_tokenizer() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("qwen2.5-coder-32b", "/models/Qwen2.5-Coder-32B"), QWEN_MARKERS)
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == "qwen2.5-coder"
    assert chosen.origin == "served model"
    assert chosen.template_for(other_files=True).name == "qwen2.5-coder-repo"
    assert chosen.template_for(other_files=False).name == "qwen2.5-coder"
    assert set(engine.counted) >= QWEN_MARKERS
    # No tokenizer.json on this machine for a remote model: counts come from the engine.
    assert isinstance(chosen.counter, EngineTokenCounter)
    assert chosen.describe()["tokenCounts"] == "engine /tokenize"
    assert messages == []


async def test_a_name_without_the_markers_in_the_tokenizer_falls_back_to_prefix_only() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("my-qwen2.5-coder-finetune"), special=frozenset())
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == FALLBACK_FAMILY
    assert len(messages) == 1
    assert "lacks the format's markers" in messages[0] and "<|fim_middle|>" in messages[0]


async def test_an_engine_without_tokenize_trusts_the_name() -> None:
    engine = Engine(ServedModel("bigcode/starcoder2-7b"), tokenize=False)
    chosen = await formats([]).resolve(PromptSettings(), engine)
    assert chosen.template.name == "starcoder2"
    assert type(chosen.counter) is TokenCounter and not chosen.counter.exact


async def test_an_unknown_model_gets_prefix_only_and_one_message_naming_the_setting() -> None:
    messages: list[str] = []
    chooser = formats(messages)
    engine = Engine(ServedModel("meta-llama/Llama-3.1-8B"))
    chosen = await chooser.resolve(PromptSettings(), engine)
    assert chosen.template.name == FALLBACK_FAMILY
    assert not chosen.template.uses_suffix
    await chooser.resolve(PromptSettings(), engine)
    await chooser.resolve(PromptSettings(max_tokens=512), engine)
    assert len(messages) == 1
    assert "prompt.family" in messages[0] and "qwen2.5-coder" in messages[0]
    assert engine.asked == 1  # kept until the engine or the prompt family changes


async def test_an_explicit_family_wins_and_a_contradiction_warns_once() -> None:
    messages: list[str] = []
    chooser = formats(messages)
    engine = Engine(ServedModel("qwen2.5-coder-32b"), QWEN_MARKERS)
    chosen = await chooser.resolve(PromptSettings(family="starcoder2"), engine)
    assert chosen.template.name == "starcoder2"
    assert chosen.origin == "prompt.family"
    assert chosen.repo_template is None  # an explicit family is used exactly as named
    assert len(messages) == 1 and "looks like 'qwen2.5-coder'" in messages[0]
    again = await formats(messages).resolve(PromptSettings(family="qwen2.5-coder-repo"), engine)
    assert again.template.name == "qwen2.5-coder-repo"
    assert len(messages) == 1  # a variant of the served model's family is no contradiction


async def test_an_unknown_family_setting_is_a_config_error_naming_the_known_ones() -> None:
    engine = Engine(ServedModel("qwen2.5-coder-32b"), QWEN_MARKERS)
    with pytest.raises(ConfigError, match=r"known: .*qwen2\.5-coder"):
        await formats([]).resolve(PromptSettings(family="gpt-17"), engine)


async def test_an_instruct_model_is_served_fim_but_told_the_base_model_fits_better() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("Qwen/Qwen2.5-Coder-32B-Instruct"), QWEN_MARKERS)
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == "qwen2.5-coder"
    assert len(messages) == 1 and "instruction-tuned" in messages[0]


async def test_a_local_tokenizer_of_the_served_model_is_used_when_present(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "def": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    engine = Engine(ServedModel("smollm2-135m", str(tmp_path)))
    chosen = await formats([]).resolve(PromptSettings(), engine)
    assert chosen.template.name == "smollm2"
    assert chosen.counter.exact and chosen.counter.source == str(tmp_path / "tokenizer.json")


async def test_an_unreachable_engine_is_asked_again_next_time() -> None:
    class Down(Engine):
        async def served_model(self) -> ServedModel:
            self.asked += 1
            raise EngineUnavailable("refused")

    engine = Down(ServedModel("x"))
    chooser = formats([])
    first = await chooser.resolve(PromptSettings(), engine)
    assert first.origin == "default" and first.template.name == FALLBACK_FAMILY
    await chooser.resolve(PromptSettings(), engine)
    assert engine.asked == 2


async def test_engine_counts_are_estimates_until_prefetched_then_exact() -> None:
    asked: list[str] = []

    async def count(text: str) -> int:
        asked.append(text)
        return 42

    counter = EngineTokenCounter(count)
    line = "total = sum(values)  # a line long enough to estimate"
    assert counter.count_line(line) != 42
    await counter.prefetch_lines([line, line], deadline_s=1.0)
    assert counter.count_line(line) == 42
    await counter.prefetch_lines([line], deadline_s=1.0)
    assert asked == [line + "\n"]  # asked once, remembered after


async def test_engine_counts_that_fail_stop_being_asked() -> None:
    calls = 0

    async def count(text: str) -> int:
        nonlocal calls
        calls += 1
        raise EngineUnavailable("gone")

    counter = EngineTokenCounter(count, concurrency=1)
    await counter.prefetch_lines([f"line {i}" for i in range(10)], deadline_s=1.0)
    assert not counter.usable
    assert calls == 3
    assert counter.count_line("line 1") == round(len("line 1\n") / 3.2)


async def test_requests_that_ask_at_once_share_one_resolution() -> None:
    """The warm-up at start and the first keystroke ask together: the engine is asked once,
    and a waiter that is cancelled does not cancel the others' answer."""
    engine = Engine(ServedModel("qwen2.5-coder-32b", "/models/Qwen2.5-Coder-32B"), QWEN_MARKERS)
    chooser = formats([])
    first = asyncio.ensure_future(chooser.resolve(PromptSettings(), engine))
    cancelled = asyncio.ensure_future(chooser.resolve(PromptSettings(), engine))
    second = asyncio.ensure_future(chooser.resolve(PromptSettings(), engine))
    await asyncio.sleep(0)
    cancelled.cancel()
    chosen = await first
    assert await second is chosen
    assert engine.asked == 1
    assert await chooser.resolve(PromptSettings(), engine) is chosen  # kept afterwards
    assert engine.asked == 1


async def test_qwen_without_the_repository_tokens_keeps_its_fim_format_for_other_files() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("qwen2.5-coder-7b"), QWEN_FIM)
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == "qwen2.5-coder"
    assert chosen.repo_template is None
    assert chosen.template_for(other_files=True).name == "qwen2.5-coder"
    assert {"<|file_sep|>", "<|repo_name|>"} <= set(engine.counted)
    assert len(messages) == 1 and "<|repo_name|>" in messages[0] and "<|file_sep|>" in messages[0]


async def test_starcoder2_gets_its_repository_format_confirmed_by_its_tokenizer() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("bigcode/starcoder2-15b"), STARCODER2_MARKERS)
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == "starcoder2"
    assert set(engine.counted) >= STARCODER2_MARKERS  # <repo_name> and <file_sep> too
    assert messages == []
    for marker in ("<repo_name>", "<file_sep>"):
        assert marker in chosen.template.template and marker in chosen.template.stop


async def test_starcoder2_without_the_repo_name_token_falls_back_to_prefix_only() -> None:
    messages: list[str] = []
    engine = Engine(ServedModel("bigcode/starcoder2-3b"), STARCODER2_MARKERS - {"<repo_name>"})
    chosen = await formats(messages).resolve(PromptSettings(), engine)
    assert chosen.template.name == FALLBACK_FAMILY
    assert len(messages) == 1 and "<repo_name>" in messages[0]
