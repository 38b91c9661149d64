"""The Neovim plugin end to end: real Neovim 0.12-dev and 0.11, real server, scripted engine."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.editors.conftest import PLUGIN, NeovimRun, run_neovim

pytestmark = pytest.mark.timeout(120)

SOURCE = "def total(items):\n    \n\nprint(total([1]))\n"
# One indentation level: the client side is under test here, not re-indentation.
CHUNKS = ["\n    result", " = 0\n", "    result +=", " len(items)\n", "    result *= 2\n"]
CHUNKS += ["    return result\n", "\n", "def other():\n", "    pass\n"]
FULL = "result = 0\n    result += len(items)\n    result *= 2\n    return result"
SCRIPT = PLUGIN / "tests" / "e2e.lua"
VERSIONS = ["0.12", "0.11"]


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[FakeEngine]:
    fake = await FakeEngine().start()
    # Slow enough that the preview is drawn several times before the answer.
    fake.default = Reply(chunks=CHUNKS, delay_s=0.03)
    try:
        yield fake
    finally:
        await fake.stop()


def renders(events: Path) -> list[str]:
    """The non-empty ghost texts Neovim has drawn so far (it appends each event at once)."""
    if not events.exists():
        return []
    lines = events.read_text().splitlines()
    drawn = [json.loads(line) for line in lines if line.endswith("}")]
    return [e["data"] for e in drawn if e["kind"] == "render" and e.get("data")]


async def scenario(
    name: str,
    version: str,
    engine: FakeEngine,
    env: dict[str, str],
    tmp_path: Path,
    events: Path | None = None,
) -> NeovimRun:
    source = tmp_path / "total.py"
    source.write_text(SOURCE)
    variables = {"scenario": name, "file": str(source), "engine_url": engine.url, "expect": FULL}
    if events is not None:
        variables["events"] = str(events)
    run = await run_neovim(version, SCRIPT, env, tmp_path, timeout_s=60.0, **variables)
    assert run.result.get("error") is None, f"{run.result.get('error')}\n{run.stderr}"
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.parametrize("version", VERSIONS)
async def test_streamed_preview_then_tab_accepts(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"

    async def drawn(index: int) -> None:  # chunks 1-3 wait until Neovim drew the one before
        while 1 <= index <= 3 and len(set(renders(events))) < index:
            await asyncio.sleep(0.02)

    engine.default = Reply(chunks=CHUNKS, gate=drawn)
    run = await scenario("stream_accept", version, engine, isolated_env, tmp_path, events=events)
    assert run.result["nvim"].startswith(version)
    assert run.result["builtin"] is (version == "0.12")
    logged = [(e["kind"], e["data"]) for e in run.result["events"]]
    first_response = next(i for i, (kind, _) in enumerate(logged) if kind == "response")
    previews = [text for kind, text in logged[:first_response] if kind == "render" and text]
    # Ghost text appeared and grew token by token before the answer arrived.
    assert previews[:3] == ["result", "result = 0", "result = 0\n    result +="]
    assert all(FULL.startswith(text) for text in previews)
    assert previews[-1] == FULL  # the last preview is the answer: nothing jumps at hand-over
    assert logged[first_response][1] == FULL
    assert run.result["lines"][1:5] == FULL.replace("result", "    result", 1).split("\n")
    assert run.result["cursor"] == [5, len("    return result")]
    stats = run.result["stats"]
    assert stats["outcomes"]["accepted"] == 1
    assert stats["outcomes"]["displayed"] >= 1
    assert stats["acceptance"]["rate"] > 0
    health = "\n".join(run.result["health"])
    assert "ERROR" not in health, health
    assert "server command:" in health and "answers completions" in health


@pytest.mark.parametrize("version", VERSIONS)
async def test_dismiss_and_accept_word_are_tracked(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    run = await scenario("partial_dismiss", version, engine, isolated_env, tmp_path)
    assert run.result["after_dismiss"] == SOURCE.rstrip("\n").split("\n")
    assert run.result["after_word"][1] == "    result"
    outcomes = run.result["stats"]["outcomes"]
    assert outcomes["dismissed"] == 1
    assert outcomes["partially_accepted"] >= 1
    assert "accepted" not in outcomes


@pytest.mark.parametrize("version", VERSIONS)
async def test_next_prev_and_accept_line_keys(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    run = await scenario("keys", version, engine, isolated_env, tmp_path)
    assert run.result.get("before_next") is None  # automatic requests are off
    assert run.result["after_prev"] == FULL  # the answer has one item: it stays
    assert run.result["after_line"][1:3] == ["    result = 0", ""]
    recent = run.result["stats"]["recent"]
    # <M-]> asks as invoked in both (0.12: through the built-in's own request, which replaces
    # the one it had debounced), so the alternatives are asked for too (this engine samples
    # empty choices: one item); <M-[> on that one item asks nothing more.
    assert len(engine.requests) == 1, (recent, run.result["events"])
    assert len(engine.sampled_requests) == 1, (recent, run.result["events"])
    assert recent[0]["trigger"] == "invoked", recent
    outcomes = run.result["stats"]["outcomes"]
    assert outcomes["partially_accepted"] == 1 and "accepted" not in outcomes


@pytest.mark.parametrize("version", VERSIONS)
async def test_automatic_requests_off_means_only_the_users_requests_reach_the_engine(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    run = await scenario("manual_only", version, engine, isolated_env, tmp_path)
    assert run.result.get("before_suggest") is None  # typing and waiting showed nothing
    assert run.result.get("after_typing") is None  # typing on took the suggestion down
    # One request: `suggest`'s. Typing before it and after it asked nothing.
    assert len(engine.requests) == 1, run.result["stats"].get("recent")


async def test_setup_rejects_bad_options(isolated_env: dict[str, str], tmp_path: Path) -> None:
    run = await run_neovim("0.11", SCRIPT, isolated_env, tmp_path, scenario="bad_options")
    assert run.result.get("error") is None, run.result.get("error")
    assert run.result["accepted"] is False and run.result["unknown_key"] is False
    assert run.result["setup_done"] is False
    messages = run.result["messages"]
    assert "debounce_ms" in messages[0] and "number" in messages[0]
    assert "keymaps.accept_all: unknown action" in messages[1]


# Two sampled choices, distinct from the greedy answer and from each other.
ALTERNATIVES = [
    ["\n    result", " = sum(items)\n", "    return result\n", "\n"],
    ["\n    return", " len(items)\n", "\n"],
]
SHOWN = [FULL, "result = sum(items)\n    return result", "return len(items)"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_cycling_shows_each_alternative_and_tab_accepts_the_shown_one(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    engine.sampled_default = Reply(choices=ALTERNATIVES, delay_s=0.01)
    source = tmp_path / "total.py"
    source.write_text(SOURCE)
    run = await run_neovim(
        version,
        SCRIPT,
        isolated_env,
        tmp_path,
        scenario="cycle_alternatives",
        file=str(source),
        engine_url=engine.url,
        alternatives=json.dumps(SHOWN),
    )
    assert run.result.get("error") is None, f"{run.result.get('error')}\n{run.stderr}"
    # Typing asked for one suggestion; the first <M-]> asked once more, for the alternatives.
    assert len(engine.sampled_requests) == 1 and engine.sampled_requests[0].body["n"] == 2
    assert run.events("items")[-1] == [
        {"text": text, "id": ids} for text, ids in zip(SHOWN, _ids(run), strict=True)
    ]
    # <M-]> x3 walks 2, 3 and wraps to 1; <M-[> goes back to 3.
    assert run.result["seen"] == [SHOWN[0], SHOWN[1], SHOWN[2], SHOWN[0], SHOWN[2]]
    # The plugin's count of what is on screen (which id it reports shown) follows.
    assert run.result["positions"] == [[1, 1], [2, 3], [3, 3], [1, 3], [3, 3]]
    assert run.result["lines"][1] == "    return len(items)"
    outcomes = run.result["stats"]["outcomes"]
    assert outcomes["accepted"] == 1 and outcomes["accepted_alternative"] == 1


def _ids(run: NeovimRun) -> list[str]:
    first = run.events("items")[-1][0]["id"]
    return [first, f"{first}#2", f"{first}#3"]
