"""Each speculative method is judged by the signal that fits it (engine/health.py), at the
threshold its profile carries: scripted /metrics behind the real Router (tests/fakes).

The readings replay what issue 30 saw: suffix decoding proposing up to 16 tokens on new text
read an acceptance rate of 0.05 while it was the fastest method; judged as a learned draft it
failed over, judged by tokens per step it does not.
"""

from __future__ import annotations

import logging

import pytest

from copilot_lsp.engine.health import HealthRule, Judgement, Recorded, judge
from copilot_lsp.settings import EngineSettings
from tests.fakes.speculating import Engine, Pool

SUFFIX = Recorded("local-cpu-suffix", "suffix", HealthRule("mean_accepted_length", 1.2, 1.45))
EAGLE = Recorded("local-cpu", "eagle", HealthRule("acceptance_rate", 0.08, 0.18))


def pool_judged_by(judgement: Judgement) -> tuple[Pool, Engine]:
    spec = Engine("spec")
    return Pool({"spec": spec}, ["spec"], judgements=[judgement]), spec


def new_text(spec: Engine) -> None:
    """Suffix decoding on first sight of new text: 16 tokens proposed, one of them kept."""
    spec.speculate(30, proposed=16, accepted=1)


async def test_suffix_decoding_on_new_text_is_judged_by_tokens_per_step_and_stays() -> None:
    pool, spec = pool_judged_by(judge(EngineSettings(), SUFFIX))
    await pool.tick()
    for _ in range(8):
        await pool.tick(traffic=lambda: new_text(spec))
    health = pool.primary()["health"]
    assert isinstance(health, dict)
    assert health["read"] is True and health["value"] == pytest.approx(2.0)
    assert health["readings"] == 8  # every window after the first scrape counted
    assert (health["signal"], health["threshold"], health["method"]) == (
        "mean_accepted_length",
        1.2,
        "suffix",
    )
    acceptance = pool.primary()["acceptance"]
    assert isinstance(acceptance, dict) and acceptance["acceptance_rate"] == 0.0625
    assert await pool.complete() == "spec"


async def test_the_same_traffic_judged_by_acceptance_rate_fails_over() -> None:
    """What every engine got before: the seed's 45% rule, still what an engine of unknown
    method gets (engine.speculativeMethod unset, not the embedded engine)."""
    pool, spec = pool_judged_by(judge(EngineSettings(), None))
    await pool.tick()
    for _ in range(3):
        await pool.tick(traffic=lambda: new_text(spec))
    assert await pool.complete() == "plain"


async def test_a_team_engine_named_suffix_gets_the_built_in_lookup_rule() -> None:
    judgement = judge(EngineSettings(speculative_method="suffix"), None)
    assert judgement.rule == HealthRule("mean_accepted_length", 1.10, 1.35)
    assert judgement.source == "engine.speculativeMethod"
    pool, spec = pool_judged_by(judgement)
    await pool.tick()
    for _ in range(5):
        await pool.tick(traffic=lambda: new_text(spec))
    assert await pool.complete() == "spec"


async def test_useless_speculation_fails_over_then_comes_back_when_it_pays() -> None:
    pool, spec = pool_judged_by(judge(EngineSettings(), SUFFIX))
    await pool.tick()
    for reading in range(3):
        assert await pool.complete() == "spec", f"failed over after {reading} low readings"
        await pool.tick(traffic=lambda: spec.speculate(40, proposed=8, accepted=0))
    assert await pool.complete() == "plain"
    for reading in range(3):
        assert await pool.complete() == "plain", f"back after {reading} good readings"
        await pool.tick(30.0, traffic=lambda: spec.speculate(40, proposed=8, accepted=2))
    assert await pool.complete() == "spec"


async def test_the_embedded_eagle_head_is_held_to_its_profiles_threshold() -> None:
    """0.17 is a healthy window of the shipped head on editing traffic; 0.00 a head trained
    for another target. A head of unknown quality is held to the seed's 0.45."""

    def hard_code(spec: Engine) -> None:
        spec.speculate(10, proposed=3, accepted=1)
        spec.speculate(10, proposed=3, accepted=0)

    pool, spec = pool_judged_by(judge(EngineSettings(), EAGLE))
    await pool.tick()
    for _ in range(6):
        await pool.tick(traffic=lambda: hard_code(spec))
    assert pool.primary()["degraded"] is False and await pool.complete() == "spec"
    for _ in range(3):  # each reading's 60-s window holds only the useless head's drafts
        await pool.tick(60.0, traffic=lambda: spec.speculate(40, proposed=3, accepted=0))
    assert await pool.complete() == "plain"

    unknown, other = pool_judged_by(judge(EngineSettings(), None))
    await unknown.tick()
    for _ in range(3):
        await unknown.tick(traffic=lambda: hard_code(other))
    assert await unknown.complete() == "plain"


@pytest.mark.parametrize(
    ("method", "signal", "threshold", "recovery"),
    [
        ("eagle", "acceptance_rate", 0.45, 0.55),
        ("eagle3", "acceptance_rate", 0.45, 0.55),
        ("medusa", "acceptance_rate", 0.45, 0.55),
        ("draft_model", "acceptance_rate", 0.45, 0.55),
        ("ngram", "mean_accepted_length", 1.10, 1.35),
        ("suffix", "mean_accepted_length", 1.10, 1.35),
    ],
)
def test_the_built_in_rule_of_each_method(
    method: str, signal: str, threshold: float, recovery: float
) -> None:
    judgement = judge(EngineSettings(speculative_method=method), None)  # type: ignore[arg-type]
    assert judgement.rule == HealthRule(signal, threshold, recovery)  # type: ignore[arg-type]


def test_settings_override_the_profiles_threshold_for_their_signal_only() -> None:
    options = EngineSettings(min_accepted_length=1.5, acceptance_threshold=0.3)
    judgement = judge(options, SUFFIX)
    assert judgement.rule == HealthRule("mean_accepted_length", 1.5, 1.75)
    assert "engine.minAcceptedLength" in judgement.source
    assert judge(EngineSettings(acceptance_threshold=0.3), SUFFIX).rule == SUFFIX.rule
    recovered = judge(EngineSettings(recovery_accepted_length=1.8), SUFFIX)
    assert recovered.rule == HealthRule("mean_accepted_length", 1.2, 1.8)


def test_a_method_setting_that_contradicts_the_profile_drops_the_profiles_threshold() -> None:
    judgement = judge(EngineSettings(speculative_method="eagle"), SUFFIX)
    assert judgement.method == "eagle"
    assert judgement.rule == HealthRule("acceptance_rate", 0.45, 0.55)


def test_a_plain_engine_is_never_judged() -> None:
    plain = Recorded("local-cpu-baseline", "none", None)
    assert judge(EngineSettings(), plain).rule is None
    assert judge(EngineSettings(speculative_method="none"), None).rule is None


async def test_a_plain_primary_does_not_fail_over_whatever_its_counters() -> None:
    pool, spec = pool_judged_by(judge(EngineSettings(speculative_method="none"), None))
    await pool.tick()
    for _ in range(4):
        await pool.tick(traffic=lambda: spec.speculate(40, proposed=3, accepted=0))
    assert pool.primary()["health"] == {
        "method": "none",
        "signal": None,
        "source": "engine.speculativeMethod",
        "problem": None,
        "read": False,
        "unread_reason": None,
        "value": None,
        "readings": 0,
    }
    assert await pool.complete() == "spec"


def test_a_state_file_from_before_the_method_was_recorded_says_how_to_fix_it() -> None:
    judgement = judge(EngineSettings(), Recorded("local-cpu-suffix", None, None))
    assert judgement.method is None and judgement.rule == HealthRule("acceptance_rate", 0.45, 0.55)
    assert "restart it with `engine up`" in judgement.source


def test_a_recovery_below_the_profiles_threshold_is_refused_out_loud(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Valid as a setting (no acceptanceThreshold beside it), contradicted by the profile:
    not applied, and said in the log and in copilot/stats, never silently raised."""
    judgement = judge(EngineSettings(recovery_threshold=0.05), EAGLE)
    assert judgement.rule == EAGLE.rule
    assert judgement.problem is not None
    assert "engine.recoveryThreshold (0.05) is below the failover threshold 0.08" in (
        judgement.problem
    )
    assert "set it to 0.08 or more" in judgement.problem
    with caplog.at_level(logging.ERROR, logger="copilot_lsp.engine.router"):
        pool, _ = pool_judged_by(judgement)
    assert judgement.problem in caplog.text
    health = pool.primary()["health"]
    assert isinstance(health, dict) and health["problem"] == judgement.problem
