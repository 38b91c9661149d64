"""Which engine URL to use when the settings leave it open."""

from __future__ import annotations

from copilot_lsp.engine.state import read_state
from copilot_lsp.settings import DEFAULT_ENGINE_URL


def resolve_engine_url(configured: str | None) -> str:
    """The configured URL, else the embedded engine's from `engine up`, else the default."""
    if configured:
        return configured.rstrip("/")
    state = read_state()
    if state is not None:
        return state.url
    return DEFAULT_ENGINE_URL
