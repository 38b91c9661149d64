"""Windowed acceptance from vLLM's cumulative spec-decode counters (engine/monitor.py)."""

from __future__ import annotations

import httpx
import pytest

from copilot_lsp.engine.metrics import SpecDecodeCounters
from copilot_lsp.engine.monitor import AcceptanceMonitor, Scrape, scrape, window_between


def counters(
    drafts: float, accepted: float, per_pos: list[float], k: int = 3
) -> SpecDecodeCounters:
    return SpecDecodeCounters(drafts, drafts * k, accepted, dict(enumerate(per_pos)))


def test_window_is_the_difference_of_two_scrapes() -> None:
    older = Scrape(10.0, counters(100, 150, [80, 50, 20]))
    newer = Scrape(40.0, counters(300, 510, [260, 170, 80]))
    window = window_between(older, newer)
    assert window.window_s == 30.0
    assert window.drafts == 200
    assert window.draft_tokens == 600
    assert window.accepted_tokens == 360
    assert window.acceptance_rate == pytest.approx(0.6)
    assert window.mean_accepted_length == pytest.approx(2.8)
    assert window.per_position == pytest.approx([0.9, 0.6, 0.3])


def test_idle_window_has_no_rate() -> None:
    same = Scrape(0.0, counters(5, 5, [5]))
    window = window_between(same, Scrape(5.0, same.counters))
    assert window.acceptance_rate is None
    assert window.mean_accepted_length is None


def test_old_scrapes_leave_the_window_but_one_baseline_stays() -> None:
    monitor = AcceptanceMonitor(window_s=30)
    assert monitor.window() is None
    for second, drafts, accepted in [(0, 0, 0), (10, 100, 300), (20, 200, 600), (50, 300, 600)]:
        monitor.observe(Scrape(second, counters(drafts, accepted, [accepted])))
    window = monitor.window()
    assert window is not None
    # Baseline is the scrape at t=20 (the last one at or before 50-30): all accepted before it.
    assert window.drafts == 100
    assert window.acceptance_rate == 0.0


def test_counter_reset_starts_the_window_over() -> None:
    monitor = AcceptanceMonitor(window_s=60)
    monitor.observe(Scrape(0, counters(1000, 2000, [900])))
    monitor.observe(Scrape(5, counters(1100, 2200, [990])))
    monitor.observe(Scrape(10, counters(10, 30, [10])))  # the engine restarted
    assert monitor.window() is None
    monitor.observe(Scrape(15, counters(20, 60, [20])))
    window = monitor.window()
    assert window is not None and window.acceptance_rate == 1.0


METRICS = """\
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 10.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 30.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 12.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 8.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 4.0
vllm:num_requests_running{engine="0",model_name="m"} 2.0
vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
"""


async def test_scrape_reads_counters_and_load() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(200, text=METRICS)
        return httpx.Response(404)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        result = await scrape(http, "http://e", clock=lambda: 7.0)
        assert result is not None
        assert result.at == 7.0
        assert result.running == 3.0
        assert result.counters.accepted_per_position == {0: 8.0, 1: 4.0}
        assert await scrape(http, "http://e/none") is None
