"""The prefix warm-up over LSP: when a keystroke's request was closed before its first token,
the head of its prompt (the code from other files) goes to the engine alone, one token, while
no completion is open; the next keystroke's prompt starts with exactly that text, so vLLM's
prefix cache serves it. Warm-ups are counted apart from completions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession, fake_session

pytestmark = pytest.mark.timeout(120)

HELPERS = (
    "def compute_total(items: list[int], tax: float = 0.2) -> float:\n    return 0.0\n\n\n"
    "def format_amount(value: float, currency: str = 'EUR', digits: int = 2) -> str:\n"
    "    return ''\n\n\n"
    "def parse_amount(text: str, currency: str = 'EUR') -> float:\n    return 0.0\n"
)
MAIN = "import pkg.helpers as helpers\n\n\ndef main() -> None:\n    total = helpers.\n"
LINE, COLUMN = 4, len("    total = helpers.")


@pytest_asyncio.fixture
async def workspace(isolated_env: dict[str, str], tmp_path: Path) -> AsyncIterator[FakeSession]:
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    (root / "main.py").write_text(MAIN)
    async with fake_session(isolated_env, tmp_path) as session:
        session.root = root  # type: ignore[attr-defined]
        yield session


async def start(session: FakeSession, warm: bool) -> str:
    root: Path = session.root  # type: ignore[attr-defined]
    await session.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            initialization_options={
                "engine": {"url": session.engine_url},
                # Automatic requests wait this long: the warm-up goes out meanwhile.
                "completion": {"debounceMs": 300},
                "prompt": {"snippetDeadlineMs": 500},
                "context": {"workspace": {"warmPrefix": warm}},
            },
        )
    )
    index: dict[str, object] = {}

    async def indexed() -> bool:
        index.update((await session.stats())["index"])
        return index["first_pass_files"] == 3

    for _ in range(300):  # the index's first pass, before the document opens
        if await indexed():
            break
        await asyncio.sleep(0.1)
    assert index["first_pass_files"] == 3, index
    # No completion before the test's: a request answered with this head would have warmed it.
    uri = session.open(MAIN, uri=(root / "main.py").as_uri())
    return uri


async def type_after_a_closed_request(session: FakeSession, uri: str) -> int:
    """A keystroke's request held before its first token, then the next keystroke (which
    closes it) and its request answered; returns how many engine requests came before."""
    released = asyncio.Event()
    session.engine.replies = [Reply(chunks=["compute_total([])"], gate=lambda _: released.wait())]
    session.engine.default = Reply(chunks=["compute_total([])"])
    before = len(session.engine.requests)
    first = session.request(uri, LINE, COLUMN, automatic=True)
    await until(lambda: len(session.engine.requests) > before, within=20, what="the request")
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(LINE, COLUMN), types.Position(LINE, COLUMN)),
                    text="c",
                )
            ],
        )
    )
    second = session.request(uri, LINE, COLUMN + 1, automatic=True)
    await asyncio.wait_for(second, 20)
    released.set()
    await asyncio.wait_for(first, 20)
    return before


async def test_the_head_of_a_closed_request_is_warmed_and_the_next_prompt_starts_with_it(
    workspace: FakeSession,
) -> None:
    session = workspace
    uri = await start(session, warm=True)
    outcomes_before = sum((await session.stats())["outcomes"].values())
    before = await type_after_a_closed_request(session, uri)

    sent = session.engine.requests[before:]
    bodies = [request.body for request in sent]
    assert [body["max_tokens"] == 1 for body in bodies] == [False, True, False]
    closed, warm, answered = (str(body["prompt"]) for body in bodies)
    assert "pkg/helpers.py" in warm and "def compute_total(" in warm
    assert "def main" not in warm  # the current file's code is not part of the head
    assert closed.startswith(warm) and answered.startswith(warm)
    assert len(warm) < len(answered)
    assert sent[0].disconnected  # the keystroke closed the first request

    stats = await session.stats()
    counts = stats["engine"]["prefix_warm_ups"]
    assert counts["sent"] == 1 and counts["done"] + counts["cancelled"] == 1
    # Two completions (the closed one and the answered one); the warm-up is not one.
    assert sum(stats["outcomes"].values()) == outcomes_before + 2


async def test_off_no_warm_up_is_sent(workspace: FakeSession) -> None:
    session = workspace
    uri = await start(session, warm=False)
    before = await type_after_a_closed_request(session, uri)
    assert [r.body["max_tokens"] == 1 for r in session.engine.requests[before:]] == [False, False]
    assert (await session.stats())["engine"]["prefix_warm_ups"]["sent"] == 0
