"""The next-edit suite: its scenarios (built and stored) and their scoring."""

from __future__ import annotations

import argparse
import ast
import difflib
import math
from pathlib import Path

import pytest

from copilot_lsp.bench.nextedit import scenarios, suite
from copilot_lsp.bench.nextedit.run import scored, summarise
from copilot_lsp.bench.nextedit.score import delta_chrf, reversal
from copilot_lsp.errors import CopilotLspError

STORED = suite.load()
GENERATED = ("rename-param", "rename-local", "typo", "new-field", "repeated-edit")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def test_the_stored_suite_has_fifty_scenarios_about_half_wanting_no_edit() -> None:
    assert len(STORED) >= 50
    none = sum(not s.wants_edit for s in STORED)
    assert 0.4 <= none / len(STORED) <= 0.6
    assert len({s.id for s in STORED}) == len(STORED)
    kinds = {s.kind for s in STORED}
    assert set(GENERATED) | {"unrelated", "signature"} <= kinds
    assert {f"{k}-done" for k in ("rename-param", "typo", "new-field")} <= kinds


@pytest.mark.parametrize("scenario", STORED, ids=lambda s: s.id)
def test_every_scenario_is_valid_python_with_its_edit_inside_the_window(
    scenario: suite.Scenario,
) -> None:
    current = scenario.current()
    assert scenario.steps and 0 <= scenario.cursor <= len(current)
    cursor_line = _line(current, scenario.cursor)
    if scenario.source == "hand":  # the generated ones are cut from a file, mid-construct
        ast.parse(scenario.target())
    if scenario.wants_edit:
        assert scenario.expected != current
        old, new = current.split("\n"), scenario.target().split("\n")
        opcodes = difflib.SequenceMatcher(None, old, new).get_opcodes()
        changed = [i for tag, i1, i2, _, _ in opcodes if tag != "equal" for i in (i1, i2 - 1)]
        assert changed and all(abs(i - cursor_line) <= scenarios.WINDOW for i in changed)
    else:
        assert scenario.expected is None and scenario.target() == current


def test_a_scenario_of_each_kind_is_built_from_the_standard_library() -> None:
    built = scenarios.build(scenarios.MODULES[:12])
    by_kind = {s.kind: s for s in built if s.source != "hand"}
    for kind in GENERATED:
        edit = by_kind[kind]
        assert edit.source.startswith("stdlib:") and edit.wants_edit
    done = by_kind["rename-param-done"]
    twin = next(s for s in built if s.kind == "rename-param" and s.source == done.source)
    # The twin where the user did it all: its buffer is the other's expected one.
    assert done.current() == twin.expected and done.expected is None
    assert len(done.steps) > len(twin.steps)
    assert not by_kind["unrelated"].wants_edit


def test_the_stored_suite_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "s.json.gz"
    suite.save(STORED[:3], path)
    assert suite.load(path) == STORED[:3]


def test_delta_chrf_compares_the_changes_not_the_files() -> None:
    current = "def f(items_value):\n    return len(items)\n"
    expected = current.replace("len(items)", "len(items_value)")
    assert delta_chrf(current, expected, expected) == 1.0
    assert delta_chrf(current, current, current) == 1.0
    assert delta_chrf(current, current, expected) == 0.0  # nothing made, something wanted
    assert delta_chrf(current, expected, current) == 0.0  # something made, nothing wanted
    near = current.replace("len(items)", "len(items_val)")
    assert 0.3 < delta_chrf(current, near, expected) < 1.0


def test_reversal_counts_tokens_that_undo_the_users_edit() -> None:
    before = "def f(items):\n    return len(items)\n"
    current = before.replace("f(items)", "f(items_value)")
    undone = before
    followed = current.replace("len(items)", "len(items_value)")
    assert reversal(before, current, undone) == 1.0
    assert reversal(before, current, followed) == 0.0
    assert reversal(before, current, current) == 0.0


def test_scores_and_summary_exact_quiet_and_reversal() -> None:
    edit = next(s for s in STORED if s.kind == "rename-param")
    none = next(s for s in STORED if s.kind == "unrelated")
    current = edit.current()
    assert edit.expected is not None
    right = scored(edit, current, edit.expected, {"text": "x"}, 100.0)
    missed = scored(edit, current, current, None, 200.0)
    quiet = scored(none, none.current(), none.current(), None, 300.0)
    undo = scored(none, none.current(), none.before, {"text": "x"}, 400.0)
    assert right["exact"] and right["delta_chrf"] == 1.0 and right["shown"]
    assert not missed["exact"] and missed["delta_chrf"] == 0.0
    assert quiet["exact"] and not quiet["shown"]
    assert not undo["exact"] and undo["reversal"] == 1.0
    summary = summarise([right, missed, quiet, undo])
    assert summary["all"]["exact"] == 0.5
    assert summary["want_edit"]["exact"] == 0.5 and summary["want_none"]["quiet"] == 0.5
    assert summary["all"]["reversals"] == 1 and summary["all"]["reversal_ratio"] == 0.5
    assert summary["all"]["p50_latency_ms"] == 250.0


def test_the_command_picks_kinds_and_a_limit() -> None:
    from copilot_lsp.bench.nextedit.command import chosen

    args = argparse.Namespace(scenarios=None, kinds="typo,unrelated", limit=4)
    picked, size = chosen(args)
    assert size == len(STORED) and len(picked) == 4
    assert {s.kind for s in picked} <= {"typo", "unrelated"}
    with pytest.raises(CopilotLspError):
        chosen(argparse.Namespace(scenarios=None, kinds="nope", limit=None))


def test_the_engine_workload_is_the_suites_rewrite_requests_run_to_their_stop() -> None:
    from copilot_lsp.bench.engine.prompts import SETS, nextedit_prompts
    from copilot_lsp.bench.nextedit.prompts import rewrite_request

    assert "nextedit" in SETS
    prompts = nextedit_prompts(6)
    assert len(prompts) == 6 and len({p.name for p in prompts}) == 6
    by_id = {s.id: s for s in STORED}
    assert len({by_id[p.name].kind for p in prompts}) == 6  # across kinds
    assert all(by_id[p.name].wants_edit for p in prompts)
    for prompt in prompts:
        request = rewrite_request(by_id[prompt.name])
        assert prompt.set == "nextedit" and "```" in prompt.stop
        assert prompt.max_tokens is not None and prompt.max_tokens > 64
        # the embedded model's format: an open block holding the window's first line
        assert request.prefill == request.window[0]
        assert "Recent edits:" in prompt.text
        assert prompt.text.endswith("after the next edit:\n```\n" + request.prefill)
    request = rewrite_request(by_id[prompts[0].name])
    assert request.expected is not None and request.expected in (
        by_id[prompts[0].name].expected or ""
    )


@pytest.mark.asyncio
async def test_a_rewrite_prompt_runs_to_its_stop_string_with_its_own_limit() -> None:
    import httpx

    from copilot_lsp.bench.engine.prompts import Prompt
    from copilot_lsp.bench.engine.runner import stream_request
    from copilot_lsp.testing.fake_engine import FakeEngine, Reply

    engine = await FakeEngine().start()
    engine.default = Reply(chunks=["a\n", "b\n"])
    prompt = Prompt("nextedit", "x", "# Lines 1-2, after the next edit:\n", 300, ("# end",))
    try:
        async with httpx.AsyncClient() as client:
            root = engine.url.removesuffix("/v1")
            record = await stream_request(client, root, "m", prompt, 16, 0.0, 0, keep_text=True)
    finally:
        await engine.stop()
    body = engine.requests[0].body
    assert body["stop"] == ["# end"] and body["ignore_eos"] is False
    assert body["max_tokens"] == 300
    assert record.ok and record.text == "a\nb\n"


@pytest.mark.asyncio
async def test_a_rewrite_that_runs_away_is_left_where_the_server_leaves_it() -> None:
    """`bench engine --prompts nextedit` times the answer the server reads: a rewrite that
    runs past its window is left at the line where the server stops reading, its stream
    closed, its text cut there (the same place for every engine: outputs compare)."""
    import httpx

    from copilot_lsp.bench.engine.prompts import nextedit_prompts
    from copilot_lsp.bench.engine.runner import stream_request
    from copilot_lsp.bench.nextedit.prompts import rewrite_request
    from copilot_lsp.testing.fake_engine import FakeEngine, Reply

    (prompt,) = nextedit_prompts(1)
    request = rewrite_request(next(s for s in STORED if s.id == prompt.name))
    assert prompt.cut is not None and request.expected is not None
    window = request.expected + "\n"
    assert prompt.cut(window) is None  # a rewrite that ends: read to its end
    looping = [window[:10], window[10:], "# +++ b/x.py\n# +", "++ b/x.py\n", *["x\n"] * 300]
    assert prompt.cut("".join(looping)) == len(window)
    engine = await FakeEngine().start()
    engine.default = Reply(chunks=looping, delay_s=0.002)
    try:
        async with httpx.AsyncClient() as client:
            root = engine.url.removesuffix("/v1")
            record = await stream_request(client, root, "m", prompt, 16, 0.0, 0, keep_text=True)
    finally:
        await engine.stop()
    assert record.ok and record.cut_at == len(window) and record.text == window
    assert record.tokens == 3  # left at the third chunk, the marker's line begun
    assert not engine.requests[0].finished


def test_the_diagnosis_verdict_follows_the_servers_rules() -> None:
    from copilot_lsp.bench.nextedit.prompts import rewrite_request
    from copilot_lsp.bench.nextedit.report import confidence_lines, diagnosis_table

    scenario = next(s for s in STORED if s.kind == "rename-local")
    request = rewrite_request(scenario)
    assert request.expected is not None
    window = "\n".join(request.window)
    undone = window.replace(
        scenario.steps[0].text, scenario.before[scenario.steps[0].start : scenario.steps[0].end]
    )
    assert request.verdict(request.expected + "\n", "stop") == "offered"
    assert request.verdict(window + "\n", "stop") == "no change"
    assert request.verdict(undone + "\n", "stop") == "reversal"
    assert request.verdict(request.expected, "length") == "unterminated (length)"
    looping = request.expected + "\n# +++ b/s000.py\n" * 30
    assert request.verdict(looping, "length") == "ran away: prompt repeated"
    assert request.verdict(window + "\n" + "x = 1\n" * 30, "length") == "ran away: line count"
    assert request.verdict("x = 1\n", "stop").startswith("doubtful: ")
    # the confidence gate, from the answer's tokens: one token per line, the changed ones
    # written at 0.9 (sure enough) or 0.1
    for probability, verdict in ((0.9, "offered"), (0.1, "not sure")):
        pieces = [
            (line, -0.01 if line in window + "\n" else math.log(probability))
            for line in (request.expected + "\n").splitlines(True)
        ]
        assert request.verdict(request.expected + "\n", "stop", logprobs=pieces) == verdict
        assert request.confidence(request.expected + "\n", pieces) == pytest.approx(probability)
    data = {
        "results": [{"id": scenario.id, "wants_edit": True}],
        "diagnosis": [
            {"id": scenario.id, "verdict": "offered", "window_right": True, "confidence": 0.9}
        ],
    }
    assert diagnosis_table(data) == {
        "offered": {"want_edit": 1, "want_none": 0},
        "model right": {"want_edit": 1, "want_none": 0},
    }
    assert confidence_lines(data)[-1] == "- an edit is right, right edit (1): 0.90"


def test_every_right_answer_of_the_suite_passes_the_servers_gates() -> None:
    """The reversal and confidence rules never drop the edit a scenario wants: a model that
    answers right is shown, in every kind of scenario."""
    from copilot_lsp.bench.nextedit.prompts import rewrite_request

    verdicts = {}
    for scenario in STORED:
        request = rewrite_request(scenario)
        if request.expected is not None:
            # the engine writes what follows the first line the prompt gave
            assert request.expected.startswith(request.prefill)
            written = request.expected.removeprefix(request.prefill) + "\n"
            verdicts[scenario.id] = request.verdict(written, "stop")
    assert len(verdicts) >= 25
    assert set(verdicts.values()) == {"offered"}
