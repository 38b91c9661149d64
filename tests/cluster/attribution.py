"""Which replica behind the router served a completion: the cluster test's model of the server.

The engines' own counters say who prefilled: `vllm:prompt_tokens_total` rises on the replica
that took a request (vLLM counts the whole prompt when its prefill completes, cached part
included). But the server answers some completions without any engine request: typing the
start of the suggestion on screen is answered from it (type-through, completion/typethrough.py),
and a keystroke that types along with an open stream takes that stream over (mode `adopted`,
completion/takeover.py). Those move no counter, so the counters alone cannot tell "served by
nobody" from "not served by an engine at all" (what `make test-cluster` failed on: an
explicit request after typing `round(` was answered from a suggestion that began with it).

So each answer is first looked up in the server's own record of it (`copilot/stats` recent
completions, by the id in the item's accept command): only one that sent an engine request
(its `request_sent` mark) must show on a replica's counter, and that is waited for as an event
(a counter rising, with a generous deadline), not for a fixed second. A replica whose
/metrics does not answer is not read (None), never counted as "did not rise".

Which replicas there are is the router's to say: the server identifies the endpoint as a
router by its worker list (engine/replicas.py), and `replicas_behind` checks that list names
exactly the replicas whose counters are read, so no engine can serve unseen.

Used by tests/cluster (real vllm-router, real engines) and, over scripted engines behind a
scripted router, by tests/lsp/test_router_attribution.py inside `make test`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx

from copilot_lsp.client.driver import item_id
from tests.lspclient import Session

PROMPT_TOKENS = "vllm:prompt_tokens_total"
ENGINE_WAIT_S = 60.0
"""How long an engine-answered completion may take to show on a counter (a bound, not a
pause: vLLM counts the prefill before the first token goes out; this covers a loaded host)."""

Source = Literal["engine", "type-through", "adopted", "no answer"]


class Counted(Protocol):
    """A replica as the model reads it: its name, whether it runs, its /metrics."""

    @property
    def name(self) -> str: ...

    @property
    def url(self) -> str: ...

    @property
    def alive(self) -> bool: ...

    def metric(self, name: str) -> float:
        """The metric's total over the replica's /metrics; httpx.HTTPError if unreachable."""
        ...


Reading = dict[str, float | None]
"""A counter per replica; None where the replica is down or its /metrics did not answer."""


async def read(replicas: Sequence[Counted], name: str = PROMPT_TOKENS, tries: int = 3) -> Reading:
    """`name` on every replica; a running one that fails to answer is asked again (`tries`
    in all) before it counts as unread. Read in a worker thread: the event loop goes on
    serving the LSP connection (and, in the fast test, the scripted replicas themselves)."""
    values: Reading = {}
    for replica in replicas:
        values[replica.name] = None
        for _ in range(tries if replica.alive else 0):
            try:
                values[replica.name] = await asyncio.to_thread(replica.metric, name)
                break
            except httpx.HTTPError:
                continue
    return values


def risen(before: Reading, after: Reading) -> list[str]:
    """The replicas whose counter was read both times and rose in between."""
    return [
        name
        for name, value in after.items()
        if value is not None and (old := before.get(name)) is not None and value > old
    ]


def source_of(record: dict[str, Any]) -> Source:
    """Where the server's record says the answer came from."""
    if record.get("mode") == "type-through":
        return "type-through"
    if record.get("mode") == "adopted":
        return "adopted"
    return "engine" if "request_sent" in record.get("ms", {}) else "no answer"


@dataclass(frozen=True, slots=True)
class Served:
    """One completion's answer and who served it."""

    items: list[Any]
    source: Source
    replicas: list[str] = field(default_factory=list)
    """The replicas whose prefill counter rose for it (engine answers only)."""
    completion_id: str | None = None

    def summary(self) -> dict[str, Any]:
        return {"source": self.source, "served_by": self.replicas, "items": len(self.items)}


async def record_of(session: Session, completion_id: str, within: float = 30.0) -> dict[str, Any]:
    """The server's record of a completion (`copilot/stats` recent), once it is there."""
    deadline = time.monotonic() + within
    while True:
        stats = await session.stats()
        for record in reversed(stats["recent"]):
            if record.get("id") == completion_id:
                return dict(record)
        assert time.monotonic() < deadline, f"no record of completion {completion_id}"
        await asyncio.sleep(0.05)


async def attribute(
    session: Session,
    replicas: Sequence[Counted],
    items: list[Any],
    before: Reading,
    within: float = ENGINE_WAIT_S,
) -> Served:
    """Who served `items` (one completion's answer; `before`: the counters read just before it
    was asked). An engine answer waits until some replica's counter rose; an answer from the
    suggestion on screen or from a taken-over stream expects none."""
    if not items:
        return Served(items, "no answer")
    completion_id = item_id(items[0])
    assert completion_id is not None, "an item without the server's accept command"
    source = source_of(await record_of(session, completion_id))
    if source != "engine":
        return Served(items, source, [], completion_id)
    deadline = time.monotonic() + within
    while not (rose := risen(before, after := await read(replicas))):
        assert time.monotonic() < deadline, (
            f"completion {completion_id} asked an engine, but no replica's {PROMPT_TOKENS} rose "
            f"within {within:.0f} s: before {before}, after {after}"
        )
        await asyncio.sleep(0.05)
    return Served(items, "engine", rose, completion_id)


def replicas_behind(stats: dict[str, Any]) -> list[str] | None:
    """The workers the server found behind its engine URL (`host:port` each), or None until
    it has identified that URL as a router (its first /metrics poll, after a completion)."""
    routing = stats.get("engine", {}).get("routing") or {}
    endpoints = routing.get("endpoints") or []
    if not endpoints or endpoints[0].get("kind") != "router":
        return None
    return sorted(urlsplit(url).netloc for url in endpoints[0].get("workers", []))


def netlocs(replicas: Sequence[Counted]) -> list[str]:
    return sorted(urlsplit(replica.url).netloc for replica in replicas)
