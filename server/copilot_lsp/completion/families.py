"""Which prompt family fits the model an engine serves.

vLLM's `/v1/models` names the served model twice: `id` (the `--served-model-name`, often a
short alias) and `root` (the weights' repository id or folder). Each family in
configs/models declares the names it fits (`detect`); the first family whose pattern matches
either name wins. A name is only a hint: `markers_present` checks with the engine's own
tokenizer that the family's fill-in-the-middle markers really are single tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from copilot_lsp.completion.templates import PromptTemplate, available_families, load_template

FALLBACK_FAMILY = "prefix-only"
"""For a model no family fits: the code before the cursor, nothing the model may not know."""

_INSTRUCT = re.compile(r"(instruct|[-_]chat\b|[-_]it\b)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FamilyMatch:
    family: str
    name: str
    """The served model's name (id or root) that matched."""


def detect_family(
    names: Iterable[str | None], families: Iterable[PromptTemplate] | None = None
) -> FamilyMatch | None:
    """The first family whose `detect` patterns match one of `names`, or None."""
    candidates = [name for name in names if name]
    for template in families if families is not None else all_templates():
        for pattern in template.detect:
            expression = re.compile(pattern, re.IGNORECASE)
            for name in candidates:
                if expression.search(name):
                    return FamilyMatch(template.name, name)
    return None


def all_templates() -> list[PromptTemplate]:
    return [load_template(family) for family in available_families()]


def base_family(family: str) -> str:
    """The family a variant belongs to (`qwen2.5-coder-repo` -> `qwen2.5-coder`)."""
    for template in all_templates():
        if template.repo_variant == family:
            return template.name
    return family


def looks_instruct(name: str) -> bool:
    """Chat/instruction-tuned checkpoints: fill-in-the-middle is trained into the base models."""
    return bool(_INSTRUCT.search(name))


MARKER_MAX_TOKENS = 2
"""A marker the tokenizer knows is one token (a SentencePiece tokenizer may put a word-start
piece before it); one it does not know splits into 5 or more (`<`, `|`, `fim`, `_`, …)."""


def markers_present(counts: Mapping[str, int]) -> bool:
    """Whether every marker's token count (from the engine's /tokenize) shows a known token."""
    return all(count <= MARKER_MAX_TOKENS for count in counts.values())
