"""The model's answer read as it streams: cut short once it cannot be a rewrite of the window.

A small model often never writes the format's closing line: it copies the window, then goes
on copying the prompt (the history's diff headers, over and over) until the token limit, and
that answer is dropped anyway, after seconds of engine time (docs/benchmarks/nextedit). The
watch stops reading at the first sure sign, and the engine's stream is closed (which aborts
the request in vLLM):

- the answer has more lines than the window plus `max_changed_lines`: the `doubtful` rule
  (nextedit/gate.py) drops such an answer whatever follows, so nothing is lost by cutting;
- a line of the answer starts with one of the format's `runaway` markers (the prompt's own
  headers: `# Lines 1-8, ...`, `# +++ b/x.py`), which no rewrite of the window holds, unless
  the window itself has such a line.
"""

from __future__ import annotations

from collections.abc import Sequence

from copilot_lsp.nextedit.prompt import NextEditFormat


class AnswerWatch:
    """Feeds on the answer's text as it arrives; `feed` says why it ran away, once it has."""

    def __init__(
        self,
        form: NextEditFormat,
        window: Sequence[str],
        language_id: str,
        max_changed_lines: int,
    ) -> None:
        window_text = "\n" + "\n".join(window)
        self._start = form.answer_start
        self._most_lines = len(window) + max_changed_lines
        self._markers = [
            marker
            for marker in form.runaway_markers(language_id)
            if "\n" + marker not in window_text
        ]
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, text: str) -> str | None:
        """Take the next piece of the answer; a reason when the answer can no longer be a
        rewrite of the window (stop reading), else None."""
        if not text:
            return None
        self._parts.append(text)
        answer = self.text.replace("\r\n", "\n")
        if self._start is not None and self._start in answer:
            answer = answer.rsplit(self._start, 1)[1]
        lines = answer.count("\n") + (not answer.endswith("\n"))
        if lines > self._most_lines:
            return f"the answer has more than {self._most_lines} lines"
        lined = "\n" + answer
        for marker in self._markers:
            if "\n" + marker in lined:
                return f"the answer repeats the prompt's {marker.strip()!r}"
        return None
