"""Indexing progress over `$/progress`: one token per pass, and a client that declines one is
not asked again during that pass."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from lsprotocol import types

from copilot_lsp.lsp.indexing import IndexProgress


class Progress:
    def __init__(self, declines: int) -> None:
        self.declines = declines
        self.answer = asyncio.Event()
        self.answer.set()
        self.created: list[str] = []
        self.sent: list[tuple[str, Any]] = []
        self.tokens: dict[str, Any] = {}

    async def create_async(self, token: str) -> None:
        self.created.append(token)
        await self.answer.wait()
        if self.declines:
            self.declines -= 1
            raise RuntimeError("the client answered with an error")

    def begin(self, token: str, value: Any) -> None:
        self.sent.append((token, value))

    report = end = begin


def server(progress: Progress) -> Any:
    window = types.WindowClientCapabilities(work_done_progress=True)
    capabilities = types.ClientCapabilities(window=window)
    return SimpleNamespace(client_capabilities=capabilities, work_done_progress=progress)


async def reported(on_progress: IndexProgress, *reports: tuple[int, int, bool]) -> None:
    for report in reports:
        on_progress(*report)
        for _ in range(5):
            await asyncio.sleep(0)


async def test_a_declined_pass_is_not_asked_again_and_the_next_pass_is() -> None:
    progress = Progress(declines=1)
    on_progress = IndexProgress(server(progress))
    await reported(on_progress, (0, 100, False), (40, 100, False), (80, 100, False))
    await reported(on_progress, (100, 100, True))
    assert progress.created == ["copilot-lsp/indexing/1"]  # once for the whole pass
    assert progress.sent == []
    # A later pass (an added folder) asks again, and is shown.
    await reported(on_progress, (0, 3, False), (3, 3, True))
    assert progress.created[1:] == ["copilot-lsp/indexing/2"]
    kinds = [type(value) for _, value in progress.sent]
    assert kinds == [types.WorkDoneProgressBegin, types.WorkDoneProgressEnd]
    assert progress.sent[-1][1].message == "indexed 3 files"


async def test_each_pass_has_its_token_begin_reports_and_end() -> None:
    progress = Progress(declines=0)
    on_progress = IndexProgress(server(progress))
    await reported(on_progress, (0, 10, False), (5, 10, False), (10, 10, True))
    await reported(on_progress, (0, 2, False), (2, 2, True))
    assert progress.created == ["copilot-lsp/indexing/1", "copilot-lsp/indexing/2"]
    first = [value for token, value in progress.sent if token.endswith("/1")]
    assert [type(v) for v in first] == [
        types.WorkDoneProgressBegin,
        types.WorkDoneProgressReport,
        types.WorkDoneProgressEnd,
    ]
    assert first[1].message == "indexing 5 of 10 files" and first[1].percentage == 50


async def test_a_pass_that_ends_while_the_client_declines_it_does_not_silence_the_next() -> None:
    progress = Progress(declines=1)
    progress.answer.clear()  # the client takes its time to answer
    on_progress = IndexProgress(server(progress))
    await reported(on_progress, (0, 2, False), (2, 2, True))  # a small pass ends meanwhile
    progress.answer.set()
    for _ in range(5):  # the error reaches the server
        await asyncio.sleep(0)
    assert progress.created == ["copilot-lsp/indexing/1"] and progress.sent == []
    await reported(on_progress, (0, 5, False), (5, 5, True))
    assert progress.created == ["copilot-lsp/indexing/1", "copilot-lsp/indexing/2"]
    assert [token for token, _ in progress.sent] == ["copilot-lsp/indexing/2"] * 2
