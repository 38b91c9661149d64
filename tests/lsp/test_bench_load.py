"""A short run of the load generator (the full one is `copilot-lsp bench load`)."""

from __future__ import annotations

import pytest

from copilot_lsp.bench.load.report import render
from copilot_lsp.bench.load.run import run_load, typing_schedule

pytestmark = pytest.mark.timeout(90)


def test_typing_schedule_has_the_rate_bursts_and_documents() -> None:
    keys = typing_schedule(60.0, 50.0, 10)
    assert 2400 < len(keys) < 3600
    assert {key.document for key in keys} == set(range(10))
    per_second = [sum(1 for k in keys if int(k.at_s) == s) for s in range(60)]
    assert max(per_second) > 2 * min(per_second)  # bursts and calm stretches
    assert keys == typing_schedule(60.0, 50.0, 10)  # seeded: repeatable


async def test_a_short_load_run_reports_every_figure(isolated_env: dict[str, str]) -> None:
    result = await run_load(
        duration_s=2.0,
        rate=50.0,
        documents=4,
        options={"telemetry": {"enableLog": False}, "completion": {"maxInflight": 2}},
        env=isolated_env,
    )
    assert result["keystrokes"] > 40
    assert 0 < result["engine_requests"] <= result["keystrokes"]
    assert result["peak_inflight_server_side"] <= 2
    assert result["cheap_request"]["n"] > 0 and result["cheap_request"]["p99_ms"] is not None
    assert result["rss_kib"]["start"] > 0
    assert result["server_log_errors"] == 0
    assert "per keystroke" in render(result)
