"""Where copilot-lsp keeps its files: XDG cache/state/config dirs, each overridable."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "copilot-lsp"


def _override(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """Models prepared for the embedded engine live here (large, re-creatable)."""
    return _override("COPILOT_LSP_CACHE_DIR") or Path(platformdirs.user_cache_dir(APP))


def state_dir() -> Path:
    """The engine state file and the per-completion latency log live here."""
    return _override("COPILOT_LSP_STATE_DIR") or Path(platformdirs.user_state_dir(APP))


def config_dir() -> Path:
    """The user's settings file (`settings.toml`) lives here."""
    return _override("COPILOT_LSP_CONFIG_DIR") or Path(platformdirs.user_config_dir(APP))


def evaluation_data() -> Path:
    """The evaluation tasks shipped in the package (SAFIM's Python subsets, read by `bench
    quality` and the tests); named here so that draft training can refuse them."""
    return Path(__file__).resolve().parent / "bench" / "quality" / "data"


def configs_root() -> Path:
    """The shipped `configs/` folder: the repository's in a checkout, package data in a wheel."""
    override = _override("COPILOT_LSP_CONFIGS")
    if override is not None:
        return override
    here = Path(__file__).resolve().parent
    checkout = here.parent.parent / "configs"
    if checkout.is_dir():
        return checkout
    return here / "_configs"
