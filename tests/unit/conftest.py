"""Fixtures the unit tests of more than one package share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No COPILOT_LSP_* from the caller's shell; the state folder under tmp_path; the settings
    file (returned, not yet written) a tmp path. A module whose every test reads the settings
    says `pytestmark = pytest.mark.usefixtures("clean_env")`."""
    for name in list(os.environ):
        if name.upper().startswith("COPILOT_LSP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COPILOT_LSP_STATE_DIR", str(tmp_path / "state"))
    settings = tmp_path / "settings.toml"
    monkeypatch.setenv("COPILOT_LSP_SETTINGS_FILE", str(settings))
    return settings
