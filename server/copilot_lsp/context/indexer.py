"""Keeps the workspace index (context/repo_index.py) current, in the background.

Discovery (context/workspace_files.py) and parsing (context/file_summary.py) run in a
separate process: tree-sitter holds the GIL while it parses (90 ms for a 400 KB file
measured here), so a thread would make keystrokes wait. The event loop only adds each file's
summary to the index, one file at a time with a yield in between, so completions work from
the first keystroke with whatever is indexed so far.

It stays current from `workspace/didChangeWatchedFiles`, `textDocument/didSave` and the
open documents, whose text overrides the file on disk (an edited one is indexed again a
moment after the last keystroke, `REINDEX_DELAY_S`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from copilot_lsp.context.file_summary import Item, summarize_batch
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.workspace_files import Limits, discover, language_of

logger = logging.getLogger(__name__)

BATCH = 2
"""Files per trip to the indexing process. Taking a trip's results back (unpickling, in the
executor's thread) holds the GIL, and with it the event loop: the smaller the trip, the
shorter a keystroke's wait while a large folder is indexed (bench index, 20,000 files,
keystrokes while indexing p99: 8 files 35-37 ms, 4 files 28.9 ms, 2 files 22.3 ms)."""
REINDEX_DELAY_S = 1.0
FOREGROUND_WAIT_S = 0.025
"""How long the indexer's work on the event loop waits for the completions in flight to
end, at most, before sending a batch and before putting its summaries into the index:
keystrokes go first, about a keystroke's budget each time, so that typing without a pause
slows the first pass down (up to 2 x 25 ms per batch of 2 files) without stopping it.
(0.2 s before each step held a 462-file first pass through a 2-minute soak of 40 keys/s,
its growth read as a leak.)"""
PROGRESS_EVERY_S = 0.25

Progress = Callable[[int, int, bool], None]
"""Hears (files indexed, files to index, finished) while the first pass runs."""


def process_executor() -> Executor:
    """One worker process, started fresh (no fork of a process with threads), niced."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_lower_priority)


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(10)


def settle_heap() -> None:
    """Collect the young garbage, then freeze every object left (`gc.freeze`): the cyclic
    collector never walks them again. The index is millions of long-lived objects (30 M for
    20,000 files of site-packages); left in the oldest generation, each full collection
    walks them all, up to 2.4 s with the event loop stopped while a large folder is indexed
    (`bench index`). Costs the objects made since the last call (a batch: a millisecond or
    two). The index's objects hold no reference cycles: the ones it drops later are still
    freed by reference counting. Only while a pass runs (the first, or a re-discovery's),
    so that the few cycles alive at a freeze and dropped later (never collected then) stay
    bounded."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True, slots=True)
class Folder:
    uri: str
    """Without a trailing slash."""
    path: Path

    @classmethod
    def of(cls, uri: str) -> Folder | None:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        return cls(uri.rstrip("/"), Path(unquote(parsed.path)))

    def relative(self, uri: str) -> str | None:
        prefix = self.uri + "/"
        return unquote(uri[len(prefix) :]) if uri.startswith(prefix) else None

    def uri_of(self, relative: str) -> str:
        return (self.path / relative).as_uri()


class WorkspaceIndexer:
    def __init__(
        self,
        index: RepoIndex,
        open_text: Callable[[str], str | None],
        *,
        executor: Callable[[], Executor] = process_executor,
        on_progress: Progress = lambda done, total, finished: None,
        reindex_delay_s: float = REINDEX_DELAY_S,
        freeze_heap: bool = False,
    ) -> None:
        """`open_text` gives an open document's text (None when it is not open); with
        `freeze_heap` (the server's own process) the first pass freezes what it indexed out
        of the cyclic garbage collector's sight (`settle_heap`)."""
        self.index = index
        self._open_text = open_text
        self._make_executor = executor
        self._executor: Executor | None = None
        self.on_progress = on_progress
        self._delay = reindex_delay_s
        self._freeze_heap = freeze_heap
        self.limits = Limits()
        self.enabled = True
        self.folders: list[Folder] = []
        self._queue: dict[str, bool] = {}
        """uri -> whether it must pass discovery's rules first (it was not discovered)."""
        self._known: set[str] = set()
        self._waiting: set[str] = set()
        """Files of the pass in progress not indexed yet: the first pass, or the files a
        re-discovery admitted (an added workspace folder, a changed `.gitignore`)."""
        self._total = 0
        """Files of the pass in progress (0: none), for its progress."""
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._rediscoveries: set[asyncio.Task[None]] = set()
        self.idle = asyncio.Event()
        """Set while nothing waits to be indexed (tests and benchmarks wait for it)."""
        self._started = 0.0
        self._first_pass: tuple[int, float] | None = None
        """(files discovered, seconds from start to the last one indexed) of the first pass."""
        self._foreground = 0
        self._quiet = asyncio.Event()
        """Set while no completion is in flight (`foreground`)."""
        self._quiet.set()

    def configure(self, enabled: bool, limits: Limits) -> None:
        """Use these settings; an index already built with others is built again."""
        changed = (enabled, limits) != (self.enabled, self.limits)
        self.enabled, self.limits = enabled, limits
        if changed and self.folders:  # started before
            self.start([folder.uri for folder in self.folders])

    def start(self, folder_uris: Sequence[str]) -> None:
        """Index the workspace folders (file: URIs) from scratch, in the background."""
        self.stop()
        self.folders = [f for uri in folder_uris if (f := Folder.of(uri)) is not None]
        if not self.enabled or not self.folders:
            return
        self.idle.clear()
        self._started = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def set_folders(self, folder_uris: Sequence[str]) -> None:
        """The workspace folders are now these (`workspace/didChangeWorkspaceFolders`): the
        files of an added folder are indexed and a removed folder's leave, in the background;
        the rest of the index stays as it is."""
        folders = [f for uri in folder_uris if (f := Folder.of(uri)) is not None]
        if [f.uri for f in folders] == [f.uri for f in self.folders]:
            return
        if self._task is None or not folders:  # nothing indexed yet, or nothing to index
            self.start(folder_uris)
            return
        self.folders = folders
        self.rules_changed()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        for task in self._rediscoveries:
            task.cancel()
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._queue.clear()
        self._known.clear()
        self._waiting = set()
        self._total = 0
        self._first_pass = None
        self.index.clear()
        self.idle.set()

    def close(self) -> None:
        self.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def stats(self) -> dict[str, Any]:
        """For `copilot/stats` (`index`): whether it is on, the index's size (RepoIndex.stats),
        files waiting, whether a pass is `indexing` (the first, or a re-discovery's), and the
        first pass: `first_pass_files` discovered, `first_pass_s` from the start to the last
        of them indexed (null while it runs)."""
        running = self._task is not None
        first = self._first_pass
        return {
            "enabled": self.enabled and running,
            **self.index.stats(),
            "queued": len(self._queue),
            "first_pass_files": first[0] if first else None,
            "first_pass_s": round(first[1], 3) if first else None,
            "indexing": running and (first is None or bool(self._total)),
        }

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Around a request the user waits for (a completion, a next edit): the indexer's
        own work on the event loop waits until it is answered (`FOREGROUND_WAIT_S` at most
        each time), so that the keystroke's context build and stream do not queue behind
        summaries being put into the index."""
        self._foreground += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._foreground -= 1
            if not self._foreground:
                self._quiet.set()

    async def _yield_to_foreground(self) -> None:
        if self._foreground:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._quiet.wait(), FOREGROUND_WAIT_S)

    def locate(self, uri: str) -> tuple[Folder, str] | None:
        """The workspace folder `uri` is in, and its path there."""
        for folder in self.folders:
            relative = folder.relative(uri)
            if relative is not None:
                return folder, relative
        return None

    def changed(self, uri: str) -> None:
        """`uri` was created, changed or saved on disk, or opened or closed in the editor."""
        if self._task is None or self.locate(uri) is None:
            return
        if language_of(uri) is None:
            return
        self._queue[uri] = uri not in self._known
        self.idle.clear()
        self._wake.set()

    def edited(self, uri: str) -> None:
        """An open document changed: index its text again once the typing pauses."""
        if self._task is None or uri not in self._known:
            return
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(self._delay, self._edited_later, uri)

    def _edited_later(self, uri: str) -> None:
        self._timers.pop(uri, None)
        self.changed(uri)

    def deleted(self, uri: str) -> None:
        """`uri` was deleted: a file, or a folder with every file under it (a client reports a
        deleted folder once, not its files). Only a name without a dot is taken for a folder
        (`src`, `pkg`): looking for the files under it walks every file indexed."""
        gone = [uri]
        if "." not in uri.rstrip("/").rsplit("/", 1)[-1] and uri not in self._known:
            inside = uri.rstrip("/") + "/"
            gone += [k for k in (*self._known, *self._queue) if k.startswith(inside)]
        for each in gone:
            self._waiting.discard(each)
            self._queue.pop(each, None)
            self._known.discard(each)
            self.index.remove(each)

    def rules_changed(self) -> None:
        """A `.gitignore` changed, appeared or went, or the folders did: discover the folders
        again (in the background); files the rules (and folders) now admit are indexed, files
        they now leave out leave the index."""
        if self._task is None:
            return
        self.idle.clear()
        task = asyncio.get_running_loop().create_task(self._rediscover())
        self._rediscoveries.add(task)
        task.add_done_callback(self._rediscoveries.discard)

    async def _rediscover(self) -> None:
        found: set[str] = set()
        for folder, relative in await self._listed():
            found.add(folder.uri_of(relative))
        admitted = found - self._known - set(self._queue)
        dropped = [uri for uri in (*self._known, *self._queue) if uri not in found]
        for uri in dropped:
            self.deleted(uri)
        for uri in sorted(admitted):
            self._known.add(uri)
            self._queue[uri] = False
        logger.info("folders discovered again: %d files in, %d out", len(admitted), len(dropped))
        if admitted:  # a pass of their own, or more of the one in progress
            self._waiting.update(admitted)
            self._total += len(admitted)
            self.on_progress(self._total - len(self._waiting), self._total, False)
        self._wake.set()
        if not self._queue:
            self.idle.set()

    async def _run(self) -> None:
        self._waiting = await self._discover()
        self._total, reported = len(self._waiting), 0.0
        if self._total:
            self.on_progress(0, self._total, False)
        else:
            self._first_pass = (0, time.monotonic() - self._started)
        while True:
            if not self._queue:
                self._end_pass()  # when the last ones were deleted
                self.idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._yield_to_foreground()
            batch = list(self._queue.items())[:BATCH]
            for uri, _ in batch:
                del self._queue[uri]
            await self._index(batch)
            if self._waiting and self._freeze_heap:
                settle_heap()
            if self._waiting:
                self._waiting.difference_update(uri for uri, _ in batch)
                if not self._waiting:
                    self._end_pass()
                elif time.monotonic() - reported >= PROGRESS_EVERY_S:
                    reported = time.monotonic()
                    self.on_progress(self._total - len(self._waiting), self._total, False)

    def _end_pass(self) -> None:
        """The pass in progress (if any) has indexed its last file: say so."""
        if not self._total or self._waiting:
            return
        if self._first_pass is None:
            self._first_pass = (self._total, time.monotonic() - self._started)
        self.on_progress(self._total, self._total, True)
        self._total = 0

    async def _discover(self) -> set[str]:
        """Queue every file of the folders; returns them (the first pass)."""
        for folder, relative in await self._listed():
            uri = folder.uri_of(relative)
            self._known.add(uri)
            self._queue.setdefault(uri, False)
        logger.info("indexing %d files of %d folders", len(self._queue), len(self.folders))
        return set(self._queue)

    async def _listed(self) -> list[tuple[Folder, str]]:
        """The files of the folders that discovery admits, `max_files` over all of them."""
        loop = asyncio.get_running_loop()
        listed: list[tuple[Folder, str]] = []
        for folder in self.folders:
            room = self.limits.max_files - len(listed)
            if room <= 0:
                break
            limits = replace(self.limits, max_files=room)
            try:
                found = await loop.run_in_executor(self._pool(), discover, folder.path, limits)
            except Exception as error:
                logger.warning("could not list the files of %s: %s", folder.uri, error)
                continue
            listed += [(folder, relative) for relative in found]
        return listed

    async def _index(self, batch: list[tuple[str, bool]]) -> None:
        items: list[Item] = []
        paths: list[tuple[str, str]] = []
        for uri, check in batch:
            located = self.locate(uri)
            language = language_of(uri)
            if located is None or language is None:
                continue
            folder, relative = located
            items.append((str(folder.path), relative, language, self._open_text(uri), check))
            paths.append((uri, relative))
        if not items:
            return
        loop = asyncio.get_running_loop()
        try:
            summaries = await loop.run_in_executor(
                self._pool(), summarize_batch, items, self.limits
            )
        except Exception as error:  # a crashed worker: the next batch gets a new one
            logger.warning("indexing %d files failed: %s", len(items), type(error).__name__)
            self._reset_pool()
            return
        await self._yield_to_foreground()
        for (uri, relative), summary in zip(paths, summaries, strict=True):
            if summary is None:
                self.deleted(uri)
            else:
                self._known.add(uri)
                self.index.put(uri, relative, summary)
            await asyncio.sleep(0)  # a keystroke waits for one file's tables at most

    def _pool(self) -> Executor:
        if self._executor is None:
            self._executor = self._make_executor()
        return self._executor

    def _reset_pool(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = None
