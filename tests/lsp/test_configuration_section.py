"""The settings section is `copilotLsp` (as in VS Code); the old `copilot` still works, once
with a deprecation warning, and never wins over `copilotLsp`."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pytest_lsp import client_capabilities

from copilot_lsp.testing.fake_engine import Reply
from tests.lsp.conftest import FakeSession as Session

EDITOR = "visual-studio-code@v1.65.2"  # asks for workspace/configuration


def deprecations(session: Session) -> list[str]:
    return [
        m.message
        for m in session.client.messages
        if m.type == types.MessageType.Warning and "deprecated" in m.message
    ]


async def max_tokens_becomes(session: Session, uri: str, wanted: int) -> int:
    """Complete until the engine sees `wanted` as max_tokens (settings land asynchronously)."""
    for _ in range(50):
        await session.complete(uri, 0, 4)
        seen = int(session.engine.requests[-1].body["max_tokens"])
        if seen == wanted:
            return seen
        await asyncio.sleep(0.05)
    return seen


async def test_section_copilot_lsp_is_pulled_without_a_warning(session: Session) -> None:
    session.client.set_configuration(
        {"completion": {"singleLineMaxTokens": 7}}, section="copilotLsp"
    )
    await session.initialize(capabilities=client_capabilities(EDITOR))
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    assert await max_tokens_becomes(session, uri, 7) == 7
    assert deprecations(session) == []


async def test_old_section_copilot_still_applies_and_warns_once(session: Session) -> None:
    session.client.set_configuration({"completion": {"singleLineMaxTokens": 6}}, section="copilot")
    await session.initialize(capabilities=client_capabilities(EDITOR))
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    assert await max_tokens_becomes(session, uri, 6) == 6
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"copilot": {"completion": {"singleLineMaxTokens": 5}}}
        )
    )
    assert await max_tokens_becomes(session, uri, 5) == 5
    (message,) = deprecations(session)  # pulled and pushed: one warning
    assert "`copilot`" in message and "`copilotLsp`" in message


async def test_copilot_lsp_wins_over_the_old_section(session: Session) -> None:
    session.client.set_configuration({"completion": {"singleLineMaxTokens": 6}}, section="copilot")
    session.client.set_configuration(
        {"completion": {"singleLineMaxTokens": 7}}, section="copilotLsp"
    )
    await session.initialize(capabilities=client_capabilities(EDITOR))
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    assert await max_tokens_becomes(session, uri, 7) == 7
    assert deprecations(session) == []


async def test_pushed_copilot_lsp_settings_apply(session: Session) -> None:
    await session.initialize()
    session.engine.default = Reply(chunks=["1"])
    uri = session.open("x = \n")
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"copilotLsp": {"completion": {"singleLineMaxTokens": 4}}}
        )
    )
    assert await max_tokens_becomes(session, uri, 4) == 4
    assert deprecations(session) == []
