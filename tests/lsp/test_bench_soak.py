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
    # The soak's table: seconds, keystrokes, completions answered, RSS; the last row the end.
    minutes = rss["minutes"]
    assert all(row[0] >= 0 for row in minutes) and minutes[-1][1] == result["keystrokes"]
    assert [row[3] for row in minutes[:-1]] == rss["by_minute"]
    assert len(rss["samples"]) >= 3


def test_the_rss_slope_is_fitted_per_keystroke_after_the_warm_up() -> None:
    # 10 s of warm-up climbing 1 MiB a second, then 100 keystrokes and 50 KiB a second.
    samples = [(float(t), 100 * t, t, 70_000 + 1024 * t) for t in range(10)]
    samples += [(float(t), 100 * t, t, 80_000 + 50 * (t - 10)) for t in range(10, 40)]
    slope = load.rss_slope(samples, 10.0)
    assert slope["n"] == 30 and slope["keystrokes"] == 2900
    assert slope["kib_per_1000_keystrokes"] == 500.0 and slope["kib_per_minute"] == 3000.0
    assert load.rss_slope(samples[:12], 10.0)["kib_per_1000_keystrokes"] is None


# A short soak that fails on a leak. Slope of the server's RSS against keystrokes sent, fitted
# over the samples after WARMUP_S (tokenizer, grammars, HTTP client, the first syntax trees).
# Measured on the shared 2-core VM, 10 documents at 40 keys/s: healthy 0.5-1.0 KiB per
# keystroke this early (the allocator and the syntax trees settle while the documents grow;
# 0.13 over the 30-minute soak), 2.3-2.7 with the pygls request-table fix of 4b432d3
# reverted, 1.85 with a throwaway leak of 2 KiB kept per completion request. A leak under
# ~1 KiB per keystroke may pass; the 30-minute soak in docs/reliability.md is the finer check.
SOAK_S = 120.0
SOAK_RATE = 40.0
WARMUP_S = 40.0
MAX_KIB_PER_KEYSTROKE = 1.5


@pytest.mark.timeout(300)
async def test_a_short_soak_does_not_grow_per_keystroke(isolated_env: dict[str, str]) -> None:
    result = await load.run_load(
        duration_s=SOAK_S,
        rate=SOAK_RATE,
        documents=10,
        # 10 completions in the rolling window (the minimum): the timelines kept by id, up
        # to 4 windows, are full before the warm-up ends instead of growing through the test.
        options={"telemetry": {"enableLog": False, "window": 10}},
        env=isolated_env,
    )
    slope = load.rss_slope(result["rss_kib"]["samples"], WARMUP_S)
    print(f"short soak: {result['keystrokes']} keystrokes, RSS slope after warm-up {slope}")
    assert result["server_log_errors"] == 0
    # A loaded machine types slower; enough keystrokes after the warm-up for a slope.
    assert slope["keystrokes"] >= 1500, slope
    per_keystroke = slope["kib_per_1000_keystrokes"] / 1000.0
    assert per_keystroke < MAX_KIB_PER_KEYSTROKE, (
        f"the server's RSS grows {per_keystroke:.2f} KiB per keystroke after {WARMUP_S:.0f} s "
        f"of typing (bound {MAX_KIB_PER_KEYSTROKE}): a leak? {slope}, "
        f"RSS by 10 s: {result['rss_kib']['samples'][::10]}"
    )
