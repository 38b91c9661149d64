"""The LSP server's engine is the router, rebuilt when the engine settings change."""

from __future__ import annotations

import pytest

from copilot_lsp.engine.router import Router
from copilot_lsp.lsp.server import CopilotServer


def test_engine_is_a_router_from_the_settings_and_stats_show_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COPILOT_LSP_STATE_DIR", "/nonexistent-copilot-lsp-state")
    server = CopilotServer()
    assert server.service.stats()["engine"]["routing"] is None
    server.layers.set_layer(
        "initializationOptions",
        {"engine": {"endpoints": ["http://a/v1", "http://b/v1"], "fallbackUrl": "http://p/v1"}},
    )
    router = server.service.engines.current()
    assert isinstance(router, Router)
    assert server.service.engines.current() is router  # same settings: same router, same monitors
    routing = server.service.stats()["engine"]["routing"]
    assert [e["url"] for e in routing["endpoints"]] == ["http://a/v1", "http://b/v1", "http://p/v1"]
    assert [e["role"] for e in routing["endpoints"]] == ["primary", "primary", "fallback"]
    assert routing["endpoints"][0]["health"]["threshold"] == 0.45
    assert routing["endpoints"][2]["health"] is None  # the fallback is never judged
    server.layers.set_layer("initializationOptions", {"engine": {"acceptanceThreshold": 0.3}})
    assert server.service.engines.current() is not router
    routing = server.service.stats()["engine"]["routing"]
    assert routing["endpoints"][0]["health"]["threshold"] == 0.3
