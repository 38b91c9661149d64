"""A degraded primary is probed only while completions go elsewhere: with nowhere else to go
(one endpoint, e.g. a vllm-router, and no fallback) the editors' own requests reach it and
replaying the latest one would only add load — measured behind a router: a 400-token request
replayed every 10 s kept a replica generating after the editor had cancelled it."""

from __future__ import annotations

from tests.unit.engine.test_router import Pool


async def degrade(pool: Pool, name: str) -> None:
    pool.router._ensure_polling = lambda: None  # type: ignore[method-assign]
    await pool.tick()
    for _ in range(3):
        pool.engines[name].speculate(50, 0.1)
        await pool.tick()
    assert pool.router.primaries[0].degraded


async def test_a_lone_degraded_primary_is_not_probed() -> None:
    pool = Pool(["router"], None)
    await degrade(pool, "router")
    assert await pool.complete() == "router"  # the editors' request itself
    await pool.router.probe_degraded()
    assert len(pool.engines["router"].completions) == 1  # no replay on top of it


async def test_a_degraded_primary_is_probed_while_the_fallback_serves() -> None:
    pool = Pool(["spec"], "plain")
    await degrade(pool, "spec")
    assert await pool.complete() == "plain"
    await pool.router.probe_degraded()
    assert pool.engines["spec"].completions == [pool.engines["plain"].completions[0]]


async def test_a_degraded_replica_is_probed_while_another_serves() -> None:
    pool = Pool(["a", "b"], None)
    await degrade(pool, "a")
    assert await pool.complete() == "b"
    await pool.router.probe_degraded()
    assert len(pool.engines["a"].completions) == 1
