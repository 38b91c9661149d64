"""The rewrite requests the server sends for the suite's scenarios, built without a server:
the same history (the steps recorded as the server records didChange), window, format and
token limit as NextEditService._request, for measuring engines on next-edit work alone
(`bench engine --prompts nextedit`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from copilot_lsp.bench.nextedit.suite import Scenario
from copilot_lsp.nextedit import gate
from copilot_lsp.nextedit.answer import AnswerWatch
from copilot_lsp.nextedit.diff import hunks, merged
from copilot_lsp.nextedit.history import EditHistory, EditStep, as_before
from copilot_lsp.nextedit.prompt import PromptParts, load_format
from copilot_lsp.nextedit.service import CHARS_PER_TOKEN, TOKEN_MARGIN
from copilot_lsp.nextedit.window import Window, context_lines, file_excerpt, window_at
from copilot_lsp.positions import line_starts
from copilot_lsp.settings_features import NextEditSettings

LANGUAGE = "python"
DEFAULTS = NextEditSettings()
"""The settings the server runs with unless told otherwise (nextEditSuggestions.*)."""
WINDOW = (DEFAULTS.lines_above, DEFAULTS.lines_below)
HISTORY_CHARS = DEFAULTS.history_chars
MIN_CONFIDENCE = DEFAULTS.min_confidence
EMBEDDED_FORMAT = "fenced"
"""The format the server picks for the embedded model (SmolLM2): the workloads' default."""


@dataclass(frozen=True, slots=True)
class RewriteRequest:
    scenario: str
    prompt: str
    max_tokens: int
    stop: tuple[str, ...]
    expected: str | None
    """The window as the right answer has it (None: no edit is right, the window as it is)."""
    window: tuple[str, ...] = ()
    steps: list[EditStep] = field(default_factory=list)
    """The document's history steps, newest first (for the reversal gate)."""
    format_name: str = EMBEDDED_FORMAT
    first: int = 0
    """The document line the window starts at."""
    prefill: str = ""
    """The answer's start that the prompt ends with (`NextEditFormat.prefill`): an engine's
    answer is this followed by its text. The methods below take the engine's text."""

    def verdict(
        self,
        answer: str,
        finish: str | None,
        max_changed_lines: int = 8,
        logprobs: Sequence[tuple[str, float]] = (),
        min_confidence: float = MIN_CONFIDENCE,
    ) -> str:
        """What the server makes of `answer` (with its tokens' `logprobs`, when known):
        `offered`, or why nothing is (the rules of NextEditService._find, its diff and
        gates)."""
        form = load_format(self.format_name)
        runaway = self._runaway(answer, max_changed_lines)
        if runaway is not None:
            why = runaway[1]
            return "ran away: " + ("line count" if "lines" in why else "prompt repeated")
        if finish != "stop":
            return f"unterminated ({finish})"
        old, new = list(self.window), form.answer(self.prefill + answer).split("\n")
        found = hunks(old, new)
        edit = merged(found, old, new)
        if edit is None:
            return "no change"
        doubt = gate.doubtful(edit, old, new, max_changed_lines)
        if doubt is not None:
            if doubt.startswith("the answer has"):
                return "doubtful: line count"
            return "doubtful: " + ("too many lines" if "lines" in doubt else "rewrites the window")
        window = Window(self.first, self.window, 0, 0)
        if gate.blocks(found, edit, window, self.steps) is not None:
            return "reversal"
        sure = self.confidence(answer, logprobs, max_changed_lines)
        if sure is not None and sure < min_confidence:
            return "not sure"
        return "offered"

    def cut(self, answer: str, max_changed_lines: int = 8) -> int | None:
        """Where the server stops reading `answer` (the start of the line at which it saw the
        answer run away: the same place however the answer was streamed), None when it
        reads on."""
        runaway = self._runaway(answer, max_changed_lines)
        return None if runaway is None else runaway[0]

    def _runaway(self, answer: str, max_changed_lines: int) -> tuple[int, str] | None:
        """The server's answer watch fed line by line: the start of the line at which it
        stops reading, and why; None when it reads on."""
        form = load_format(self.format_name)
        watch = AnswerWatch(form, self.window, LANGUAGE, max_changed_lines, self.prefill)
        start = 0
        for line in answer.split("\n"):
            piece = line if start + len(line) == len(answer) else line + "\n"
            why = watch.feed(piece)
            if why is not None:
                return start, why
            start += len(piece)
        return None

    def confidence(
        self, answer: str, logprobs: Sequence[tuple[str, float]], max_changed_lines: int = 8
    ) -> float | None:
        """The confidence gate's score of the edit in `answer` (None: no edit, or no
        log-probabilities to judge by)."""
        form = load_format(self.format_name)
        watch = AnswerWatch(form, self.window, LANGUAGE, max_changed_lines, self.prefill)
        watch.feed(answer, logprobs)
        old, new = list(self.window), form.answer(self.prefill + answer).split("\n")
        return watch.confidence(hunks(old, new))


def rewrite_request(
    scenario: Scenario,
    format_name: str = EMBEDDED_FORMAT,
    path: str | None = None,
    window_lines: tuple[int, int] = WINDOW,
) -> RewriteRequest:
    """The request for `scenario`; `path`: the document's path as the prompt shows it;
    `window_lines`: lines above and below the cursor's line (the server's linesAbove,
    linesBelow)."""
    form = load_format(format_name)
    path = path or f"{scenario.id}.py"
    history = EditHistory(clock=lambda: 0.0)
    text = scenario.before
    for step in scenario.steps:
        new = text[: step.start] + step.text + text[step.end :]
        history.record(path, path, (text, line_starts(text)), (new, line_starts(new)))
        text = new
    starts = line_starts(text)
    window = window_at(text, starts, scenario.cursor, *window_lines)
    context = form.context_lines
    parts = PromptParts(
        path=path,
        language_id=LANGUAGE,
        window=window,
        original="\n".join(as_before(window, history.of(path))),
        history=history.render(HISTORY_CHARS, lambda step: form.event_text(step, LANGUAGE)),
        file=file_excerpt(text, starts, window, form.file_chars) if form.file_chars else "",
        before=context_lines(text, starts, window.first - context, window.first - 1)
        if context
        else "",
        after=context_lines(text, starts, window.last + 1, window.last + context)
        if context
        else "",
    )
    size = sum(len(line) + 1 for line in window.lines)
    expected = None
    if scenario.expected is not None:
        lines = scenario.expected.split("\n")
        grown = len(lines) - len(text.split("\n"))
        expected = "\n".join(lines[window.first : window.last + 1 + grown])
    return RewriteRequest(
        scenario.id,
        form.render(parts),
        size // CHARS_PER_TOKEN + TOKEN_MARGIN,
        tuple(form.stops(LANGUAGE)),
        expected,
        window.lines,
        history.of(path),
        format_name,
        window.first,
        form.prefill(window),
    )
