"""Tree-sitter grammars from their per-language wheels, by LSP language id.

Each grammar ships compiled inside its own PyPI wheel, so nothing is fetched at run time.
A language without a grammar gets None, and callers fall back to line heuristics.
"""

from __future__ import annotations

import functools
import importlib
import logging

import tree_sitter

logger = logging.getLogger(__name__)

# language id -> (module, function returning the grammar)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "javascriptreact": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "typescriptreact": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
}

# The family a language id belongs to, for queries shared between grammars.
FAMILY = {
    "python": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",
    "typescript": "typescript",
    "typescriptreact": "typescript",
    "go": "go",
    "rust": "rust",
}


def supported_languages() -> list[str]:
    return sorted(_GRAMMARS)


@functools.cache
def grammar(language_id: str) -> tree_sitter.Language | None:
    """The grammar for an LSP language id, or None (unknown id or wheel not installed)."""
    spec = _GRAMMARS.get(language_id)
    if spec is None:
        return None
    module_name, function = spec
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        logger.warning(
            "no tree-sitter grammar for %s: %s is not installed", language_id, module_name
        )
        return None
    return tree_sitter.Language(getattr(module, function)())
