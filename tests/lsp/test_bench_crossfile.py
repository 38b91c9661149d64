"""The cross-file benchmark end to end: every arm through the real server (scripted engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.crossfile.run import ARMS, run_tasks
from copilot_lsp.bench.crossfile.tasks import find_tasks
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.fakes.crossfile_package import write_package

pytestmark = pytest.mark.timeout(120)


async def test_every_arm_completes_and_scores_a_task(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    _, task, _ = find_tasks(write_package(tmp_path), "pkg")
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["DEFAULT_TIMEOUT", " + u.shared(doubled)\n", "x = 1\n"])
    try:
        records, said = await run_tasks([task], list(ARMS), engine.url, {"pkg": "dev"})
    finally:
        await engine.stop()
    assert [r["arm"] for r in records] == list(ARMS)
    for record in records:
        assert record["exact_match"] and record["identifier_match"], record
        assert record["split"] == "dev" and record["round_trip_ms"] > 0
    assert records[0]["ms"]["first_token"] > 0  # naive: timed by the client
    server = {r["arm"]: r for r in records if r["arm"] != "naive"}
    assert all(r["ms"].get("prompt_built") is not None for r in server.values())
    prompts = [request.body["prompt"] for request in engine.requests]
    assert prompts[0].endswith("    result = models.")  # naive: the text before the cursor
    # models.py's code reaches the prompt where it is open (open-tabs) and from the index
    # (workspace: its first task waits for the index's first pass), never with the file alone.
    by_arm = dict(zip(ARMS, prompts, strict=True))  # the first task asks in ARMS' order
    assert "(models.py)" not in by_arm["current-file"], by_arm
    assert "# definition (models.py)" in by_arm["open-tabs"], by_arm
    assert "(models.py)" in by_arm["workspace"], by_arm
    assert set(said) == {"current-file", "open-tabs", "workspace"}
    # The relay saw each server arm's prompt: the API (models.DEFAULT_TIMEOUT) is in the head
    # only where the module's API is.
    assert server["current-file"]["api_in_head"] is False
    assert server["open-tabs"]["api_in_head"] is False  # the names used, not models' API
    assert server["workspace"]["api_in_head"] is True
