"""The SAFIM quality benchmark end to end through the real server (scripted engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.quality import run as quality
from copilot_lsp.bench.quality.report import summarise
from copilot_lsp.bench.quality.safim import DATA, load_tasks, statement_holes
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

pytestmark = pytest.mark.timeout(120)


async def test_quality_bench_scores_a_correct_and_a_wrong_completion(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    task = load_tasks(DATA, "block", 1)[0]
    indent = task.before[task.before.rfind("\n") + 1 :]
    # What a perfect model streams after the prompt (which ends before the hole's line).
    perfect = "\n" + indent + task.ground_truth + "\n" + "x = 'unrelated'\n"
    engine = await FakeEngine().start()
    engine.replies = [Reply(chunks=[perfect]), Reply(chunks=["\n" + indent + "pass\n"])]
    try:
        results = await quality.run_mode("pipeline", [task, task], engine.url, tmp_path)
    finally:
        await engine.stop()
    right, wrong = results
    assert right["shown"] and right["passed"] is True
    assert right["edit_similarity"] == 1.0
    assert wrong["passed"] is False and wrong["edit_similarity"] < 1.0
    summary = summarise(results)
    assert summary["block"]["score"] == 0.5 and summary["block"]["n"] == 2


async def test_naive_mode_cuts_at_the_first_line_break_and_holes_keep_their_tests(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    hole = statement_holes(DATA, 1)[0]
    assert hole.subset == "holes" and "\n" not in hole.ground_truth
    engine = await FakeEngine().start()
    engine.replies = [
        Reply(
            chunks=[hole.ground_truth[:3], hole.ground_truth[3:] + "\n", *["x = 1\n"] * 20],
            delay_s=0.02,
        ),
        Reply(chunks=["x = (\n"]),  # a syntax error: fails whether or not the line runs
    ]
    try:
        results = await quality.run_modes([quality.NAIVE], [hole, hole], engine.url, tmp_path)
    finally:
        await engine.stop()
    right, wrong = results[quality.NAIVE]
    assert right["edit_similarity"] == 1.0 and right["passed"] is True
    assert wrong["passed"] is False
    assert engine.requests[0].body["prompt"] == hole.before
    assert engine.requests[0].disconnected  # closed at the line break, not read to the end


async def test_early_mode_answers_the_first_line_then_the_rest_at_the_same_place(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    task = load_tasks(DATA, "block", 1)[0]
    indent = task.before[task.before.rfind("\n") + 1 :]
    lines = ["\n" + indent + line + "\n" for line in task.ground_truth.split("\n")]
    assert len(lines) > 1
    engine = await FakeEngine().start()
    engine.replies = [Reply(chunks=[*lines, "x = 'unrelated'\n"], delay_s=0.3)]
    try:
        results = await quality.run_modes(["early"], [task], engine.url, tmp_path)
    finally:
        await engine.stop()
    (record,) = results["early"]
    assert record["edit_similarity"] == 1.0  # the whole block, from the second request
    assert record["first_answer_ms"] < record["round_trip_ms"]
    assert len(engine.requests) == 1  # one stream served both answers
