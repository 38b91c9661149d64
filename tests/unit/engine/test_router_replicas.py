"""Speculative health through a router: per replica when the settings list the replicas,
otherwise not at all, said in the log and in the routing snapshot (engine/replicas.py).

The scripted vllm-router forwards /metrics to one replica per scrape, round robin, as the
real one was measured to do; subtracting one replica's counters from another's is how
`make test-cluster` read 0.03 over 186 drafts of two healthy EAGLE replicas.
"""

from __future__ import annotations

import logging

import httpx
import pytest
from pydantic import ValidationError

from copilot_lsp.engine.health import HealthRule, Recorded, judge
from copilot_lsp.engine.monitor import scrape
from copilot_lsp.engine.replicas import identify
from copilot_lsp.engine.router import router_from_settings
from copilot_lsp.settings import EngineSettings, Settings, apply_layer_leniently
from tests.fakes.speculating import Engine, Pool, VllmRouter, url

EAGLE = judge(
    EngineSettings(),
    Recorded("local-cpu", "eagle", HealthRule("acceptance_rate", 0.08, 0.18)),
)


def both(a: Engine, b: Engine, accepted_a: int, accepted_b: int) -> None:
    """40 drafts of 3 tokens on each replica, with so many tokens accepted per draft."""
    a.speculate(40, 3, accepted_a)
    b.speculate(40, 3, accepted_b)


def healthy(a: Engine, b: Engine) -> None:
    """Both replicas at their usual acceptance, but far apart in their lifetime counters."""
    a.speculate(40, proposed=3, accepted=1)
    b.speculate(400, proposed=3, accepted=1)


def cluster(*, own_metrics: bool = False) -> tuple[Engine, Engine, dict[str, Engine | VllmRouter]]:
    a, b = Engine("a"), Engine("b")
    a.speculate(5000, proposed=3, accepted=1)  # a has served for a while, b just started
    router = VllmRouter("router", [a, b], own_metrics=own_metrics)
    return a, b, {"a": a, "b": b, "router": router}


async def test_a_router_is_recognised_and_its_metrics_are_not_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b, servers = cluster()
    pool = Pool(servers, ["router"], judgements=[EAGLE])
    with caplog.at_level(logging.WARNING, logger="copilot_lsp.engine.router"):
        for _ in range(8):
            await pool.tick(traffic=lambda: healthy(a, b))
    snapshot = pool.primary()
    assert snapshot["kind"] == "router"
    assert snapshot["workers"] == [url("a"), url("b")]
    health = snapshot["health"]
    assert isinstance(health, dict) and health["read"] is False and health["value"] is None
    reason = health["unread_reason"]
    assert isinstance(reason, str)
    assert "is a router (it lists http://a.test/v1, http://b.test/v1)" in reason
    assert "engine.replicaMetrics" in reason
    assert snapshot["acceptance"] is None  # no window of mixed counters is kept
    assert caplog.text.count("is a router") == 1  # said once, not every scrape
    assert await pool.complete() == "router>a"


async def test_mixed_replica_counters_would_have_failed_over_a_healthy_cluster() -> None:
    """The reading the router's /metrics gives when taken for an engine's (what main did):
    the check that the test above is about a real failure, not a quiet one."""
    a, b, servers = cluster()
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: servers["router"].handle(r)))
    older = await scrape(http, "http://router.test", clock=lambda: 0.0)
    healthy(a, b)
    newer = await scrape(http, "http://router.test", clock=lambda: 5.0)
    assert older is not None and newer is not None
    assert newer.counters.drafts < older.counters.drafts  # "went down": not one engine
    await http.aclose()


async def test_a_router_answering_its_own_metrics_is_a_router() -> None:
    _, _, servers = cluster(own_metrics=True)
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: servers["router"].handle(r)))
    scraped = await scrape(http, "http://router.test")
    assert scraped is not None and scraped.router_metrics and not scraped.engine_metrics
    assert (await identify(http, "http://router.test", scraped)).kind == "router"
    await http.aclose()


async def test_metrics_without_any_vllm_metric_are_not_an_engine() -> None:
    proxy = Engine("proxy", engine_metrics=False)
    pool = Pool({"proxy": proxy}, ["proxy"], judgements=[EAGLE])
    for _ in range(5):
        await pool.tick(traffic=lambda: proxy.speculate(40, proposed=3, accepted=0))
    snapshot = pool.primary()
    assert snapshot["kind"] == "not an engine" and snapshot["degraded"] is False
    health = snapshot["health"]
    assert isinstance(health, dict) and health["read"] is False
    assert "without any vLLM engine metric" in str(health["unread_reason"])


async def test_with_the_replicas_given_each_is_read_and_they_are_pooled() -> None:
    a, b, servers = cluster()
    pool = Pool(servers, ["router"], judgements=[EAGLE], replica_metrics=["a", "b"])
    for _ in range(8):
        await pool.tick(traffic=lambda: healthy(a, b))
    snapshot = pool.primary()
    health = snapshot["health"]
    assert isinstance(health, dict) and health["read"] is True
    assert health["value"] == pytest.approx(1 / 3)
    replicas = snapshot["replicas"]
    assert isinstance(replicas, list) and [r["url"] for r in replicas] == [url("a"), url("b")]
    # Seven intervals after the first scrape, each replica's own, then summed.
    assert [r["acceptance"]["drafts"] for r in replicas] == [280, 2800]
    acceptance = snapshot["acceptance"]
    assert isinstance(acceptance, dict) and acceptance["drafts"] == 280 + 2800
    assert await pool.complete() == "router>a"

    # Both replicas serve a useless draft (a head for another target, rolled out to all).
    for _ in range(3):
        await pool.tick(60.0, traffic=lambda: both(a, b, 0, 0))
    assert await pool.complete() == "plain"


async def test_one_useless_replica_among_healthy_ones_is_pooled_with_them() -> None:
    """The router spreads completions over every replica, so the pool is judged as a whole:
    one broken replica of two, each as busy, leaves the pool at half its acceptance."""
    a, b, servers = cluster()
    pool = Pool(servers, ["router"], judgements=[EAGLE], replica_metrics=["a", "b"])
    for _ in range(4):
        await pool.tick(60.0, traffic=lambda: both(a, b, 1, 0))
    health = pool.primary()["health"]
    assert isinstance(health, dict) and health["value"] == pytest.approx(1 / 6)
    assert await pool.complete() == "router>a"


async def test_an_unreachable_replica_is_reported_and_the_others_still_count() -> None:
    a, b, servers = cluster()
    b.up = False
    pool = Pool(servers, ["router"], judgements=[EAGLE], replica_metrics=["a", "b"])
    for _ in range(3):
        await pool.tick(60.0, traffic=lambda: a.speculate(40, 3, 0))
    snapshot = pool.primary()
    assert snapshot["healthy"] is True  # the router answers; one replica behind it does not
    replicas = snapshot["replicas"]
    assert isinstance(replicas, list) and "ConnectError" in str(replicas[1]["error"])
    assert await pool.complete() == "plain"  # a's useless drafts alone decide


def test_router_from_settings_gives_the_replicas_to_the_one_primary() -> None:
    options = EngineSettings(replica_metrics=["http://r1:8000/v1/", "http://r2:8000/v1"])
    router = router_from_settings(options, "http://router:8080/v1")
    replicas = router.primaries[0].replicas
    assert replicas is not None
    assert [r.url for r in replicas.replicas] == ["http://r1:8000/v1", "http://r2:8000/v1"]


def test_replicas_beside_several_primaries_are_refused_naming_the_fix() -> None:
    with pytest.raises(ValidationError) as refused:
        EngineSettings(endpoints=["http://a/v1", "http://b/v1"], replica_metrics=["http://r/v1"])
    assert "put the router's URL in engine.url" in str(refused.value)
    kept, problems = apply_layer_leniently(
        Settings(),
        {"engine": {"endpoints": ["http://a/v1", "http://b/v1"], "replicaMetrics": ["http://r"]}},
        "workspace/configuration",
    )
    assert len(problems) == 1 and "replica_metrics" in problems[0]
    assert kept.engine.endpoints == ["http://a/v1", "http://b/v1"]
    assert kept.engine.replica_metrics == []
