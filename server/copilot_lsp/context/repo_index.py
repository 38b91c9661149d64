"""The workspace index: every indexed file's summary (context/file_summary.py), and the
tables that make retrieval a dictionary lookup: definitions by name, files by module name,
and windows by identifier (an inverted index, so that ranking similar code never scans all
files).

Owned by the event loop: summaries are computed elsewhere (context/indexer.py) and added
here one file at a time, each a few milliseconds at most.

Several workspace folders may hold the same relative paths (two services' `src/utils.ts`,
two `pkg/__init__.py`): a module or folder is looked up for a workspace folder (`root`), and
another folder's file only answers when that one has none.
"""

from __future__ import annotations

import bisect
import math
import posixpath
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from copilot_lsp.context.file_summary import FileSummary, Symbol, Window

COMMON_POSTINGS = 400
"""An identifier in more windows than this (`self`, `return`'s neighbours) does not pick
candidates: it would cost a long list for no discrimination. Scores still count it."""
CANDIDATES = 32
"""Windows scored exactly per query (the ones sharing most uncommon identifiers)."""
QUERY_TOKENS = 32
"""The query's rarest identifiers that pick candidates."""
POSTING_TYPE = "I" if array("I").itemsize >= 4 else "L"
"""Unsigned, 32 bits at least (window numbers)."""
MAX_WINDOW_NUMBER = 2**32 - 1
"""Window numbers only grow; past this the index numbers its windows afresh (after some
6,000 re-indexings of a 20,000-file workspace)."""
BM25_K1 = 1.2
BM25_B = 0.75


@dataclass(frozen=True, slots=True)
class IndexedFile:
    uri: str
    path: str
    """As the model sees it: relative to its workspace folder."""
    summary: FileSummary
    root: str = ""
    """Its workspace folder's URI (`root_of`)."""

    @property
    def module(self) -> str | None:
        return self.summary.module

    @property
    def language_id(self) -> str:
        return self.summary.language_id


@dataclass(frozen=True, slots=True)
class Similar:
    file: IndexedFile
    window: Window
    score: float

    @property
    def text(self) -> str:
        return self.file.summary.window_text(self.window)


class RepoIndex:
    def __init__(self) -> None:
        self.files: dict[str, IndexedFile] = {}
        self._by_name: dict[str, dict[str, Symbol]] = {}
        """name -> uri -> its first definition in that file."""
        self._modules: dict[str, dict[str, str]] = {}
        """module name -> workspace folder (`root_of`) -> uri."""
        self._by_last: dict[str, set[str]] = {}
        """the module name's last part -> module names (for `copilot_lsp.x` under `server/`)."""
        self._folders: dict[str, set[str]] = {}
        """folder (relative, "" at the top) -> uris of its files (a Go package is one)."""
        self._windows: dict[int, tuple[str, Window]] = {}
        self._postings: dict[str, array[int]] = {}
        """identifier -> the numbers of the windows holding it, ascending. Arrays, not sets:
        they are most of the index (site-packages, 3,000 files: 1.2 M entries, sets 73 MiB,
        arrays 5); a file's windows are numbered consecutively, so removing them takes one
        slice out of each of its identifiers' arrays."""
        self._file_windows: dict[str, range] = {}
        self._window_tokens = 0
        """The windows' identifiers, all counted (BM25's average window length)."""
        self._next_window = 0
        self._definitions = 0
        self.generation = 0
        """Bumped on every change."""

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, uri: object) -> bool:
        return uri in self.files

    def put(self, uri: str, path: str, summary: FileSummary) -> None:
        """Index `summary` as the content of `uri` (replacing what was indexed for it)."""
        self.remove(uri)
        indexed = IndexedFile(uri, path, summary, root_of(uri, path))
        self.files[uri] = indexed
        self._definitions += len(summary.symbols)
        for symbol in summary.symbols:
            self._by_name.setdefault(symbol.name, {}).setdefault(uri, symbol)
        if summary.module:
            self._modules.setdefault(summary.module, {})[indexed.root] = uri
            self._by_last.setdefault(_last(summary.module), set()).add(summary.module)
        self._folders.setdefault(posixpath.dirname(path), set()).add(uri)
        if self._next_window + len(summary.windows) > MAX_WINDOW_NUMBER:
            self._renumber()
        self._add_windows(uri, summary.windows)
        self.generation += 1

    def _add_windows(self, uri: str, windows: Sequence[Window]) -> None:
        """Number `uri`'s windows after the last ones, and post their identifiers."""
        first = self._next_window
        for number, window in enumerate(windows, first):
            self._windows[number] = (uri, window)
            self._window_tokens += len(window.tokens)
            for token in window.tokens:
                posting = self._postings.get(token)
                if posting is None:
                    self._postings[token] = array(POSTING_TYPE, (number,))
                else:
                    posting.append(number)  # the largest number yet: the array stays sorted
        self._next_window = first + len(windows)
        self._file_windows[uri] = range(first, self._next_window)

    def remove(self, uri: str) -> None:
        indexed = self.files.pop(uri, None)
        if indexed is None:
            return
        summary = indexed.summary
        self._definitions -= len(summary.symbols)
        for symbol in summary.symbols:
            owners = self._by_name.get(symbol.name)
            if owners is not None:
                owners.pop(uri, None)
                if not owners:
                    del self._by_name[symbol.name]
        module = summary.module
        by_root = self._modules.get(module) if module else None
        if module and by_root is not None and by_root.get(indexed.root) == uri:
            del by_root[indexed.root]
            if not by_root:
                del self._modules[module]
                self._by_last.get(_last(module), set()).discard(module)
        folder = self._folders.get(posixpath.dirname(indexed.path))
        if folder is not None:
            folder.discard(uri)
            if not folder:
                del self._folders[posixpath.dirname(indexed.path)]
        numbers = self._file_windows.pop(uri, range(0))
        held: set[str] = set()
        for number in numbers:
            _, window = self._windows.pop(number)
            self._window_tokens -= len(window.tokens)
            held.update(window.tokens)
        for token in held:
            posting = self._postings.get(token)
            if posting is None:
                continue
            start = bisect.bisect_left(posting, numbers.start)
            del posting[start : bisect.bisect_left(posting, numbers.stop, start)]
            if not posting:
                del self._postings[token]
        self.generation += 1

    def _renumber(self) -> None:
        """Number the windows from 0 again, file by file, and rebuild the postings."""
        files = [
            (uri, [self._windows[number][1] for number in numbers])
            for uri, numbers in self._file_windows.items()
        ]
        self._windows, self._postings, self._file_windows = {}, {}, {}
        self._next_window = self._window_tokens = 0
        for uri, windows in files:
            self._add_windows(uri, windows)

    def stats(self) -> dict[str, int]:
        """Its size, for `copilot/stats`: files, definitions, similarity windows and distinct
        identifiers (the inverted index's keys)."""
        return {
            "files": len(self.files),
            "definitions": self._definitions,
            "windows": len(self._windows),
            "identifiers": len(self._postings),
        }

    def clear(self) -> None:
        for uri in list(self.files):
            self.remove(uri)

    def module(self, name: str, root: str | None = None) -> IndexedFile | None:
        """The file of module `name` (in workspace folder `root` when it has one): exactly,
        else the one whose name ends with it (shortest first: `pkg.mod` is `src.pkg.mod` when
        the code lives under `src/`), else `name` without its top package (`pkg.mod` is `mod`
        when the workspace folder is `pkg/` itself, as when a user opens one package of a
        larger tree)."""
        uri = self._module_uri(name, root)
        if uri is None and "/" not in name and "." in name:
            uri = self._pick(name.split(".", 1)[1], root)
        return self.files.get(uri) if uri is not None else None

    def exact(self, name: str, root: str | None = None) -> IndexedFile | None:
        """The file of module `name` exactly (a path-like name resolved against the
        workspace folder already: no guessing by its ending)."""
        uri = self._pick(name, root)
        return self.files.get(uri) if uri is not None else None

    def folder(self, path: str, root: str | None = None) -> list[IndexedFile]:
        """The files directly in folder `path` (relative; "" the top) of one workspace folder
        (`root` when it has that folder), by path."""
        found = [self.files[uri] for uri in self._folders.get(path, ())]
        roots = {file.root for file in found}
        if len(roots) > 1:
            chosen = root if root in roots else min(roots)
            found = [file for file in found if file.root == chosen]
        return sorted(found, key=lambda file: file.path)

    def _pick(self, name: str, root: str | None) -> str | None:
        by_root = self._modules.get(name)
        if not by_root:
            return None
        if root is not None and root in by_root:
            return by_root[root]
        return by_root[min(by_root)]

    def _module_uri(self, name: str, root: str | None) -> str | None:
        uri = self._pick(name, root)
        if uri is not None:
            return uri
        separator = "/" if "/" in name else "."
        endings = [
            module
            for module in self._by_last.get(_last(name), ())
            if module.endswith(separator + name)
        ]
        here = [module for module in endings if root in self._modules[module]]
        if here or endings:
            return self._pick(min(here or endings, key=lambda m: (len(m), m)), root)
        return None

    def definitions(self, name: str) -> dict[str, Symbol]:
        """uri -> the first definition of `name` in that file."""
        return self._by_name.get(name, {})

    def similar(
        self,
        query: frozenset[str],
        exclude: Iterable[str] = (),
        limit: int = 3,
        scoring: str = "bm25",
    ) -> list[Similar]:
        """The windows most like `query` (Okapi BM25 of identifier sets, on a fixed scale:
        `_bm25`; `scoring="jaccard"`: their Jaccard, which `bench crossfile --similarity`
        compares with it), best first, one per file, none of the files in `exclude`."""
        postings = sorted(
            (posting for token in query if (posting := self._postings.get(token))),
            key=len,
        )
        counts: Counter[int] = Counter()
        for posting in postings[:QUERY_TOKENS]:
            if len(posting) > COMMON_POSTINGS:
                break
            counts.update(posting)
        skip = set(exclude)
        weights = self._weights(query) if scoring == "bm25" else {}
        ideal = sum(weights.values())
        scored: list[tuple[float, str, int, str, Window]] = []
        for number, _ in counts.most_common(CANDIDATES):
            uri, window = self._windows[number]
            if uri not in skip:
                if scoring == "bm25":
                    score = self._bm25(weights, ideal, window)
                else:  # Jaccard, without building the union (a window's tokens are distinct)
                    shared = len(query.intersection(window.tokens))
                    score = shared / (len(query) + len(window.tokens) - shared)
                scored.append((score, self.files[uri].path, window.start, uri, window))
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        chosen: list[Similar] = []
        seen: set[str] = set()
        for score, _, _, uri, window in scored:
            if uri not in seen:
                seen.add(uri)
                chosen.append(Similar(self.files[uri], window, score))
        return chosen[:limit]

    def _weights(self, query: frozenset[str]) -> dict[str, float]:
        """BM25's inverse document frequency of each query term the index knows."""
        count = len(self._windows)
        weights: dict[str, float] = {}
        for token in query:
            frequency = len(self._postings.get(token, ()))
            if frequency:
                weights[token] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
        return weights

    def _bm25(self, weights: dict[str, float], ideal: float, window: Window) -> float:
        """Okapi BM25 of `window` (every term occurs once: identifier sets) over `ideal`, the
        score of a window of average length holding every term of the query the index knows:
        1.0 is such a window, so that one floor serves every query."""
        count = len(self._windows)
        average = self._window_tokens / count if count else 1.0
        norm = 1 + BM25_K1 * (1 - BM25_B + BM25_B * len(window.tokens) / (average or 1.0))
        score = sum(weights.get(token, 0.0) for token in window.tokens)
        return score * (BM25_K1 + 1) / norm / ideal if ideal else 0.0


def root_of(uri: str, path: str) -> str:
    """The workspace folder's URI of the file at `uri` whose relative path is `path`: the URI
    without as many segments as the path has (its encoding does not matter)."""
    return uri.rsplit("/", path.count("/") + 1)[0] if path else uri


def _last(module: str) -> str:
    return module.replace("/", ".").rsplit(".", 1)[-1]
