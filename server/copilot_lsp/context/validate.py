"""Syntax-aware trimming: drop trailing lines of a completion that break the file.

The model's last lines are the least reliable; when the file parses with fewer errors
without them, they go. Candidates are the completion's line prefixes, longest first; the
longest with the fewest errors wins. Bounded by a deadline, since each candidate is a
parse of the whole file, but for one that leaves a Python file without errors when the
document's outline is at hand: the statements it lands in are parsed alone (forest.py).
"""

from __future__ import annotations

import time

import tree_sitter

from copilot_lsp.context.forest import parses_cleanly
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.syntax import encode, error_count


def trim_to_valid_syntax(
    language: tree_sitter.Language,
    before: str,
    completion: str,
    after: str,
    *,
    deadline_ms: float = 20.0,
    syntax: tree_sitter.Tree | Outline | None = None,
) -> str:
    """`syntax`: the document's tree or outline, when `before` + `after` are its text with at
    most the completion's span left out: a candidate that leaves a Python file without errors
    is then known so from a parse of the statements it lands in, not of the whole file."""
    lines = completion.split("\n")
    if len(lines) < 2:
        return completion
    parser = tree_sitter.Parser(language)
    deadline = time.perf_counter() + deadline_ms / 1000.0
    outline = syntax if isinstance(syntax, Outline) else None
    start = len(encode(before))
    end = outline.length - len(encode(after)) if outline is not None else start
    best = completion
    best_errors: int | None = None
    for keep in range(len(lines), 0, -1):
        if time.perf_counter() > deadline:
            break
        candidate = "\n".join(lines[:keep])
        if not candidate.strip():
            break
        source = encode(before + candidate + after)
        if outline is not None and parses_cleanly(
            outline, parser, source, start, end, len(source) - (outline.length - end)
        ):
            return candidate  # no error: the longest such candidate wins
        errors = error_count(parser.parse(source).root_node)
        if best_errors is None or errors < best_errors:
            best, best_errors = candidate, errors
        if errors == 0:
            break
    return best
