"""Next-edit suggestions in real headless Neovim: our plugin (0.12-dev and 0.11) and the
Copilot-NES client copilotlsp-nvim/copilot-lsp (vendored, 0.12), against the real server and
the scripted engine answering a rewritten window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.editors.conftest import PLUGIN, run_neovim

pytestmark = pytest.mark.timeout(120)

SOURCE = "def scale(x, factor):\n    return x * factor\n\n\nprint(scale(2, 3))\n"
# The user renamed the parameter; the model renames its use.
RENAMED = SOURCE.replace("x", "count")
SCRIPT = PLUGIN / "tests" / "e2e.lua"
THIRD_PARTY = Path(__file__).parent / "third_party" / "copilot-lsp-nvim"
THIRD_PARTY_SCRIPT = Path(__file__).parent / "copilot_lsp_nvim.lua"
VERSIONS = ["0.12", "0.11"]


def rewritten(text: str = RENAMED) -> list[str]:
    """The model's answer: the window (the whole file), each line ended; the engine stops at
    the format's closing header, which it does not send."""
    return [text + "\n"]


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[FakeEngine]:
    fake = await FakeEngine().start()
    fake.default = Reply(chunks=rewritten())
    try:
        yield fake
    finally:
        await fake.stop()


def source_file(tmp_path: Path) -> Path:
    source = tmp_path / "scale.py"
    source.write_text(SOURCE)
    return source


@pytest.mark.parametrize("version", VERSIONS)
async def test_next_edit_is_drawn_jumped_to_applied_and_dismissed(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    source = source_file(tmp_path)
    run = await run_neovim(
        version,
        SCRIPT,
        isolated_env,
        tmp_path,
        scenario="next_edit",
        file=str(source),
        engine_url=engine.url,
    )
    assert run.result.get("error") is None, f"{run.result.get('error')}\n{run.stderr}"
    assert run.returncode == 0, run.stderr
    item = run.result["item"]
    # The use on the next line: "x" at (1, 11) becomes "count".
    assert item["text"] == "count"
    assert item["range"] == {
        "start": {"line": 1, "character": 11},
        "end": {"line": 1, "character": 12},
    }
    assert item["command"]["command"] == "copilot.acceptNextEdit"
    marks = sorted(run.result["marks"], key=lambda m: m.get("virt_text") is not None)
    deleted, inserted = marks
    span = (deleted["row"], deleted["col"], deleted["end_row"], deleted["end_col"])
    assert span == (1, 11, 1, 12)
    assert deleted["hl_group"] == "CopilotLspNextEditDelete"
    assert (inserted["row"], inserted["col"]) == (1, 12)
    assert inserted["virt_text"] == [["count", "CopilotLspNextEditAdd"]]
    assert inserted["virt_text_pos"] == "inline"
    # A stale edit is never applied.
    assert run.result["stale_applied"] is False
    assert run.result["after_stale"][1] == "    return x * factor"
    # <Esc> dismissed it, and no new request drew it again.
    after_escape = run.result["after_escape"]
    assert after_escape["visible"] is False and after_escape["marks"] == []
    assert after_escape["lines"][1] == "    return x * factor"
    # First <Tab> (Normal mode): the cursor jumps to the edit; nothing changes yet.
    jump = run.result["after_jump"]
    assert jump["cursor"] == [2, 11] and jump["visible"] is True and jump["mode"] == "n"
    assert jump["lines"][1] == "    return x * factor"
    # Second <Tab> (Insert mode): applied, cursor after the new text, still in Insert mode.
    assert run.result["lines"] == RENAMED.rstrip("\n").split("\n")
    assert run.result["cursor"] == [2, len("    return count")]
    assert run.result["mode"] == "i"
    outcomes = run.result["stats"]["next_edits"]["outcomes"]
    assert outcomes["accepted"] == 1 and outcomes["displayed"] >= 1
    # Only the <Esc> counts as a dismissal: typing over an edit, or a stale one, just clears it.
    assert outcomes.get("dismissed") == 1
    # Added lines: virtual lines above the line they go before.
    (line_mark,) = run.result["line_marks"]
    assert line_mark["row"] == 2 and line_mark["virt_lines_above"] is True
    assert line_mark["virt_lines"] == [
        [["z = 1", "CopilotLspNextEditAdd"]],
        [["y = 2", "CopilotLspNextEditAdd"]],
    ]
    assert run.result["line_dismissed"] is True
    # Several new lines inside a line: the replaced text marked, the result's lines below.
    split = sorted(run.result["split_marks"], key=lambda m: m.get("virt_lines") is not None)
    assert [(m["row"], m["col"], m.get("end_col")) for m in split] == [(1, 11, 16), (1, 0, None)]
    assert split[1]["virt_lines"] == [
        [["    return a", "CopilotLspNextEditAdd"]],
        [["b * factor", "CopilotLspNextEditAdd"]],
    ]


@pytest.mark.parametrize("version", VERSIONS)
async def test_ghost_text_takes_tab_before_a_next_edit(
    version: str, engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    source = tmp_path / "scale.py"
    renamed_def = SOURCE.replace("(x,", "(count,")
    source.write_text(renamed_def)
    # First the next edit (asked by hand), then the inline completion at the end of its line.
    engine.replies = [Reply(chunks=rewritten()), Reply(chunks=["  # scaled\n"])]
    run = await run_neovim(
        version,
        SCRIPT,
        isolated_env,
        tmp_path,
        scenario="next_edit_ghost_first",
        file=str(source),
        engine_url=engine.url,
    )
    assert run.result.get("error") is None, f"{run.result.get('error')}\n{run.stderr}"
    assert run.result["both"] == {"nextedit": True, "ghost": "  # scaled"}
    # The completion went in; the next edit, on the same line (<Tab> would apply it), did not.
    assert run.result["lines"][1] == "    return x * factor  # scaled"
    assert run.result["nextedit_after"] is False  # and the change removed it


async def test_copilot_lsp_nvim_shows_and_applies_our_next_edit_unchanged(
    engine: FakeEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    """copilotlsp-nvim/copilot-lsp, vendored unchanged, finds our server as `copilot_ls`,
    turns next edits on with Copilot's top-level `nextEditSuggestions` setting, draws the
    edit, applies it as its README's <Tab> does, and the server counts the accept."""
    source = source_file(tmp_path)
    env = {**isolated_env, "COPILOT_LSP_ENGINE_URL": engine.url}
    run = await run_neovim(
        "0.12",
        THIRD_PARTY_SCRIPT,
        env,
        tmp_path,
        file=str(source),
        third_party=str(THIRD_PARTY),
    )
    assert run.result.get("error") is None, f"{run.result.get('error')}\n{run.stderr}"
    assert run.returncode == 0, run.stderr
    state = run.result["state"]
    assert state["text"] == "count" and state["newText"] == "count"
    assert state["range"] == {
        "start": {"line": 1, "character": 11},
        "end": {"line": 1, "character": 12},
    }
    drawn = run.result["marks"]
    assert any(m.get("hl_group") == "CopilotLspNesDelete" and m["row"] == 1 for m in drawn), drawn
    assert any("count" in str(m.get("virt_text") or m.get("virt_lines")) for m in drawn), drawn
    assert run.result["walked"] is True and run.result["cursor_at_start"] == [2, 11]
    assert run.result["walked_again"] is False  # at the start already: the next step applies
    assert run.result["applied"] is True
    assert run.result["lines"] == RENAMED.rstrip("\n").split("\n")
    assert run.result["state_after"] is False
    outcomes = run.result["stats"]["next_edits"]["outcomes"]
    assert outcomes["accepted"] == 1 and outcomes["displayed"] >= 1
