"""Recent edits coalesced into steps, newest first, rendered under a budget."""

from __future__ import annotations

from copilot_lsp.nextedit.history import EditHistory, as_before
from copilot_lsp.nextedit.window import window_at
from copilot_lsp.positions import line_starts


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def typed(history: EditHistory, uri: str, old: str, new: str, **kwargs: bool) -> None:
    history.record(
        uri, uri.rsplit("/", 1)[-1], (old, line_starts(old)), (new, line_starts(new)), **kwargs
    )


def type_burst(history: EditHistory, text: str, at: int, word: str) -> str:
    for char in word:
        new = text[:at] + char + text[at:]
        typed(history, "file:///a.py", text, new)
        text, at = new, at + 1
    return text


def test_a_burst_of_typing_on_one_line_is_one_step() -> None:
    history = EditHistory(Clock())
    text = "def f():\n    return 1\n"
    after = type_burst(history, text, text.index("1"), "x + ")
    assert len(history) == 1
    (step,) = history
    assert step.before == ["    return 1"] and step.after == ["    return x + 1"]
    assert step.first == 1
    assert after.endswith("return x + 1\n")
    assert step.change() == ("", "x + ")


def test_unified_diff_numbers_lines_as_in_the_document() -> None:
    history = EditHistory(Clock())
    text = "a\nb\nc\nd\n"
    typed(history, "file:///src/a.py", text, text.replace("c", "C"))
    (step,) = history
    assert step.unified().split("\n") == [
        "--- a/a.py",
        "+++ b/a.py",
        "@@ -3 +3 @@",
        "-c",
        "+C",
    ]


def test_a_pause_or_a_distant_line_starts_a_new_step_newest_first() -> None:
    clock = Clock()
    history = EditHistory(clock)
    text = "".join(f"x{n} = {n}\n" for n in range(20))
    text = type_burst(history, text, len("x0 = 0"), "1")
    far = text.index("x15 = 15") + len("x15 = 15")
    text = type_burst(history, text, far, "9")  # another line, far away
    clock.now += 10
    type_burst(history, text, far + 1, "8")  # the same line, after a pause
    assert [step.after for step in history] == [["x15 = 1598"], ["x15 = 159"], ["x0 = 01"]]


def test_an_added_line_joins_the_step_of_the_line_above_it() -> None:
    history = EditHistory(Clock())
    text = "if x:\n    a()\nz()\n"
    text = type_burst(history, text, text.index("()\nz"), "b")
    text = type_burst(history, text, text.index("\nz"), "\n    c()")
    (step,) = history
    assert step.before == ["    a()", "z()"]
    assert step.after == ["    ab()", "    c()", "z()"]
    assert "@@ -2,2 +2,3 @@" in step.unified()


def test_a_deleted_line_is_a_step_with_no_line_after() -> None:
    history = EditHistory(Clock())
    text = "a\nremove me\nb\n"
    typed(history, "file:///a.py", text, "a\nb\n")
    (step,) = history
    assert step.change() == ("remove me\n", "")
    assert "-remove me" in step.unified()


def test_an_accepted_suggestion_is_a_step_of_its_own_marked() -> None:
    history = EditHistory(Clock())
    text = type_burst(history, "x = 1\n", 5, "0")
    typed(history, "file:///a.py", text, text.replace("10", "100"), accepted=True)
    text = text.replace("10", "100")
    type_burst(history, text, len("x = 100"), "0")
    assert [step.accepted for step in history] == [False, True, False]


def test_steps_of_several_files_render_oldest_first_within_the_budget() -> None:
    history = EditHistory(Clock())
    typed(history, "file:///a.py", "a = 1\n", "a = 2\n")
    typed(history, "file:///b.py", "b = 1\n", "b = 2\n")
    both = history.render(1000, lambda step: f"[{step.path} {step.after[0]}]")
    assert both == "[a.py a = 2][b.py b = 2]"
    assert history.render(14, lambda step: f"[{step.path} {step.after[0]}]") == "[b.py b = 2]"
    history.forget("file:///b.py")
    assert [step.path for step in history] == ["a.py"]


def test_as_before_undoes_the_steps_inside_the_window_and_follows_lines_above() -> None:
    clock = Clock()
    history = EditHistory(clock)
    text = "".join(f"v{n} = {n}\n" for n in range(30))
    new = text.replace("v20 = 20", "v20 = 200")
    typed(history, "file:///a.py", text, new)
    clock.now += 10
    newer = new.replace("v2 = 2\n", "v2 = 2\nextra = 1\n")  # a line added above
    typed(history, "file:///a.py", new, newer)
    starts = line_starts(newer)
    window = window_at(newer, starts, starts[21], 2, 2)
    assert "v20 = 200" in window.lines
    before = as_before(window, history.of("file:///a.py"))
    assert "v20 = 20" in before and "v20 = 200" not in before
