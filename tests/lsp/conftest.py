"""The real server over stdio (pytest-lsp), against the scripted engine in tests/fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio

from copilot_lsp.testing.fake_engine import FakeEngine
from tests.lspclient import Session, server_session


@dataclass
class FakeSession(Session):
    engine: FakeEngine | None = None


@pytest_asyncio.fixture
async def session(isolated_env: dict[str, str], tmp_path: Path) -> AsyncIterator[FakeSession]:
    engine = await FakeEngine().start()
    try:
        async with server_session(isolated_env, engine.url, tmp_path / "state") as base:
            yield FakeSession(base.client, base.engine_url, base.state_dir, engine)
    finally:
        await engine.stop()
