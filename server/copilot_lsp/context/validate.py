"""Syntax-aware trimming: drop trailing lines of a completion that break the file.

The model's last lines are the least reliable; when the file parses with fewer errors
without them, they go. Candidates are the completion's line prefixes, longest first; the
longest with the fewest errors wins. Bounded by a deadline, since each candidate is a
parse of the whole file.
"""

from __future__ import annotations

import time

import tree_sitter

from copilot_lsp.context.syntax import encode, error_count


def trim_to_valid_syntax(
    language: tree_sitter.Language,
    before: str,
    completion: str,
    after: str,
    *,
    deadline_ms: float = 20.0,
) -> str:
    lines = completion.split("\n")
    if len(lines) < 2:
        return completion
    parser = tree_sitter.Parser(language)
    deadline = time.perf_counter() + deadline_ms / 1000.0
    best = completion
    best_errors: int | None = None
    for keep in range(len(lines), 0, -1):
        if time.perf_counter() > deadline:
            break
        candidate = "\n".join(lines[:keep])
        if not candidate.strip():
            break
        errors = error_count(parser.parse(encode(before + candidate + after)).root_node)
        if best_errors is None or errors < best_errors:
            best, best_errors = candidate, errors
        if errors == 0:
            break
    return best
