"""The next-edit suite end to end through the real server, over the scripted engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.nextedit import suite
from copilot_lsp.bench.nextedit.prompts import rewrite_request
from copilot_lsp.bench.nextedit.report import latency_lines
from copilot_lsp.bench.nextedit.run import run_suite, summarise
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import line_starts
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

pytestmark = pytest.mark.timeout(120)


def answer(scenario: suite.Scenario, buffer: str, around: tuple[int, int] = (10, 10)) -> Reply:
    """The model's rewrite of the scenario's window (`around`: lines above and below the
    cursor's), as `buffer` has it, in the embedded model's format (`fenced`): the prompt gave
    the window's first line, the engine writes the rest (the closing fence is the stop
    string: the engine does not send it)."""
    current = scenario.current()
    window = window_at(current, line_starts(current), scenario.cursor, *around)
    lines = buffer.split("\n")
    grown = len(lines) - len(current.split("\n"))
    rewrite = "\n".join(lines[window.first : window.last + 1 + grown]) + "\n"
    assert rewrite.startswith(window.lines[0])
    return Reply(chunks=[rewrite.removeprefix(window.lines[0])])


async def test_a_right_edit_a_quiet_answer_and_an_undo_the_server_drops(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    stored = suite.load()
    edit = next(s for s in stored if s.kind == "rename-param")
    unrelated = next(s for s in stored if s.kind == "unrelated")
    done = next(s for s in stored if s.kind == "rename-local-done")
    assert edit.expected is not None
    engine = await FakeEngine().start()
    engine.models = ["smollm2-135m"]  # the embedded model: the server picks `fenced`
    engine.replies = [
        answer(edit, edit.expected),
        answer(unrelated, unrelated.current()),  # the window unchanged: nothing to offer
        answer(done, done.before),  # every rename undone: the server's gate drops it
    ]
    try:
        results = await run_suite(
            [edit, unrelated, done], engine.url, tmp_path, timeout_s=30, completions=False
        )
    finally:
        await engine.stop()
    assert len(engine.requests) == 3
    prompt = engine.requests[0].body["prompt"]
    current = edit.current()
    line = current[current.rfind("\n", 0, edit.cursor) + 1 : current.find("\n", edit.cursor)]
    assert f"# +{line}" in prompt.split("Lines")[0]  # the user's step is in the history
    # `bench engine --prompts nextedit` sends what the server sent.
    request = rewrite_request(edit, path="s000.py")
    body = engine.requests[0].body
    assert (request.prompt, request.max_tokens) == (prompt, body["max_tokens"])
    assert set(request.stop) <= set(body["stop"])
    # Each document is closed after its scenario: no scenario sees another's edits.
    assert "s000.py" not in engine.requests[2].body["prompt"]
    assert "s002.py" in engine.requests[2].body["prompt"]
    right, quiet, dropped = results
    assert right["exact"] and right["shown"] and right["delta_chrf"] == 1.0
    assert right["reversal"] == 0.0 and right["error"] is None
    assert quiet["exact"] and not quiet["shown"]
    assert dropped["exact"] and not dropped["shown"]
    summary = summarise(results)
    assert summary["all"]["exact"] == 1.0 and summary["want_none"]["quiet"] == 1.0


async def test_next_edit_latency_is_reported_beside_inline_completions(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    """Each scenario also asks an inline completion at its cursor; the report puts both
    latencies side by side, the client's and the server's (`copilot/stats`)."""
    edit = next(s for s in suite.load() if s.kind == "rename-param")
    assert edit.expected is not None
    engine = await FakeEngine().start()
    engine.models = ["smollm2-135m"]
    engine.default = answer(edit, edit.expected)  # the completion gets the same text
    server: dict[str, object] = {}
    try:
        results = await run_suite([edit], engine.url, tmp_path, timeout_s=30, server_stats=server)
    finally:
        await engine.stop()
    assert len(engine.requests) == 2  # the next edit, then the completion
    (record,) = results
    assert record["exact"] and record["completion_latency_ms"] > 0
    summary = summarise(results)
    assert summary["all"]["completions"] == 1
    edits = server["next_edits"]
    assert isinstance(edits, dict) and (edits["requests"], edits["shown"]) == (1, 1)
    lines = latency_lines(summary["all"], server)
    assert any(line.startswith("| next edit | 1 |") for line in lines)
    assert any(line.startswith("| inline completion | 1 |") for line in lines)
    assert "next edits 1 requests, 1 shown, 0 quiet" in lines[-1]


async def test_the_window_option_reaches_the_server_and_the_engine_workload(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    """`bench nextedit --window 3,2`: the server rewrites 3 lines above and 2 below the
    cursor's line, and `rewrite_request` (the diagnosis, `bench engine`) builds the same."""
    edit = next(s for s in suite.load() if s.kind == "rename-param")
    assert edit.expected is not None
    current = edit.current()
    window = window_at(current, line_starts(current), edit.cursor, 3, 2)
    assert len(window.lines) == 6  # the scenario's cursor is far enough from both ends
    engine = await FakeEngine().start()
    engine.models = ["smollm2-135m"]
    engine.replies = [answer(edit, edit.expected, (3, 2))]
    try:
        (record,) = await run_suite(
            [edit], engine.url, tmp_path, timeout_s=30, completions=False, window=(3, 2)
        )
    finally:
        await engine.stop()
    body = engine.requests[0].body
    request = rewrite_request(edit, path="s000.py", window_lines=(3, 2))
    assert (request.prompt, request.max_tokens) == (body["prompt"], body["max_tokens"])
    assert request.window == window.lines
    assert request.prompt != rewrite_request(edit, path="s000.py").prompt
    # The expected edit lies inside the smaller window: still found, and right.
    assert record["exact"] and record["shown"]
