"""The failover rule against the real engine's metrics (issue 30, item 1).

Each test starts a real vLLM CPU engine with `engine up` (its state file records the profile's
health rule), builds the server's router from the settings and that state file, and sends it
editing traffic: completions of held-out code, new text each request, as an editor sends.
The router scrapes the engine's /metrics every 2 s with the default window, trip count and
draft minimum; a scripted engine stands in as the plain-decoding fallback, so every
completion says where it went. Healthy speculation must not fail over; useless speculation
(an EAGLE head for another target, as `--allow-draft-mismatch` serves one) must.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from copilot_lsp.bench.replay.sessions import heldout_files, pick_sessions
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.engine.router import Router
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import Profile, load_profile
from copilot_lsp.settings import EngineSettings
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.engine.conftest import _free_port
from tests.engine.useless_head import useless_eagle_head

pytestmark = [pytest.mark.engine, pytest.mark.timeout(420)]

POLL = {"metrics_interval_s": 2.0}
"""Readings every 2 s instead of 5 (more of them in a short test); the rule is the default's."""
TOKENS = 24


def lean(profile: Profile, **speculative: object) -> Profile:
    """`profile` as a test engine: one process and a small KV cache start faster on the shared
    host; the speculative settings and the health table stay the profile's."""
    env = {**profile.env, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    changed = profile.model_copy(update={"env": env})
    if speculative and changed.speculative is not None:
        spec = changed.speculative.model_copy(update=speculative)
        changed = changed.model_copy(update={"speculative": spec})
    return changed


@contextlib.contextmanager
def running(profile: Profile, state_dir: Path, *, allow_mismatch: bool = False) -> Iterator[str]:
    state = launcher.engine_up(
        profile, port=_free_port(), state_dir=state_dir, allow_draft_mismatch=allow_mismatch
    )
    try:
        yield state.url
    finally:
        launcher.engine_down(state_dir=state_dir)


def editing_prompts(count: int, seed: int = 30) -> list[str]:
    """Held-out code at the cursor of the replay's editing sessions, each a different place:
    the session's text before the cursor, then halfway through what the user types."""
    sessions = pick_sessions(heldout_files(["stdlib"]), (count + 5) // 6, seed)
    prompts = []
    for session in sessions:
        for typed in (0, len(session.target) // 2):
            prompts.append((session.before + session.target[:typed])[-1500:])
    return prompts[:count]


@pytest_asyncio.fixture
async def fallback() -> AsyncIterator[FakeEngine]:
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["<fallback>"])
    try:
        yield engine
    finally:
        await engine.stop()


def server_router(state_dir: Path, fallback: FakeEngine, **settings: object) -> Router:
    """The router the server builds: engine.url unset (the embedded engine `engine up`
    recorded) unless `settings` say otherwise, engine.fallbackUrl the scripted engine."""
    options = EngineSettings(fallback_url=fallback.url, **{**POLL, **settings})  # type: ignore[arg-type]
    return EngineProvider(options, state_file=launcher.state_file(state_dir)).current()


async def complete(router: Router, prompt: str) -> str:
    request = CompletionRequest(prompt=prompt, max_tokens=TOKENS, temperature=0.0)
    return "".join([chunk.text async for chunk in router.stream(request)])


async def edit(router: Router, prompts: list[str]) -> list[bool]:
    """Send the prompts one after another (an editor's pace); whether each went to the
    fallback."""
    went = [await complete(router, prompt) == "<fallback>" for prompt in prompts]
    await router.poll_once()  # the last request's drafts are read too
    return went


def health(router: Router) -> dict[str, object]:
    found = router.snapshot()["endpoints"][0]["health"]
    assert isinstance(found, dict)
    return found


async def test_suffix_decoding_on_editing_traffic_does_not_fail_over(
    tmp_path: Path, fallback: FakeEngine
) -> None:
    pytest.importorskip(
        "arctic_inference.suffix_decoding", reason="arctic-inference is not built (make setup)"
    )
    with running(lean(load_profile("local-cpu-suffix")), tmp_path) as url:
        router = server_router(tmp_path, fallback)
        try:
            went = await edit(router, editing_prompts(14))
            judged = health(router)
            window = router.snapshot()["endpoints"][0]["acceptance"]
        finally:
            await router.aclose()
    print(f"suffix at {url}: {judged}, window {window}")
    assert (judged["method"], judged["signal"]) == ("suffix", "mean_accepted_length")
    assert judged["readings"] >= 3, "too few windows with enough drafts to judge anything"
    assert not any(went) and fallback.requests == []
    assert router.primaries[0].degraded is False


async def test_eagle_on_editing_traffic_does_not_fail_over_and_a_useless_head_does(
    tmp_path: Path, fallback: FakeEngine
) -> None:
    """One engine for both halves would be cheaper, but the head is the engine's: the
    shipped head first, then the same engine with a head for another target."""
    shipped = lean(load_profile("local-cpu"))
    with running(shipped, tmp_path / "shipped"):
        router = server_router(tmp_path / "shipped", fallback)
        try:
            went = await edit(router, editing_prompts(8))
            judged = health(router)
        finally:
            await router.aclose()
    print(f"shipped EAGLE head: {judged}")
    assert (judged["method"], judged["threshold"]) == ("eagle", 0.08)
    assert judged["readings"] >= 3 and not any(went) and fallback.requests == []

    useless = lean(shipped, model=str(useless_eagle_head(tmp_path / "useless")))
    with running(useless, tmp_path / "useless", allow_mismatch=True):
        router = server_router(tmp_path / "useless", fallback)
        try:
            went = await edit(router, editing_prompts(8, seed=31))
            judged = health(router)
        finally:
            await router.aclose()
    print(f"useless EAGLE head: {judged}")
    assert judged["value"] == 0.0
    assert router.primaries[0].degraded is True
    assert went[-1] is True, "the completions after the failover still went to the engine"
