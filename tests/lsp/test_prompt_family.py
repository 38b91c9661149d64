"""The prompt format follows the model the engine serves (no prompt settings given)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from lsprotocol import types

from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

QWEN_SPECIAL = {
    "<|fim_prefix|>",
    "<|fim_suffix|>",
    "<|fim_middle|>",
    "<|file_sep|>",
    "<|repo_name|>",
}
FUNCTION = "def area(width, height):\n    \n    return result\n\n\nprint(area(2, 3))\n"


def word_tokens(special: set[str]) -> Callable[[str], int]:
    """A tokenizer for the scripted engine: its special tokens whole, other text in pieces."""

    def count(text: str) -> int:
        if text in special:
            return 1
        return max(1, len(re.findall(r"\w+|[^\w\s]|\s+", text)))

    return count


def warnings(session: Session) -> list[str]:
    return [m.message for m in session.client.messages if m.type == types.MessageType.Warning]


async def test_a_qwen_coder_engine_gets_a_fim_prompt_with_the_code_after_the_cursor(
    session: Session,
) -> None:
    session.engine.models = ["qwen2.5-coder-32b"]
    session.engine.roots = {"qwen2.5-coder-32b": "/models/Qwen2.5-Coder-32B"}
    session.engine.tokenize = word_tokens(QWEN_SPECIAL)
    # The whitespace before the cursor is held back from the prompt: the model writes it.
    session.engine.default = Reply(chunks=["\n    result = width * height"])
    await session.initialize()
    uri = session.open(FUNCTION, uri="file:///work/geometry.py")
    items = await session.complete(uri, 1, 4)
    assert [item.insert_text for item in items] == ["result = width * height"]
    prompt = session.engine.requests[-1].body["prompt"]
    assert prompt.startswith("<|fim_prefix|>")
    prefix, rest = prompt.removeprefix("<|fim_prefix|>").split("<|fim_suffix|>")
    suffix, middle = rest.split("<|fim_middle|>")
    assert prefix == "def area(width, height):"  # the blank line's indentation is held back
    assert suffix.startswith("\n    return result\n")
    assert "print(area(2, 3))" in suffix
    assert middle == ""
    assert "<|fim_middle|>" in session.engine.requests[-1].body["stop"]
    assert session.engine.tokenized  # markers confirmed, budget counted by the engine
    stats = await session.stats()
    assert stats["prompt"]["family"] == "qwen2.5-coder"
    assert stats["prompt"]["origin"] == "served model"
    assert stats["prompt"]["servedModel"] == "qwen2.5-coder-32b"
    assert stats["prompt"]["tokenCounts"] == "engine /tokenize"
    assert warnings(session) == []


async def test_other_open_files_switch_qwen_to_the_repository_format(session: Session) -> None:
    session.engine.models = ["Qwen/Qwen2.5-Coder-7B"]
    session.engine.tokenize = word_tokens(QWEN_SPECIAL)
    session.engine.default = Reply(chunks=["return weight * rate"])
    await session.initialize()
    session.open(
        "def shipping_cost(weight, rate):\n    return weight * rate\n",
        uri="file:///work/util.py",
    )
    uri = session.open("def total(items):\n    \n", uri="file:///work/shop.py")
    await session.complete(uri, 1, 4)
    prompt = session.engine.requests[-1].body["prompt"]
    assert prompt.startswith("<|repo_name|>")
    assert "<|file_sep|>shop.py\n<|fim_prefix|>def total(items):<|fim_suffix|>" in prompt


async def test_other_open_files_go_in_starcoder2s_repository_format(session: Session) -> None:
    session.engine.models = ["bigcode/starcoder2-15b"]
    special = {"<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>", "<repo_name>"}
    session.engine.tokenize = word_tokens(special)
    session.engine.default = Reply(chunks=["return weight * rate"])
    await session.initialize()
    session.open(
        "def shipping_cost(weight, rate):\n    return weight * rate\n",
        uri="file:///work/util.py",
    )
    shop = "def total(items):\n    cost = shipping_cost(2, 3)\n    \n"
    uri = session.open(shop, uri="file:///work/shop.py")
    await session.complete(uri, 2, 4)
    prompt = session.engine.requests[-1].body["prompt"]
    assert prompt.startswith("<repo_name><file_sep>util.py\ndef shipping_cost(weight, rate):")
    assert "<file_sep>shop.py\n<fim_prefix>def total(items):\n    cost = " in prompt
    assert special <= set(session.engine.tokenized)  # each confirmed as one token
    assert (await session.stats())["prompt"]["family"] == "starcoder2"
    assert warnings(session) == []


async def test_smollm2_still_gets_prefix_only_prompts(session: Session) -> None:
    session.engine.models = ["smollm2-135m"]
    session.engine.default = Reply(chunks=["result = width * height"])
    await session.initialize()
    uri = session.open(FUNCTION)
    await session.complete(uri, 1, 4)
    prompt = session.engine.requests[-1].body["prompt"]
    assert prompt == "def area(width, height):"  # no suffix, no markers
    assert (await session.stats())["prompt"]["family"] == "smollm2"
    assert warnings(session) == []


async def test_an_unknown_model_gets_prefix_only_and_one_message(session: Session) -> None:
    session.engine.models = ["meta-llama/Llama-3.1-8B"]
    session.engine.default = Reply(chunks=["x"])
    await session.initialize()
    uri = session.open(FUNCTION)
    for _ in range(3):
        await session.complete(uri, 1, 4)
    assert "<|fim" not in session.engine.requests[-1].body["prompt"]
    found = warnings(session)
    assert len(found) == 1
    assert "Llama-3.1-8B" in found[0] and "prompt.family" in found[0]


async def test_an_explicit_family_wins_over_the_served_model(session: Session) -> None:
    session.engine.models = ["smollm2-135m"]
    session.engine.default = Reply(chunks=["x"])
    await session.initialize({"prompt": {"family": "qwen2.5-coder"}})
    uri = session.open(FUNCTION)
    await session.complete(uri, 1, 4)
    assert session.engine.requests[-1].body["prompt"].startswith("<|fim_prefix|>")
    stats = await session.stats()
    assert stats["prompt"]["origin"] == "prompt.family"
    found = warnings(session)
    assert len(found) == 1 and "looks like 'smollm2'" in found[0]
