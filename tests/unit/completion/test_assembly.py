"""Prompt assembly under a token budget, with snippets and a stable window start."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.assembly import (
    ANCHOR,
    Limits,
    OtherDocument,
    PromptRequest,
    build_prompt,
)
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import load_template
from copilot_lsp.context import snippets
from copilot_lsp.context.definition_cache import DefinitionCache, definitions_incremental
from copilot_lsp.context.syntax import SyntaxTree
from copilot_lsp.positions import line_starts

BODY = "\n".join(f"        value_{i} = compute({i})" for i in range(200))
SOURCE = (
    f"import os\nfrom util import helper\n\n\nclass Big:\n    def run(self):\n{BODY}\n        \n"
)


def request(text: str, offset: int, **extra):  # type: ignore[no-untyped-def]
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    return PromptRequest(
        text=text,
        offset=offset,
        starts=line_starts(text),
        language_id="python",
        path="big.py",
        tree=syntax.tree(text),
        **extra,
    )


def limits(max_tokens: int = 400, **overrides):  # type: ignore[no-untyped-def]
    values = {
        "max_tokens": max_tokens,
        "prefix_lines": 1000,
        "suffix_lines": 20,
        "snippets": True,
        "snippet_deadline_ms": 1000.0,
    }
    values.update(overrides)
    return Limits(**values)


def test_prompt_stays_within_budget_and_ends_at_the_cursor() -> None:
    counter = TokenCounter()
    built = build_prompt(
        request(SOURCE, len(SOURCE) - 1), load_template("smollm2"), counter, limits(300)
    )
    assert built.tokens <= 300
    assert counter.count(built.prompt) <= 300 * 1.1  # per-line counts approximate the whole
    assert built.prompt.endswith("value_199 = compute(199)")  # trailing blanks held back
    assert built.held_back == "\n        "


def test_skeleton_brings_imports_and_enclosing_headers_above_the_window() -> None:
    built = build_prompt(
        request(SOURCE, len(SOURCE) - 1), load_template("smollm2"), TokenCounter(), limits(300)
    )
    assert built.first_line > 10
    assert built.prompt.startswith("import os\nfrom util import helper\n...\nclass Big:\n")
    assert "\nclass Big:\n    ...\n    def run(self):\n        ...\n        value_" in built.prompt


def test_window_start_snaps_to_anchor_lines_so_typing_keeps_the_prefix() -> None:
    template, counter = load_template("smollm2"), TokenCounter()
    starts = set()
    prompts = []
    for line in range(150, 150 + ANCHOR):
        lines = SOURCE.split("\n")
        offset = sum(len(x) + 1 for x in lines[:line]) + 4
        built = build_prompt(request(SOURCE, offset), template, counter, limits(300))
        starts.add(built.first_line)
        assert built.first_line % ANCHOR == 0
        prompts.append(built.prompt)
    assert len(starts) <= 2  # at most one move across eight lines of cursor travel


def test_no_tree_means_no_snippets_but_a_valid_window() -> None:
    text = SOURCE
    plain = PromptRequest(
        text=text, offset=len(text) - 1, starts=line_starts(text), language_id="cobol", path="x"
    )
    built = build_prompt(plain, load_template("smollm2"), TokenCounter(), limits(300))
    assert built.snippets == [] and built.skeleton_lines == 0
    assert not built.prompt.startswith("import os")


def test_definitions_from_other_documents_come_as_code_under_their_path() -> None:
    text = "def main():\n    result = helper(1, 2)\n    "
    other_text = (
        "def helper(a, b):\n    '''Add.'''\n    return a + b\n\n\ndef unused():\n    pass\n"
    )
    other_tree = SyntaxTree.for_language("python", other_text)
    assert other_tree is not None
    index = snippets.definitions(other_tree.tree(other_text), "python", 1e12)
    others = [OtherDocument("util.py", lambda: index)]
    built = build_prompt(
        request(text, len(text), others=others), load_template("smollm2"), TokenCounter(), limits()
    )
    # The embedded model has no repository format: each file's code under a commented path,
    # a header given a body so that it parses, then the current file's path.
    assert built.prompt.startswith("# util.py\ndef helper(a, b): ...\n\n# big.py\ndef main():")
    assert "unused" not in built.prompt
    commented = build_prompt(
        request(text, len(text), others=others),
        load_template("prefix-only"),
        TokenCounter(),
        limits(),
    )
    assert commented.prompt.startswith("# definition (util.py):\n# def helper(a, b):\n\n")


def test_fim_template_carries_the_suffix_and_repo_template_files() -> None:
    text = "def f(x):\n    \n\nprint(f(2))\n"
    offset = text.index("    \n") + 4
    fim = build_prompt(
        request(text, offset), load_template("qwen2.5-coder"), TokenCounter(), limits()
    )
    assert fim.prompt == "<|fim_prefix|>def f(x):<|fim_suffix|>\n\nprint(f(2))\n<|fim_middle|>"
    other_text = "def gather():\n    pass\n"
    tree = SyntaxTree.for_language("python", other_text)
    assert tree is not None
    index = snippets.definitions(tree.tree(other_text), "python", 1e12)
    text2 = "def f(x):\n    return gather()\n"
    # The cursor below the line that names gather (names on the cursor's own line, half
    # typed, do not choose snippets: assembly.py).
    repo = build_prompt(
        request(text2, len(text2), others=[OtherDocument("pkg/g.py", lambda: index)]),
        load_template("qwen2.5-coder-repo"),
        TokenCounter(),
        limits(repo="demo"),
    )
    assert repo.prompt.startswith("<|repo_name|>demo\n<|file_sep|>pkg/g.py\ndef gather():\n")
    assert "<|file_sep|>big.py\n<|fim_prefix|>def f(x):\n    return gather()" in repo.prompt


def test_starcoder2_puts_other_files_in_its_repository_format() -> None:
    other_text = "def gather():\n    pass\n"
    tree = SyntaxTree.for_language("python", other_text)
    assert tree is not None
    index = snippets.definitions(tree.tree(other_text), "python", 1e12)
    text = "def f(x):\n    return gather()\n"
    built = build_prompt(
        request(text, len(text), others=[OtherDocument("pkg/g.py", lambda: index)]),
        load_template("starcoder2"),
        TokenCounter(),
        limits(repo="demo"),
    )
    assert built.prompt == (
        "<repo_name>demo<file_sep>pkg/g.py\ndef gather():"
        "<file_sep>big.py\n<fim_prefix>def f(x):\n    return gather()<fim_suffix><fim_middle>"
    )
    assert built.head == (
        "<repo_name>demo<file_sep>pkg/g.py\ndef gather():<file_sep>big.py\n<fim_prefix>"
    )


def test_codestral_puts_the_suffix_first() -> None:
    text = "a = 1\nb = \nc = 3\n"
    offset = text.index("b = ") + 4
    built = build_prompt(
        request(text, offset), load_template("codestral"), TokenCounter(), limits()
    )
    assert built.prompt == "[SUFFIX]\nc = 3\n[PREFIX]a = 1\nb ="


@pytest.mark.parametrize("family", ["starcoder2", "deepseek-coder", "codellama"])
def test_every_family_renders_prefix_and_suffix_once(family: str) -> None:
    text = "x = 1\ny = \nz = 3\n"
    built = build_prompt(
        request(text, text.index("y = ") + 4), load_template(family), TokenCounter(), limits()
    )
    assert built.prompt.count("x = 1\ny =") == 1
    assert built.prompt.count("\nz = 3") == 1
    assert load_template(family).stop


def test_recent_chunks_are_added_unless_similar_to_the_window() -> None:
    from copilot_lsp.completion.assembly import RecentChunk

    text = "def main():\n    total = 0\n    "
    fresh = RecentChunk("other.py", "def shipping_cost(order):\n    return order.weight * 3")
    echo = RecentChunk("main.py", "def main():\n    total = 0", same_document=False)
    built = build_prompt(
        request(text, len(text), recent=[fresh, echo]),
        load_template("prefix-only"),
        TokenCounter(),
        limits(),
    )
    assert [s.text for s in built.snippets] == [fresh.text]
    assert "# recently edited (other.py):" in built.prompt


def test_own_definitions_come_from_outside_the_window_only() -> None:
    filler = "\n".join(f"value_{i} = {i}" for i in range(60))
    text = (
        "def far_helper(a):\n    return a\n\n\n"
        f"{filler}\n\n\n"
        "def near_helper(b):\n    return b\n\n\n"
        "def main():\n    far_helper(near_helper(1))\n    "
    )
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    index = snippets.definitions(syntax.tree(text), "python", 1e12)
    built = build_prompt(
        request(text, len(text), own_definitions=lambda: index),
        load_template("smollm2"),
        TokenCounter(),
        limits(prefix_lines=20),
    )
    assert [s.text for s in built.snippets if s.kind == "definition"] == ["def far_helper(a):"]
    assert "def near_helper(b):\n    return b" in built.prompt  # in the window, as code


def test_a_failing_snippet_source_costs_its_snippets_not_the_prompt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "def main():\n    result = helper(1, 2)\n    "
    other_text = "def helper(a, b):\n    return a + b\n"
    other_tree = SyntaxTree.for_language("python", other_text)
    assert other_tree is not None
    index = snippets.definitions(other_tree.tree(other_text), "python", 1e12)
    others = [OtherDocument("util.py", lambda: index)]

    def broken() -> snippets.Definitions:
        raise RuntimeError("def secret_code(): ...")

    kept = build_prompt(
        request(text, len(text), others=others),
        load_template("prefix-only"),
        TokenCounter(),
        limits(),
    )
    assert "# def helper(a, b):" in kept.prompt
    for _ in range(2):
        built = build_prompt(
            request(text, len(text), own_definitions=broken, others=others),
            load_template("prefix-only"),
            TokenCounter(),
            limits(),
        )
        assert built.prompt == kept.prompt.split("# def helper(a, b):\n\n", 1)[1]
        assert built.held_back == kept.held_back
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "definitions" in warned[0].getMessage()
    assert "secret_code" not in caplog.text  # the exception's text may quote user code


def test_own_definitions_from_the_incremental_index_match_those_from_a_plain_search() -> None:
    # A name defined in every class (`total`, `__init__`) or a few times around the window:
    # the first definition outside it is the one offered, whichever index the file has.
    units = [
        f"class Shape{i}:\n    def total(self):\n        return {i}\n\n\n"
        f"def helper_{i % 3}(a):\n    return Shape{i}().total() + a\n\n\n"
        for i in range(40)
    ]
    text = "".join(units) + "def main():\n    helper_1(total(helper_2(3)))\n    "
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    plain = snippets.definitions(syntax.tree(text), "python", 1e12)
    incremental = definitions_incremental(syntax.outline(text), "python", 1e12, DefinitionCache())
    offered = 0
    for prefix_lines in (4, 12, 40, 400):
        for cursor in (len(text), text.index("class Shape20"), text.index("helper_2(a)")):
            built = [
                build_prompt(
                    request(text, cursor, own_definitions=lambda index=index: index),
                    load_template("smollm2"),
                    TokenCounter(),
                    limits(prefix_lines=prefix_lines, suffix_lines=prefix_lines // 2),
                )
                for index in (plain, incremental)
            ]
            assert built[0].prompt == built[1].prompt
            assert built[0].snippets == built[1].snippets
            offered += len(built[0].snippets)
    assert offered > 10


@pytest.mark.parametrize(
    "family",
    ["smollm2", "prefix-only", "qwen2.5-coder", "qwen2.5-coder-repo", "starcoder2", "codellama"],
)
def test_the_head_is_the_prompt_up_to_the_current_files_code(family: str) -> None:
    """What a prefix warm-up sends is byte for byte where the prompt starts, and holds the
    code from other files but none of the current file's."""
    other_text = "def gather(items, limit=10):\n    pass\n"
    tree = SyntaxTree.for_language("python", other_text)
    assert tree is not None
    index = snippets.definitions(tree.tree(other_text), "python", 1e12)
    text = "def f(x):\n    return gather(x)\n    \n\nprint(f(2))\n"
    built = build_prompt(
        request(text, text.index("    \n") + 4, others=[OtherDocument("pkg/g.py", lambda: index)]),
        load_template(family),
        TokenCounter(),
        limits(repo="demo"),
    )
    assert built.prompt.startswith(built.head)
    assert "def gather(items, limit=10):" in built.head
    assert "def f(x)" not in built.head and "print(f(2))" not in built.head
