"""The scripted engine of the VS Code end-to-end run's next-edit scenario
(tests/fakes/nextedit_engine.py) against the real server over stdio: the rename the run types
gets the edit the run expects, and the completion prompts get what the run's tries expect."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from copilot_lsp.client.driver import plain
from copilot_lsp.lsp import methods
from tests.fakes.nextedit_engine import BODY, route
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

URI = "file:///work/rename.py"
# What the run's file reads once the user renamed the parameter (the use not yet).
RENAMED = "def scale(count, factor):\n    return x * factor\n\n\nprint(scale(2, 3))\n"
ON = {"nextEditSuggestions": {"enabled": True}}


async def next_edits(session: Session, text: str, character: int = 15) -> list[dict[str, Any]]:
    session.open(text, URI)
    params = {
        "textDocument": {"uri": URI, "version": 1},
        "position": {"line": 0, "character": character},
    }
    answer = await asyncio.wait_for(
        session.client.protocol.send_request_async(methods.INLINE_EDIT, params), 20
    )
    return list(plain(answer)["edits"])


async def test_the_renamed_parameter_gets_its_use_renamed(session: Session) -> None:
    await session.initialize(ON)
    session.engine.route = route
    (edit,) = await next_edits(session, RENAMED)
    assert edit["text"] == "count"
    assert edit["range"] == {
        "start": {"line": 1, "character": 11},
        "end": {"line": 1, "character": 12},
    }


async def test_the_second_parameter_is_annotated_after_the_cursor(session: Session) -> None:
    await session.initialize(ON)
    session.engine.route = route
    text = "def area(width: int, height):\n    return width * height\n"
    (edit,) = await next_edits(session, text, character=19)
    assert edit["text"] == ": int"
    position = {"line": 0, "character": 27}
    assert edit["range"] == {"start": position, "end": position}


async def test_a_window_without_the_rename_gets_no_edit(session: Session) -> None:
    await session.initialize(ON)
    session.engine.route = route
    assert await next_edits(session, RENAMED.replace("count", "x", 1)) == []
    assert len(session.engine.requests) == 1  # asked, and the unchanged window is no edit


async def test_completions_get_the_body_under_the_runs_headers_only(session: Session) -> None:
    await session.initialize(ON)
    session.engine.route = route
    header = "def scale_3(items: list[Item], factor: float) -> list[Item]:"
    session.open(f"import math\n\n\n{header}\n    ", URI)
    items = await session.complete(URI, 4, 4)

    (item,) = items
    assert item.insert_text == BODY
    # The rename's file: no ghost text to cover the next edit.
    session.open(RENAMED, "file:///work/other.py")
    assert await session.complete("file:///work/other.py", 0, 15) == []
