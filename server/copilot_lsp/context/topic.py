"""What the code above the cursor is about, to rank an imported module's names by: a prompt
with little room keeps only the first lines of a module's API (context/module_api.py)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from copilot_lsp.context.file_summary import Symbol

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DEFINES = re.compile(
    r"\b(?:def|func|fn|function|class|struct|trait|interface)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"
)
"""A definition's name: Python, Go (a method's receiver skipped), Rust, JavaScript/TypeScript."""
_KEYWORD_LIST = (
    "async await bool class const def export false func function impl int interface none pub "
    "return self static str struct true type"
)
_KEYWORDS = frozenset(_KEYWORD_LIST.split())

Score = tuple[int, int, int, float, int]


def words(text: str) -> frozenset[str]:
    """The words of the identifiers in `text`, lowercased, 3 characters or more, keywords
    left out (`parse_pow(self)`, `PowNode` -> parse, pow, node)."""
    found = (word.lower() for word in _WORD.findall(text) if len(word) >= 3)
    return frozenset(word for word in found if word not in _KEYWORDS)


_symbol_words = functools.lru_cache(maxsize=1 << 13)(words)
"""`words` of the names and headers a module's listing ranks, again at each line: cached
(only those: the lines above the cursor change at every line, and would fill it)."""


@dataclass(frozen=True, slots=True)
class Topic:
    words: frozenset[str] = frozenset()
    """The words of the identifiers in the lines above the cursor."""
    focus: frozenset[str] = frozenset()
    """The words of the nearest definition's name above (`parse_pow`: parse, pow): what the
    code being written is most about."""
    seen: frozenset[str] = frozenset()
    """The identifiers of those lines: the prompt's window shows them already."""

    def __bool__(self) -> bool:
        return bool(self.words)

    def score(self, symbol: Symbol) -> Score:
        """How much `symbol` is worth listing, higher first: the words of its name in the
        nearest definition's name; not in the lines above already; the words of its name
        shared, and the share of its name's words that are (`Session` before
        `SessionRedirectMixin`); the words of its header shared."""
        if not self.words:
            return (0, 0, 0, 0.0, 0)
        own = _symbol_words(symbol.name)
        shared = len(own & self.words)
        return (
            len(own & self.focus),
            symbol.name not in self.seen,
            shared,
            shared / len(own) if own else 0.0,
            len(_symbol_words(symbol.header) & self.words),
        )


NOTHING = Topic()


def topic_of(text: str) -> Topic:
    """The topic of `text`, the lines above the cursor."""
    defined = _DEFINES.findall(text)
    return Topic(
        words(text),
        words(defined[-1]) if defined else frozenset(),
        frozenset(_IDENTIFIER.findall(text)),
    )


def descending(score: Score) -> tuple[int, int, int, float, int]:
    """A sort key that puts higher scores first."""
    return (-score[0], -score[1], -score[2], -score[3], -score[4])
