"""The soak's figure: `bench load` keeps the server's RSS once a minute (here: once a second)."""

from __future__ import annotations

import pytest

from copilot_lsp.bench.load import run as load
from copilot_lsp.bench.load.report import render

pytestmark = pytest.mark.timeout(90)


async def test_rss_is_kept_per_minute_for_soaks(
    isolated_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load, "RSS_MINUTE_S", 1.0)  # a "minute" of one second
    result = await load.run_load(
        duration_s=3.5,
        rate=20.0,
        documents=2,
        options={"telemetry": {"enableLog": False}},
        env=isolated_env,
    )
    rss = result["rss_kib"]
    assert len(rss["by_minute"]) >= 3 and all(value > 0 for value in rss["by_minute"])
    assert rss["growth_after_first_minute"] == rss["end"] - rss["by_minute"][1]
    assert "RSS each minute" in render(result)
