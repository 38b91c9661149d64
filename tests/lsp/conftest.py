"""The real server over stdio (pytest-lsp), against the scripted engine in tests/fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio

from copilot_lsp.testing.fake_engine import FakeEngine
from tests.lspclient import Session, server_session


@dataclass
class FakeSession(Session):
    engine: FakeEngine


@asynccontextmanager
async def fake_session(
    env: dict[str, str], tmp_path: Path, args: Sequence[str] = ()
) -> AsyncIterator[FakeSession]:
    """The server (with extra command-line `args`, environment `env`) against a scripted
    engine of its own, its state under tmp_path; both stopped afterwards."""
    engine = await FakeEngine().start()
    try:
        async with server_session(env, engine.url, tmp_path / "state", args) as base:
            yield FakeSession(base.client, base.engine_url, base.state_dir, engine)
    finally:
        await engine.stop()


@pytest_asyncio.fixture
async def session(isolated_env: dict[str, str], tmp_path: Path) -> AsyncIterator[FakeSession]:
    async with fake_session(isolated_env, tmp_path) as session:
        yield session
