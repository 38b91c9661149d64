"""Shared fixtures: keep every test's files out of the user's state, cache and config dirs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def isolated_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment for a server process whose state/config live under tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_LSP_")}
    env["COPILOT_LSP_STATE_DIR"] = str(tmp_path / "state")
    env["COPILOT_LSP_CONFIG_DIR"] = str(tmp_path / "config")
    env["COPILOT_LSP_SETTINGS_FILE"] = str(tmp_path / "config" / "absent.toml")
    yield env
