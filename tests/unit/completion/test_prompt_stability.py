"""Consecutive keystrokes at one place keep the prompt's head byte-identical, so vLLM's prefix
cache serves everything before the cursor's line from the previous request."""

from __future__ import annotations

import pytest

from copilot_lsp.completion.assembly import Limits, build_prompt
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import load_template
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Edit
from copilot_lsp.positions import Position
from copilot_lsp.settings import CompletionSettings

HELPERS = '''"""Helpers the main file uses."""


def compute_total(items: list[int], tax: float = 0.2) -> float:
    """Sum the items with tax."""
    return sum(items) * (1 + tax)


def format_report(total: float, currency: str) -> str:
    return f"{total:.2f} {currency}"


class Ledger:
    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.entries: list[int] = []
'''

BODY = "\n".join(
    f"    step_{i} = ledger.entries[{i}] if ledger.entries else {i}" for i in range(60)
)
BODY += "\n    label = format_report(0.0, currency)"
CURSOR_LINE = "    "
MAIN = f"""import os
from helpers import Ledger, compute_total, format_report


def summarize(ledger: Ledger, currency: str) -> str:
{BODY}
{CURSOR_LINE}
    return format_report(total, currency)


def unrelated() -> None:
    print(os.sep)
"""
ABOVE = "    label = format_report(0.0, currency)"
TYPED = "    total = compute_total(ledger.entries, tax=0.1) + format_report(1.0, currency)"


@pytest.mark.parametrize("family", ["smollm2", "qwen2.5-coder"])
@pytest.mark.parametrize("max_tokens", [2048, 700])
def test_typing_a_line_keeps_the_prompt_head_up_to_the_cursor_line(
    family: str, max_tokens: int
) -> None:
    workspace = Workspace()
    workspace.set_root("file:///repo")
    workspace.open("file:///repo/helpers.py", "python", 1, HELPERS)
    workspace.open("file:///repo/main.py", "python", 1, MAIN)
    # Edits elsewhere first: recently edited places for the prompt.
    workspace.change(
        "file:///repo/helpers.py", 2, [Edit("\n", Position(16, 0), Position(16, 0))], "utf-16"
    )
    workspace.change(
        "file:///repo/main.py", 2, [Edit(" ", Position(67, 16), Position(67, 16))], "utf-16"
    )
    template = load_template(family)
    counter = TokenCounter()
    limits = Limits(max_tokens, 40, 10, snippets=True, snippet_deadline_ms=1000.0)
    line = MAIN.split("\n").index("    ")
    # The line is typed from scratch, one character per keystroke.
    workspace.change(
        "file:///repo/main.py", 3, [Edit("", Position(line, 0), Position(line, 4))], "utf-16"
    )
    heads: list[str] = []
    for column, char in enumerate(TYPED):
        version = 4 + column
        at = Position(line, column)
        workspace.change("file:///repo/main.py", version, [Edit(char, at, at)], "utf-16")
        request = workspace.request(
            "file:///repo/main.py",
            Position(line, column + 1),
            "utf-16",
            automatic=True,
            options=CompletionSettings(),
        )
        assert request is not None
        built = build_prompt(request.prompt, template, counter, limits)
        # The head: everything up to the end of the line above the cursor's (the cursor's
        # line may be held back while it holds only whitespace).
        heads.append(built.prompt[: built.prompt.index(ABOVE) + len(ABOVE)])
        if column == len(TYPED) - 1:
            assert "compute_total" in built.prompt and "step_59" in built.prompt
    changed = [i for i in range(1, len(heads)) if heads[i] != heads[i - 1]]
    assert not changed, f"the head changed at keystrokes {changed}: {heads[changed[0]]!r}"
    # Names used above the cursor bring their definitions, there from the first keystroke.
    assert "def format_report" in heads[0]
