"""The latency benchmark drives the real server and reports per-stage percentiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.latency.report import render
from copilot_lsp.bench.latency.run import run_latency_bench
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

pytestmark = pytest.mark.timeout(60)


async def test_latency_bench_reports_cold_and_warm_completions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: dict[str, str]
) -> None:
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["\n    return", " n\n"], delay_s=0.01)
    for key, value in isolated_env.items():
        if key.startswith("COPILOT_LSP_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", engine.url)
    source = tmp_path / "f.py"
    text = "def f(n):\n    \n"
    try:
        report = await run_latency_bench(source, text, 1, 4, 4)
    finally:
        await engine.stop()
    assert report["count"] == 4 and len(report["timelines"]) == 4
    assert len(engine.requests) == 4
    assert report["first"]["outcome"] == "shown"
    assert report["stages"]["first_token"]["n"] == 3  # the cold one is reported apart
    assert report["distinct_texts"] == 1
    table = render(report)
    assert "first_token" in table and "cold first completion" in table
