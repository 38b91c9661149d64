"""Definitions per open document, computed lazily and kept until the document changes;
after a change only the edited part of the tree is searched again."""

from __future__ import annotations

import time
from collections.abc import Callable

from copilot_lsp.context.definition_cache import DefinitionCache, definitions_incremental
from copilot_lsp.context.documents import Document
from copilot_lsp.context.snippets import Definitions


class DefinitionIndex:
    def __init__(self, deadline_ms: float = 20.0) -> None:
        self._deadline_ms = deadline_ms
        self._cache: dict[str, tuple[int, Definitions]] = {}
        self._chunks: dict[str, DefinitionCache] = {}

    def lazy(self, document: Document) -> Callable[[], Definitions]:
        """A function giving `document`'s definitions, parsed at most once per version."""
        version = document.version

        def get() -> Definitions:
            cached = self._cache.get(document.uri)
            if cached is not None and cached[0] == version:
                return cached[1]
            if document.syntax is None or document.version != version:
                return {}
            deadline = time.perf_counter() + self._deadline_ms / 1000.0
            chunks = self._chunks.setdefault(document.uri, DefinitionCache())
            outline = document.syntax.outline(document.text)
            found = definitions_incremental(
                outline, document.language_id, deadline, chunks, document.syntax.changes
            )
            self._cache[document.uri] = (version, found)
            return found

        return get

    def forget(self, uri: str) -> None:
        self._cache.pop(uri, None)
        self._chunks.pop(uri, None)
