"""The background indexer: a first pass with progress, then changes, saves and open documents."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from copilot_lsp.context import indexer as indexer_module
from copilot_lsp.context.indexer import WorkspaceIndexer
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.workspace_files import Limits
from tests.conftest import until
from tests.unit.context.workspace_fixtures import SECRET, git_init, write_package

pytestmark = pytest.mark.timeout(60)


class Harness:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.open: dict[str, str] = {}
        self.progress: list[tuple[int, int, bool]] = []
        self.indexer = WorkspaceIndexer(
            RepoIndex(),
            self.open.get,
            executor=lambda: ThreadPoolExecutor(max_workers=1),
            on_progress=lambda *report: self.progress.append(report),
            reindex_delay_s=0.01,
        )

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    async def settled(self) -> None:
        await asyncio.sleep(0.05)
        await asyncio.wait_for(self.indexer.idle.wait(), 20)

    def defines(self, name: str, relative: str) -> bool:
        return self.uri(relative) in self.indexer.index.definitions(name)


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    write_package(tmp_path)
    (tmp_path / ".env.py").write_text(f"TOKEN = '{SECRET}'\n", encoding="utf-8")
    made = Harness(tmp_path)
    made.indexer.start([tmp_path.as_uri()])
    await made.settled()
    yield made
    made.indexer.close()


async def test_the_first_pass_indexes_the_package_and_reports_progress(harness: Harness) -> None:
    assert harness.defines("compute_total", "pkg/mod.py")
    assert len(harness.indexer.index) == 6  # the package, not the secret
    assert harness.progress[0] == (0, 6, False)
    assert harness.progress[-1] == (6, 6, True)


async def test_changes_on_disk_and_deletions_reach_the_index(harness: Harness) -> None:
    path = harness.root / "pkg" / "x.py"
    path.write_text("def renamed_report() -> str:\n    return ''\n", encoding="utf-8")
    harness.indexer.changed(harness.uri("pkg/x.py"))
    (harness.root / "pkg" / "added.py").write_text("def added_fn() -> None:\n    pass\n")
    harness.indexer.changed(harness.uri("pkg/added.py"))
    await harness.settled()
    assert harness.defines("renamed_report", "pkg/x.py")
    assert not harness.defines("format_report", "pkg/x.py")
    assert harness.defines("added_fn", "pkg/added.py")
    harness.indexer.deleted(harness.uri("pkg/added.py"))
    assert not harness.defines("added_fn", "pkg/added.py")


async def test_an_open_document_overrides_its_file(harness: Harness) -> None:
    uri = harness.uri("pkg/x.py")
    harness.open[uri] = "def typed_in_editor() -> None:\n    pass\n"
    harness.indexer.edited(uri)
    await harness.settled()
    assert harness.defines("typed_in_editor", "pkg/x.py")
    del harness.open[uri]
    harness.indexer.changed(uri)  # closed: back to the disk
    await harness.settled()
    assert harness.defines("format_report", "pkg/x.py")


async def test_a_secret_created_later_is_never_indexed(harness: Harness) -> None:
    (harness.root / "credentials.py").write_text(f"PASSWORD = '{SECRET}'\n", encoding="utf-8")
    harness.indexer.changed(harness.uri("credentials.py"))
    harness.open[harness.uri(".env.py")] = f"TOKEN = '{SECRET}'\n"
    harness.indexer.changed(harness.uri(".env.py"))
    await harness.settled()
    assert harness.uri("credentials.py") not in harness.indexer.index
    assert harness.uri(".env.py") not in harness.indexer.index


async def test_turning_the_index_off_empties_it(harness: Harness) -> None:
    harness.indexer.configure(False, Limits())
    assert len(harness.indexer.index) == 0
    harness.indexer.configure(True, Limits(max_files=2))
    await harness.settled()
    assert len(harness.indexer.index) == 2


async def test_stats_give_the_size_and_the_first_pass(harness: Harness) -> None:
    stats = harness.indexer.stats()
    assert stats["enabled"] is True and stats["indexing"] is False
    assert stats["files"] == 6 and stats["first_pass_files"] == 6
    assert isinstance(stats["first_pass_s"], float) and stats["queued"] == 0
    assert stats["definitions"] > 0 and stats["windows"] > 0 and stats["identifiers"] > 0
    harness.indexer.stop()
    stopped = harness.indexer.stats()
    assert stopped["files"] == stopped["definitions"] == stopped["windows"] == 0
    assert stopped["first_pass_s"] is None and stopped["enabled"] is False


async def test_the_first_pass_settles_the_heap_in_the_servers_process_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copilot_lsp.completion.workspace import Workspace
    from copilot_lsp.context import indexer as indexing

    settled: list[int] = []
    monkeypatch.setattr(indexing, "settle_heap", lambda: settled.append(1))
    write_package(tmp_path)
    made = Harness(tmp_path)
    made.indexer._freeze_heap = True
    made.indexer.start([tmp_path.as_uri()])
    await made.settled()
    first = len(settled)
    assert first >= 1  # once a batch of the first pass (6 files: one batch)
    (tmp_path / "pkg" / "later.py").write_text("def later_fn() -> None:\n    pass\n")
    made.indexer.changed(made.uri("pkg/later.py"))
    await made.settled()
    assert made.defines("later_fn", "pkg/later.py") and len(settled) == first
    made.indexer.close()
    assert Workspace().indexer._freeze_heap is True
    assert Workspace(lambda: ThreadPoolExecutor(1)).indexer._freeze_heap is False


async def test_a_deleted_folder_takes_its_files_out_of_the_index(harness: Harness) -> None:
    assert harness.defines("deep_value", "pkg/sub/deep.py")
    harness.indexer.deleted(harness.uri("pkg/sub"))  # one event for the folder
    assert not harness.defines("deep_value", "pkg/sub/deep.py")
    assert not harness.defines("sibling_function", "pkg/sub/sibling.py")
    assert harness.defines("compute_total", "pkg/mod.py")
    assert len(harness.indexer.index) == 3  # of 6: pkg/sub's three files left


@pytest.mark.parametrize("repository", [False, True])
async def test_a_changed_gitignore_applies_without_a_restart(
    harness: Harness, repository: bool
) -> None:
    if repository:
        git_init(harness.root)
        harness.indexer.start([harness.root.as_uri()])
        await harness.settled()
    gitignore = harness.root / ".gitignore"
    gitignore.write_text("pkg/sub/\n", encoding="utf-8")
    harness.indexer.rules_changed()
    await harness.settled()
    assert not harness.defines("deep_value", "pkg/sub/deep.py")
    assert harness.defines("compute_total", "pkg/mod.py")
    gitignore.write_text("pkg/x.py\n", encoding="utf-8")
    harness.indexer.rules_changed()
    await harness.settled()
    assert harness.defines("deep_value", "pkg/sub/deep.py")  # admitted again
    assert not harness.defines("format_report", "pkg/x.py")
    gitignore.unlink()
    harness.indexer.rules_changed()
    await harness.settled()
    assert harness.defines("format_report", "pkg/x.py")
    assert harness.uri(".env.py") not in harness.indexer.index  # secrets stay out


async def test_indexing_waits_while_a_completion_is_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer_module, "FOREGROUND_WAIT_S", 5.0)  # longer than the test waits
    write_package(tmp_path)
    made = Harness(tmp_path)
    indexer = made.indexer
    try:
        with indexer.foreground():
            indexer.start([tmp_path.as_uri()])
            await until(lambda: made.progress, what="the files discovered")
            await asyncio.sleep(0.3)  # time enough to index them all, had it not waited
            assert len(indexer.index) == 0  # nothing put while the keystroke is answered
        await made.settled()
        assert len(indexer.index) == 6
    finally:
        indexer.close()


async def test_a_completion_held_open_only_slows_indexing_down(tmp_path: Path) -> None:
    write_package(tmp_path)
    made = Harness(tmp_path)
    indexer = made.indexer
    try:
        with indexer.foreground():  # a stream that never ends: indexing still finishes
            indexer.start([tmp_path.as_uri()])
            await asyncio.sleep(0.05)
            await asyncio.wait_for(indexer.idle.wait(), 20)
            assert len(indexer.index) == 6
    finally:
        indexer.close()


async def test_added_and_removed_folders_change_the_index_without_a_restart(
    harness: Harness, tmp_path: Path
) -> None:
    other = tmp_path.parent / f"{tmp_path.name}-other"
    other.mkdir()
    (other / "extra.py").write_text("def extra_fn() -> None:\n    pass\n", encoding="utf-8")
    first = harness.uri("pkg/mod.py")
    put_before = harness.indexer.index.files[first]
    harness.progress.clear()
    harness.indexer.set_folders([tmp_path.as_uri(), other.as_uri() + "/"])
    await harness.settled()
    assert (other / "extra.py").as_uri() in harness.indexer.index.definitions("extra_fn")
    assert len(harness.indexer.index) == 7
    # The added folder's files are a pass of their own, with progress.
    assert harness.progress == [(0, 1, False), (1, 1, True)]
    assert harness.indexer.index.files[first] is put_before  # the first folder's not redone
    assert harness.indexer.locate((other / "extra.py").as_uri()) is not None

    harness.indexer.set_folders([other.as_uri()])
    await harness.settled()
    assert not harness.defines("compute_total", "pkg/mod.py")
    assert len(harness.indexer.index) == 1
    harness.indexer.set_folders([])
    assert len(harness.indexer.index) == 0 and harness.indexer.idle.is_set()


async def test_files_a_rediscovery_admits_are_a_pass_with_progress(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    gitignore = harness.root / ".gitignore"
    gitignore.write_text("pkg/\n", encoding="utf-8")
    harness.indexer.rules_changed()
    await harness.settled()
    assert len(harness.indexer.index) == 0
    first_pass = harness.indexer.stats()["first_pass_s"]
    harness.progress.clear()
    monkeypatch.setattr(indexer_module, "FOREGROUND_WAIT_S", 5.0)
    gitignore.unlink()
    with harness.indexer.foreground():  # holds the pass before its first batch
        harness.indexer.rules_changed()
        await until(lambda: harness.progress, what="the files admitted")
        assert harness.progress == [(0, 6, False)]
        assert harness.indexer.stats()["indexing"] is True
    await harness.settled()
    assert harness.progress[-1] == (6, 6, True)
    assert all(total == 6 for _, total, _ in harness.progress)
    stats = harness.indexer.stats()
    assert stats["indexing"] is False and stats["files"] == 6
    assert stats["first_pass_s"] == first_pass  # the first pass's figures stay its own
