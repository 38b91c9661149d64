"""Code from other files of the workspace (context/retrieval.py) charged to the prompt's
budget, in the order retrieval ranked it: imported modules' API, definitions of names,
similar code. A module's API too long for what is left is cut to its first lines (its best:
context/module_api.py ranks them), half of what is left at most.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import Snippet
from copilot_lsp.context.retrieval import CrossFile
from copilot_lsp.context.secrets import redact

Repository = Callable[[float], Sequence[CrossFile]]
"""The cross-file code for the request's cursor, given the deadline (perf_counter seconds)."""
SNIPPET_OVERHEAD = 8
"""Tokens a snippet costs besides its text (its path and separators)."""
MIN_API_LINES = 1
"""Lines of a module's API worth sending at least: its first is its best name."""


def charge(
    repository: Repository | None,
    chosen: Sequence[Snippet],
    used: int,
    budget: int,
    counter: TokenCounter,
    deadline: float,
) -> tuple[list[Snippet], int]:
    """The snippets from `repository` that fit in `budget` (`used` spent so far), leaving out
    what `chosen` already carries; and the tokens used with them."""
    if repository is None or time.perf_counter() > deadline:
        return [], used
    taken = {snippet.text for snippet in chosen}
    found: list[Snippet] = []
    for item in repository(deadline):
        whole = text = redact(item.text)
        if whole in taken or whole.removesuffix(" ...") in taken:
            continue
        room = budget - used - SNIPPET_OVERHEAD
        cost = counter.count(text)
        if cost > room and item.kind == "imported module":
            text = _fit(text, room // 2, counter)  # half: room for what comes after
            cost = counter.count(text) if text else room + 1
        if cost > room:
            continue
        found.append(Snippet(path=item.path, text=text, kind=item.kind))
        taken.add(whole)
        used += cost + SNIPPET_OVERHEAD
    return found, used


def _fit(text: str, room: int, counter: TokenCounter) -> str:
    """The first lines of `text` that cost at most `room` tokens ("" if fewer than
    MIN_API_LINES)."""
    kept: list[str] = []
    spent = 0
    for line in text.split("\n"):
        cost = counter.count_line(line)
        if spent + cost > room:
            break
        kept.append(line)
        spent += cost
    return "\n".join(kept) if len(kept) >= MIN_API_LINES else ""
