"""Next-edit prompt formats: chosen by the served model, rendered per format."""

from __future__ import annotations

import pytest

from copilot_lsp.errors import ConfigError
from copilot_lsp.nextedit.history import EditHistory
from copilot_lsp.nextedit.prompt import PromptParts, available_formats, choose_format, load_format
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import line_starts

TEXT = "def f(a):\n    return a\n\nprint(f(1))\n"


def parts(language: str = "python", **kwargs: str) -> PromptParts:
    starts = line_starts(TEXT)
    window = window_at(TEXT, starts, starts[1] + 4, 1, 1)
    return PromptParts(
        path="src/m.py",
        language_id=language,
        window=window,
        original="def f(a):\n    return a\n",
        history=kwargs.get("history", ""),
        file=TEXT,
        before=kwargs.get("before", ""),
        after=kwargs.get("after", ""),
    )


def test_the_four_formats_ship() -> None:
    assert available_formats() == ["fenced", "plain", "qwen-repo", "zeta"]


@pytest.mark.parametrize(
    ("names", "family", "expected"),
    [
        (["sweepai/sweep-next-edit-1.5B"], None, "qwen-repo"),
        (["coder", "Qwen/Qwen2.5-Coder-7B"], "qwen2.5-coder", "qwen-repo"),
        (["zed-industries/zeta"], "qwen2.5-coder", "zeta"),
        (["my-model"], "qwen2.5-coder-repo", "qwen-repo"),
        (["HuggingFaceTB/SmolLM2-135M"], "smollm2", "fenced"),
        (["smollm2-135m", "/models/smollm2-135m-instruct-bfloat16"], None, "fenced"),
        (["my-model"], "prefix-only", "plain"),
        (["unknown"], None, "plain"),
    ],
)
def test_format_follows_the_served_model(
    names: list[str], family: str | None, expected: str
) -> None:
    assert choose_format(None, names, family).name == expected


def test_the_setting_overrides_and_an_unknown_name_says_which_exist() -> None:
    assert choose_format("zeta", ["Qwen/Qwen2.5-Coder-7B"], "qwen2.5-coder").name == "zeta"
    with pytest.raises(ConfigError, match="known: fenced, plain, qwen-repo, zeta"):
        load_format("nope")


def test_qwen_repo_prompt_has_file_history_original_current_and_an_open_updated_block() -> None:
    form = load_format("qwen-repo")
    prompt = form.render(parts(history="<|file_sep|>src/m.py.diff\noriginal:\nx\nupdated:\ny\n"))
    assert prompt.startswith("<|file_sep|>src/m.py\ndef f(a):")
    assert "<|file_sep|>original/src/m.py:1:3\ndef f(a):\n    return a\n\n" in prompt
    assert "<|file_sep|>current/src/m.py:1:3\ndef f(a):\n    <|cursor|>return a\n" in prompt
    assert prompt.endswith("<|file_sep|>updated/src/m.py:1:3\n")
    assert prompt.index(".diff\noriginal:") < prompt.index("<|file_sep|>original/")
    assert "<|file_sep|>" in form.stops("python")


def test_zeta_prompt_marks_the_editable_region_and_prefills_the_answer() -> None:
    form = load_format("zeta")
    prompt = form.render(parts(before="# top", after="# bottom"))
    assert "### User Excerpt:\n\n```src/m.py\n# top\n<|editable_region_start|>\n" in prompt
    assert "    <|user_cursor_is_here|>return a\n\n<|editable_region_end|>\n# bottom\n```" in prompt
    assert prompt.endswith("### Response:\n```src/m.py\n# top\n<|editable_region_start|>\n")
    assert form.stops("python")[0] == "<|editable_region_end|>"
    echoed = "<|editable_region_start|>\ndef f(a):\n    <|user_cursor_is_here|>return a\n"
    assert form.answer(echoed) == "def f(a):\n    return a"


def test_plain_prompt_is_comment_headers_in_the_language_and_history_commented() -> None:
    form = load_format("plain")
    history = EditHistory()
    history.record("file:///m.lua", "m.lua", ("x = 1\n", [0, 6]), ("x = 2\n", [0, 6]))
    (step,) = history
    rendered = form.event_text(step, "lua")
    assert rendered.split("\n")[:3] == ["-- --- a/m.lua", "-- +++ b/m.lua", "-- @@ -1 +1 @@"]
    prompt = form.render(parts("lua", history=rendered))
    assert prompt.startswith("-- src/m.py\n-- Recent edits:\n-- --- a/m.lua\n")
    assert "-- Lines 1-3, before the next edit:\ndef f(a):\n    return a\n\n-- end\n" in prompt
    assert prompt.endswith("-- Lines 1-3, after the next edit:\n")
    assert form.stops("lua")[0] == "-- end"
    assert form.stops("python")[0] == "# end"


def test_fenced_prompt_ends_in_an_open_block_started_with_the_windows_first_line() -> None:
    form = load_format("fenced")
    piece = parts()
    assert form.prefill(piece.window) == "def f(a):"
    prompt = form.render(piece)
    assert "# Lines 1-3, before the next edit:\n```\ndef f(a):\n    return a\n\n```\n" in prompt
    # The first line without its break: the model writes the break (with the blank lines
    # after it, one token) as the window's own text has it.
    assert prompt.endswith("# Lines 1-3, after the next edit:\n```\ndef f(a):")
    assert form.stops("python")[0] == "```"
    # Formats without it give no start, and their prompt ends with the header.
    plain = load_format("plain")
    assert plain.prefill(piece.window) == ""
    assert plain.render(piece).endswith("after the next edit:\n")


def test_code_holding_a_placeholder_stays_as_it_is() -> None:
    form = load_format("qwen-repo")
    rendered = form.render(
        PromptParts("a.py", "python", parts().window, "s = '{path}'", "", file="")
    )
    assert "s = '{path}'" in rendered


@pytest.mark.parametrize("name", ["plain", "qwen-repo", "zeta"])
@pytest.mark.parametrize(
    "answer",
    [
        "x = 1\r\ny = 2\r\n",
        "a<|cursor|>b<|user_cursor_is_here|>c\n\n",
        "junk<|editable_region_start|>\nkept<|editable_region_start|>\nlast\n",
        "\r\r\n<|cursor|><|cursor|>\n",
        "",
    ],
)
def test_the_answers_characters_are_found_back_in_the_raw_answer(name: str, answer: str) -> None:
    form = load_format(name)
    text, at = form.answer_offsets(answer)
    assert text == form.answer(answer) and len(at) == len(text)
    assert all(answer[i] == char for i, char in zip(at, text, strict=True))
    assert at == sorted(set(at))
