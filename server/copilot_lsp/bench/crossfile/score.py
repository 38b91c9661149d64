"""How a cross-file completion is scored against the rest of its line."""

from __future__ import annotations

import re
from typing import Any

from copilot_lsp.bench.quality.safim import edit_similarity

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def first_line(text: str) -> str:
    """What the completion puts on the cursor's line, trailing whitespace stripped."""
    return text.split("\n", 1)[0].rstrip("\r").rstrip()


def score(completion: str, answer: str, name: str) -> dict[str, Any]:
    """`completion`: the text it puts on the cursor's line from the cursor on.

    exact_match: the line as the file has it (trailing whitespace aside); identifier_match:
    it starts with the API name as a whole identifier; edit_similarity: 1.0 for the same
    text (whitespace runs collapsed), down to 0.0."""
    line = first_line(completion)
    found = _IDENTIFIER.match(line)
    return {
        "completion": line,
        "shown": bool(line.strip()),
        "exact_match": line == answer.rstrip(),
        "identifier_match": found is not None and found.group() == name,
        "edit_similarity": round(edit_similarity(line, answer), 4),
    }
