"""`complete` and `engine status` against a scripted engine, as a user runs them: exit status
per outcome, the server's own messages on stderr, and the engine the server would use."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from copilot_lsp.engine.state import EngineState, write_state
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

pytestmark = pytest.mark.timeout(120)

SOURCE = "def area(width, height):\n    return \n"


async def cli(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "copilot_lsp",
        *argv,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 100)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "area.py"
    path.write_text(SOURCE)
    return path


async def complete(env: dict[str, str], source: Path) -> tuple[int, str, str]:
    return await cli(env, "complete", str(source), "--line", "2", "--col", "12", "--timeout", "60")


async def test_complete_exit_status_tells_suggestion_from_nothing_from_no_engine(
    isolated_env: dict[str, str], source: Path
) -> None:
    engine = await FakeEngine().start()
    env = {**isolated_env, "COPILOT_LSP_ENGINE_URL": engine.url}
    try:
        engine.default = Reply(chunks=["width * height"])
        status, out, err = await complete(env, source)
        assert status == 0, err
        assert "width * height" in out
        engine.default = Reply(chunks=[])
        status, out, err = await complete(env, source)
        assert status == 1, err
        assert "(no suggestion)" in out
    finally:
        await engine.stop()
    status, out, err = await complete(env, source)  # the engine is gone now
    assert status == 3
    assert "completions are paused" in err and "copilot-lsp engine up" in err
    assert "window/showMessage" not in err  # pygls' "unknown method" warning is gone
    status, out, err = await cli(env, "complete", str(source), "--line", "9", "--col", "1")
    assert status == 2 and "past the end" in err


async def test_complete_prints_the_settings_messages_and_json_keeps_them(
    isolated_env: dict[str, str], source: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text('[completion]\ndebounce_ms = "fast"\n[engine]\nulr = "x"\n')
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["width * height"])
    env = {
        **isolated_env,
        "COPILOT_LSP_ENGINE_URL": engine.url,
        "COPILOT_LSP_SETTINGS_FILE": str(settings),
    }
    try:
        status, out, err = await cli(
            env, "complete", str(source), "--line", "2", "--col", "12", "--json"
        )
    finally:
        await engine.stop()
    assert status == 0, err
    assert "completion.debounce_ms" in err and "did you mean `engine.url`" in err
    report = json.loads(out)
    assert report["text"] == "width * height" and report["exit_status"] == 0
    assert any("completion.debounce_ms" in m for m in report["messages"])


async def test_engine_status_reports_the_engine_the_server_would_use(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    engine = await FakeEngine().start()
    engine.models = ["qwen2.5-coder-1.5b"]
    engine.tokenize = lambda text: 1 if text.startswith("<|") else 3
    settings = tmp_path / "settings.toml"
    try:
        env = {**isolated_env, "COPILOT_LSP_ENGINE_URL": engine.url}
        status, out, err = await cli(env, "engine", "status", "--json")
        assert status == 0, err
        report = json.loads(out)
        assert report["url"] == engine.url and report["healthy"] is True
        assert report["source"] == "COPILOT_LSP_ENGINE_URL"
        assert report["started_by_engine_up"] is False
        assert report["model"] == "qwen2.5-coder-1.5b"
        assert report["prompt"]["family"] == "qwen2.5-coder"
        assert report["prompt"]["origin"] == "served model"

        settings.write_text(f'[engine]\nurl = "{engine.url}"\n[prompt]\nfamily = "starcoder2"\n')
        env = {**isolated_env, "COPILOT_LSP_SETTINGS_FILE": str(settings)}
        status, out, err = await cli(env, "engine", "status")
        assert status == 0, err
        assert f"healthy at {engine.url}" in out
        assert f"from:    engine.url in {settings}" in out
        assert "started by `copilot-lsp engine up`: no" in out
        assert "prompt:  family starcoder2 (set by prompt.family)" in out

        state_dir = Path(isolated_env["COPILOT_LSP_STATE_DIR"])
        _write_state(state_dir, engine.url)
        status, out, err = await cli(isolated_env, "engine", "status", "--json")
        report = json.loads(out)
        assert status == 0, err
        assert report["started_by_engine_up"] is True and report["running"] is True
        assert report["source"] == "the embedded engine (`copilot-lsp engine up`)"
        assert report["profile"] == "local-cpu"
    finally:
        await engine.stop()
    status, out, err = await cli(isolated_env, "engine", "status")
    assert status == 3
    assert "NOT reachable" in out and "started by `copilot-lsp engine up`: profile" in out


def _write_state(state_dir: Path, url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    state = EngineState(
        pid=os.getpid(),  # alive for as long as the test runs
        port=port,
        url=url,
        profile="local-cpu",
        model="smollm2-135m",
        log_path=str(state_dir / "engine.log"),
        started_at=0.0,
    )
    write_state(state, state_dir / "engine.json")
