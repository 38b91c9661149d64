"""A tiny replay through the real server over stdio, against the scripted engine.

The scripted engine always proposes a new line `value = compute(x)` (then `print(value)`,
which the filters drop as a repeat of the line below), so in the hole where that is exactly
the missing statement the user takes it with Tab; in the edit nothing fits and they type on.

The keys follow events, not the clock (`by_events`): on the drawn schedule the hole's
suggestion had to be on screen a reaction time before the first key (1 s after the start) and
each of the two characters typed ahead of Tab answered within about 100 ms, which a loaded
host does not always do.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from copilot_lsp.bench.replay import figures
from copilot_lsp.bench.replay.run import SCRIPTED, Arm, Plan, run_replay
from copilot_lsp.client.replay.editor import ScriptedEditor
from copilot_lsp.client.replay.session import Session
from copilot_lsp.errors import CopilotLspError

pytestmark = pytest.mark.timeout(120)

HOLE = Session(
    id="hole-test-3",
    kind="hole",
    path="pkg/calc.py",
    before="import os\n\nx = os.sep\n",
    target="value = compute(x)",
    after="\nprint(value)\n",
)
EDIT = Session(
    id="edit-test-3",
    kind="edit",
    path="pkg/count.py",
    before="def g(items):\n    for item in items:\n        total = ",
    target="len(item) + 1",
    after="\n    return total\n",
)


async def by_events(editor: ScriptedEditor, due: float, reaction_s: float) -> None:
    """The hole's user waits for every answer and looks at its ghost text for their reaction
    time before the next key; the edit's user types on before any answer can come: this
    returns without letting the event loop turn, so no answer has been read when the key goes
    out, and each request waits out the server's 200 ms debounce anyway."""
    session = editor.session
    if session is None or session.kind != "hole":
        return
    await editor.answer()
    shown = editor.ghost_since()
    if shown is None:
        return
    while (left := shown + reaction_s - editor.loop.time()) > 0:  # sleep() may end a hair early
        await asyncio.sleep(left + 0.001)


@pytest.mark.timeout(300)  # a hang guard: under a load average of 20 on 2 cores it took 96 s
def test_a_tiny_replay_accepts_the_right_suggestion_and_cancels_while_typing(
    isolated_process_env: dict[str, str], tmp_path: Path
) -> None:
    arm = Arm(SCRIPTED, SCRIPTED, {"completion": {"debounceMs": 200}})
    plan = Plan([HOLE, EDIT], repeats=1, pace=by_events)
    data = run_replay([arm], plan, state_dir=tmp_path, log=print)
    (run,) = data["runs"]
    records = run["records"]
    hole = [r for r in records if r["session"] == HOLE.id]
    edit = [r for r in records if r["session"] == EDIT.id]
    # The hole: the start-of-session suggestion is exactly the statement; it is taken.
    assert hole[0]["trigger"] == "start" and hole[0]["visible"]
    assert hole[0]["matched_chars"] == len(HOLE.target) == hole[0]["shown_chars"]
    taken = [r for r in hole if r["accepted"] == "full"]
    assert len(taken) == 1
    assert run["typed_chars"] + run["accepted_chars"] == len(HOLE.target) + len(EDIT.target)
    assert run["accepted_chars"] >= len(HOLE.target) - 3
    # The server heard the accept command for that completion.
    accepted_ids = {c["id"] for c in run["completions"] if c.get("feedback") == "accepted"}
    assert accepted_ids == set(taken[0]["completion_ids"])
    # The edit: typed over keystroke by keystroke; the editor cancels every request it is
    # still waiting for when the next key comes (all but the last), the server answers -32800.
    assert not any(r["accepted"] for r in edit)
    assert len(edit) == len(EDIT.target) + 1  # the start, then one per key
    assert [r["cancelled_by_editor"] for r in edit] == [True] * len(EDIT.target) + [False]
    assert any(r["outcome"] == "cancelled" for r in edit)
    summary = figures.summarise(data)["arms"][SCRIPTED]
    assert summary["latency"]["first_ghost_ms"]["p50"] is not None
    assert summary["proxy"]["matched_chars"] >= len(HOLE.target)
    assert summary["tokens"]["useful"] > 0
    assert summary["tokens"]["server_total"] >= summary["tokens"]["useful"]
    assert data["sessions"][0]["id"] == HOLE.id and data["reference"] == SCRIPTED


def test_an_arm_on_another_checkouts_server_that_does_not_start_says_what_it_printed(
    isolated_process_env: dict[str, str], tmp_path: Path
) -> None:
    package = tmp_path / "before" / "server" / "copilot_lsp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "__main__.py").write_text(
        'raise SystemExit("this old server wants another Python")\n', encoding="utf-8"
    )
    arm = Arm("before", SCRIPTED, checkout=str(tmp_path / "before"))
    with pytest.raises(CopilotLspError, match=r"(?s)did not start.*wants another Python"):
        run_replay([arm], Plan([HOLE], repeats=1), state_dir=tmp_path / "state", log=print)
