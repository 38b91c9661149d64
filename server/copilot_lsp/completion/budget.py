"""Counting prompt tokens: the model's own tokenizer when we have it, else characters.

Counts are memoised per line: between keystrokes almost every line of the window is the
same, so a budget check costs a dictionary lookup per line, not a tokenizer call.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.2
"""Code averages 3–3.5 characters per token in the BPE vocabularies of code models."""
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class TokenCounter:
    """`count(text)`; exact with a `tokenizer.json`, estimated from characters otherwise."""

    def __init__(self, tokenizer_file: Path | None = None, cache_size: int = 50_000) -> None:
        self._tokenizer: Any = None
        self.source = "characters"
        if tokenizer_file is not None:
            self._tokenizer = _load(tokenizer_file)
            if self._tokenizer is not None:
                self.source = str(tokenizer_file)
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size

    @property
    def exact(self) -> bool:
        return self._tokenizer is not None

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._tokenizer is None:
            return max(1, round(len(text) / CHARS_PER_TOKEN))
        try:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        except TypeError:  # lone surrogates (an editor may hold them) are not valid Rust str
            clean = _LONE_SURROGATE.sub("\ufffd", text)
            return len(self._tokenizer.encode(clean, add_special_tokens=False).ids)

    def count_line(self, line: str) -> int:
        """Tokens of one line including its line break (memoised)."""
        cached = self._cache.get(line)
        if cached is not None:
            self._cache.move_to_end(line)
            return cached
        value = self.count(line + "\n")
        self._cache[line] = value
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return value


def _load(path: Path) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        logger.warning("the tokenizers package is missing; counting prompt tokens by characters")
        return None
    try:
        return Tokenizer.from_file(str(path))
    except Exception as error:  # a broken file must not stop completions
        logger.warning("cannot load tokenizer %s (%s); counting by characters", path, error)
        return None
