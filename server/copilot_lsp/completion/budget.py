"""Counting prompt tokens: the model's own tokenizer when we have it, else characters.

Counts are memoised per line: between keystrokes almost every line of the window is the
same, so a budget check costs a dictionary lookup per line, not a tokenizer call.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
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


class EngineTokenCounter(TokenCounter):
    """Counts with the served model's tokenizer through the engine (vLLM's `/tokenize`).

    For a model whose tokenizer.json is not on this machine (a remote GPU engine). A count is
    remembered per text; a text not counted yet is estimated from characters, and `prefetch`
    asks the engine for it under a deadline. Between keystrokes only the edited line is new,
    so after the first completion almost every line's count is exact and free.
    """

    def __init__(
        self,
        count: Callable[[str], Awaitable[int]],
        *,
        concurrency: int = 8,
        cache_size: int = 50_000,
        max_pending: int = 256,
    ) -> None:
        super().__init__(None, cache_size)
        self.source = "engine /tokenize"
        self._remote = count
        self._known: OrderedDict[str, int] = OrderedDict()
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._semaphore = asyncio.Semaphore(concurrency)
        self._max_pending = max_pending
        self.failures = 0
        """Failed /tokenize calls in a row; past a few the engine is not asked any more."""

    @property
    def usable(self) -> bool:
        return self.failures < 3

    def count(self, text: str) -> int:
        if not text:
            return 0
        known = self._known.get(text)
        if known is not None:
            self._known.move_to_end(text)
            return known
        return max(1, round(len(text) / CHARS_PER_TOKEN))

    def count_line(self, line: str) -> int:
        # Not memoised by the base class: an estimate must not outlive the exact count.
        return self.count(line + "\n")

    async def prefetch_lines(self, lines: Iterable[str], deadline_s: float) -> None:
        """Ask the engine for the lines not counted yet; wait for them at most `deadline_s`.
        Counts that arrive later still land in the cache for the next keystroke."""
        if not self.usable:
            return
        waiting: list[asyncio.Task[None]] = []
        for line in dict.fromkeys(lines):
            text = line + "\n"
            if text in self._known:
                continue
            task = self._pending.get(text)
            if task is None:
                if len(self._pending) >= self._max_pending:
                    continue
                task = asyncio.ensure_future(self._fetch(text))
                self._pending[text] = task
                task.add_done_callback(functools.partial(self._settled, text))
            waiting.append(task)
        if waiting and deadline_s > 0:
            await asyncio.wait(waiting, timeout=deadline_s)

    def _settled(self, text: str, _: asyncio.Task[None]) -> None:
        self._pending.pop(text, None)

    async def _fetch(self, text: str) -> None:
        async with self._semaphore:
            if not self.usable:
                return
            try:
                value = await self._remote(text)
            except Exception as error:  # counting must never fail a completion
                self.failures += 1
                logger.info("the engine did not count tokens (%s); estimating instead", error)
                return
        self.failures = 0
        self._known[text] = value
        if len(self._known) > self._cache_size:
            self._known.popitem(last=False)

    def close(self) -> None:
        for task in list(self._pending.values()):
            task.cancel()
