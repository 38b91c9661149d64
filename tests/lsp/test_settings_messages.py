"""Settings mistakes reach the editor as one clear message each, never as a traceback, and
never cost the rest of the settings (the real server over stdio)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from copilot_lsp import paths
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.lspclient import server_session

pytestmark = pytest.mark.timeout(90)


async def test_a_broken_model_family_file_is_one_message_not_a_traceback(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(paths.configs_root(), configs)
    (configs / "models" / "smollm2.toml").write_text("fim = [unclosed\n", encoding="utf-8")
    env = {**isolated_env, "COPILOT_LSP_CONFIGS": str(configs)}
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["1"])
    try:
        async with server_session(env, engine.url, tmp_path / "state") as session:
            await session.initialize()
            uri = session.open("x = \n")
            for _ in range(2):
                assert await session.complete(uri, 0, 4) == []  # answered, not an error
            shown = [m.message for m in session.client.messages]
            broken = [m for m in shown if "smollm2.toml" in m]
            assert len(broken) == 1, shown
            assert "Traceback" not in broken[0] and "invalid model family file" in broken[0]
            assert session.client.messages[0].type == types.MessageType.Error
    finally:
        await engine.stop()


async def test_a_bad_settings_file_field_keeps_the_environments_engine(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["ok"])
    settings = tmp_path / "config" / "settings.toml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('[completion]\ndebounce_ms = "fast"\n', encoding="utf-8")
    env = {
        **isolated_env,
        "COPILOT_LSP_SETTINGS_FILE": str(settings),
        "COPILOT_LSP_ENGINE_URL": engine.url,
    }
    try:
        async with server_session(env, engine.url, tmp_path / "state") as session:
            await session.client.initialize_session(
                types.InitializeParams(capabilities=types.ClientCapabilities())
            )
            uri = session.open("x = \n")
            assert [i.insert_text for i in await session.complete(uri, 0, 4)] == ["ok"]
            assert (await session.stats())["engine"]["url"] == engine.url
            shown = [m.message for m in session.client.messages]
            [message] = [m for m in shown if "invalid settings" in m]
            assert "completion.debounce_ms" in message and str(settings) in message
    finally:
        await engine.stop()
