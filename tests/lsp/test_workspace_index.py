"""The workspace index over LSP: a file that is not open reaches the prompt, the first pass is
reported as work-done progress, watched-file events and saves update it, secrets never leave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession, fake_session

pytestmark = pytest.mark.timeout(120)

SECRET = "HUNTER2_NEVER_SENT"
KEY = "sk-proj-" + "Q7x" * 10
"""A key written in a tracked source file: indexed, and redacted on its way to a prompt."""
HELPERS = (
    f'OPENAI_API_KEY = "{KEY}"\n\n\n'
    "def compute_total(items: list[int], tax: float = 0.2) -> float:\n    return 0.0\n"
)
MAIN = "import pkg.helpers as helpers\n\n\ndef main() -> None:\n    total = helpers.\n"


@pytest_asyncio.fixture
async def workspace_session(
    isolated_env: dict[str, str], tmp_path: Path
) -> AsyncIterator[tuple[FakeSession, Path, Path]]:
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    (root / "main.py").write_text(MAIN)
    (root / ".env").write_text(f"API_TOKEN={SECRET}\n")
    (root / ".env.py").write_text(f"API_TOKEN = '{SECRET}'\n")
    (root / "credentials.py").write_text(f"def {SECRET}_login() -> None:\n    pass\n")
    log = tmp_path / "server.log"
    async with fake_session(isolated_env, tmp_path, ["-vv", "--log-file", str(log)]) as session:
        yield session, root, log


async def start(session: FakeSession, root: Path) -> list[types.RegistrationParams]:
    registrations: list[types.RegistrationParams] = []

    @session.client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.append(params)

    capabilities = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            )
        ),
    )
    await session.client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            initialization_options={
                "engine": {"url": session.engine_url},
                "completion": {"debounceMs": 0},
                "prompt": {"snippetDeadlineMs": 500},
            },
        )
    )
    return registrations


def progress_ends(session: FakeSession) -> list[Any]:
    return [
        value
        for values in session.client.progress_reports.values()
        for value in values
        if isinstance(value, types.WorkDoneProgressEnd)
    ]


async def test_a_module_that_is_not_open_reaches_the_prompt_and_secrets_never_do(
    workspace_session: tuple[FakeSession, Path, Path],
) -> None:
    session, root, log = workspace_session
    session.engine.default = Reply(chunks=["compute_total([1, 2])"])
    registrations = await start(session, root)
    await until(lambda: progress_ends(session), within=60, what="the index's first pass")
    reports = next(iter(session.client.progress_reports.values()))
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert "of 3 files" in (reports[0].message or "")  # pkg/__init__, pkg/helpers, main
    await until(lambda: registrations, what="the file watchers' registration")
    watchers = registrations[0].registrations[0]
    assert watchers.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES

    uri = session.open(MAIN, uri=(root / "main.py").as_uri())
    items = await session.complete(uri, 4, len("    total = helpers."))
    assert [item.insert_text for item in items] == ["compute_total([1, 2])"]
    prompt = session.engine.requests[-1].body["prompt"]
    assert "def compute_total(items: list[int], tax: float = 0.2) -> float: ..." in prompt
    assert "pkg/helpers.py" in prompt
    assert 'OPENAI_API_KEY = "<redacted>"' in prompt  # the module's API, without the key

    await session.complete(uri, 4, len("    total = helpers."))  # the log has run a while
    for request in session.engine.requests:
        assert SECRET not in str(request.body) and KEY not in str(request.body)
    state = session.state_dir
    written = "".join(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file())
    assert SECRET not in written
    assert log.exists() and SECRET not in log.read_text(errors="replace")


async def test_watched_file_events_and_saves_update_the_index(
    workspace_session: tuple[FakeSession, Path, Path],
) -> None:
    session, root, _ = workspace_session
    session.engine.default = Reply(chunks=["x"])
    await start(session, root)
    await until(lambda: progress_ends(session), within=60, what="the index's first pass")
    uri = session.open(MAIN, uri=(root / "main.py").as_uri())

    (root / "pkg" / "helpers.py").write_text(
        "def renamed_total(values: tuple[int, ...]) -> int:\n    return 0\n"
    )
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent((root / "pkg" / "helpers.py").as_uri(), types.FileChangeType.Changed)]
        )
    )

    async def prompt_on_new_lines(line: int, text: str) -> str:
        """Insert `text` (whole lines) at `line`, complete at the end of its last line."""
        at = types.Range(types.Position(line, 0), types.Position(line, 0))
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=line + 10, uri=uri),
                [types.TextDocumentContentChangePartial(range=at, text=text)],
            )
        )
        lines = text.split("\n")[:-1]
        await session.complete(uri, line + len(lines) - 1, len(lines[-1]))
        return str(session.engine.requests[-1].body["prompt"])

    await asyncio.sleep(1.0)  # the indexing process reads the file
    prompt = await prompt_on_new_lines(5, "    helpers.\n")
    assert "def renamed_total(values: tuple[int, ...]) -> int: ..." in prompt
    assert "compute_total" not in prompt

    (root / "pkg" / "saved.py").write_text(
        "def saved_function(flag: bool) -> str:\n    return ''\n"
    )
    # Saved by another tool the editor follows: no watcher event, only didSave.
    saved_uri = (root / "pkg" / "saved.py").as_uri()
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(saved_uri))
    )
    await asyncio.sleep(1.0)
    prompt = await prompt_on_new_lines(6, "    value = saved_function(True)\n    x = \n")
    assert "def saved_function(flag: bool) -> str: ..." in prompt


async def test_a_gitignore_change_and_a_deleted_folder_apply_without_a_restart(
    workspace_session: tuple[FakeSession, Path, Path],
) -> None:
    session, root, _ = workspace_session
    session.engine.default = Reply(chunks=["x"])
    registrations = await start(session, root)
    await until(lambda: progress_ends(session), within=60, what="the index's first pass")
    await until(lambda: registrations, what="the file watchers' registration")
    options = registrations[0].registrations[0].register_options
    assert isinstance(options, dict)  # as it came over the wire
    globs = [watcher["globPattern"] for watcher in options["watchers"]]
    assert "**/.gitignore" in globs and "**/*" in globs
    uri = session.open(MAIN, uri=(root / "main.py").as_uri())

    async def files() -> int:
        return int((await session.stats())["index"]["files"])

    assert await files() == 3
    (root / ".gitignore").write_text("pkg/helpers.py\n")
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent((root / ".gitignore").as_uri(), types.FileChangeType.Created)]
        )
    )
    for _ in range(100):
        if await files() == 2:
            break
        await asyncio.sleep(0.1)
    at = types.Range(types.Position(5, 0), types.Position(5, 0))
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangePartial(range=at, text="    helpers.\n")],
        )
    )
    await session.complete(uri, 5, len("    helpers."))
    assert "compute_total" not in str(session.engine.requests[-1].body["prompt"])
    assert await files() == 2

    (root / "pkg" / "__init__.py").unlink()
    (root / "pkg" / "helpers.py").unlink()
    (root / "pkg").rmdir()
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent((root / "pkg").as_uri(), types.FileChangeType.Deleted)]
        )
    )
    for _ in range(100):
        if await files() == 1:
            break
        await asyncio.sleep(0.1)
    assert await files() == 1  # main.py only


async def test_a_workspace_folder_added_and_removed_is_indexed_and_dropped(
    workspace_session: tuple[FakeSession, Path, Path], tmp_path: Path
) -> None:
    session, root, _ = workspace_session
    session.engine.default = Reply(chunks=["x"])
    await start(session, root)
    await until(lambda: progress_ends(session), within=60, what="the index's first pass")
    other = tmp_path / "tools-repo"
    (other / "toolkit").mkdir(parents=True)
    (other / "toolkit" / "__init__.py").write_text("")
    (other / "toolkit" / "shapes.py").write_text(
        "def polygon_area(points: list) -> float:\n    ...\n"
    )

    async def files() -> int:
        return int((await session.stats())["index"]["files"])

    folder = types.WorkspaceFolder(uri=other.as_uri(), name="tools-repo")
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent([folder], []))
    )
    for _ in range(100):
        if await files() == 5:
            break
        await asyncio.sleep(0.1)
    assert await files() == 5  # main.py, pkg/ (2), toolkit/ (2)
    # The added folder's files show as indexing progress of their own.
    await until(lambda: len(progress_ends(session)) == 2, what="the added folder's progress")
    assert len(session.client.progress_reports) == 2
    begin, *_, end = list(session.client.progress_reports.values())[1]
    assert isinstance(begin, types.WorkDoneProgressBegin) and "of 2 files" in (begin.message or "")
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "indexed 2 files"
    text = "import toolkit.shapes as shapes\n\n\ndef main() -> None:\n    area = shapes.\n"
    uri = session.open(text, uri=(root / "main.py").as_uri())
    await session.complete(uri, 4, len("    area = shapes."))
    assert (
        "def polygon_area(points: list) -> float: ..." in session.engine.requests[-1].body["prompt"]
    )

    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent([], [folder]))
    )
    for _ in range(100):
        if await files() == 3:
            break
        await asyncio.sleep(0.1)
    assert await files() == 3


async def test_after_a_module_alias_the_engine_is_held_to_that_modules_names(
    workspace_session: tuple[FakeSession, Path, Path],
) -> None:
    session, root, _ = workspace_session
    session.engine.default = Reply(chunks=["compute_total([1, 2])"])
    await start(session, root)
    await until(lambda: progress_ends(session), within=60, what="the index's first pass")
    uri = session.open(MAIN, uri=(root / "main.py").as_uri())
    await session.complete(uri, 4, len("    total = helpers."))
    pattern = session.engine.requests[-1].body["structured_outputs"]["regex"]
    assert pattern.startswith("(?:") and "|compute_total)" in pattern
    assert "OPENAI_API_KEY" in pattern and KEY not in pattern  # names, never values

    typed = session.open(
        MAIN.replace("helpers.\n", "helpers.comp\n"), uri=(root / "typed.py").as_uri()
    )
    await session.complete(typed, 4, len("    total = helpers.comp"))
    pattern = session.engine.requests[-1].body["structured_outputs"]["regex"]
    assert pattern.startswith("(?:ute_total)")

    rebound = MAIN.replace("    total =", "    helpers = load()\n    total =")
    other = session.open(rebound, uri=(root / "rebound.py").as_uri())
    await session.complete(other, 5, len("    total = helpers."))
    assert "structured_outputs" not in session.engine.requests[-1].body  # not the module now
