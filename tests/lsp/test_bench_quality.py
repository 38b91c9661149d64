"""The SAFIM quality benchmark end to end through the real server (scripted engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench import quality
from copilot_lsp.bench.safim import find_data_dir, load_tasks
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(120)


async def test_quality_bench_scores_a_correct_and_a_wrong_completion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: dict[str, str]
) -> None:
    data = find_data_dir(REPO)
    assert data is not None
    task = load_tasks(data, "block", 1)[0]
    indent = task.before[task.before.rfind("\n") + 1 :]
    # What a perfect model streams after the prompt (which ends before the hole's line).
    perfect = "\n" + indent + task.ground_truth + "\n" + "x = 'unrelated'\n"
    engine = await FakeEngine().start()
    engine.replies = [Reply(chunks=[perfect]), Reply(chunks=["\n" + indent + "pass\n"])]
    for key, value in isolated_env.items():
        monkeypatch.setenv(key, value)
    try:
        results = await quality.run_mode("pipeline", [task, task], engine.url, tmp_path)
    finally:
        await engine.stop()
    right, wrong = results
    assert right["shown"] and right["passed"] is True
    assert right["edit_similarity"] == 1.0
    assert wrong["passed"] is False and wrong["edit_similarity"] < 1.0
    summary = quality.summarise(results)
    assert summary["block"]["score"] == 0.5 and summary["block"]["n"] == 2
