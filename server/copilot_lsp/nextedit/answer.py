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

It also keeps the tokens' log-probabilities when the engine sends them, for `confidence`:
how sure the model was of the edit, read from the tokens that write the changed part of the
answer (a copy of the window costs the model nothing; the change is where it hesitates).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

from copilot_lsp.nextedit.diff import Hunk
from copilot_lsp.nextedit.prompt import NextEditFormat


class AnswerWatch:
    """Feeds on the answer's text as it arrives; `feed` says why it ran away, once it has.
    `prefill`: the answer's start that the prompt gave (`NextEditFormat.prefill`), the first
    part of `text`; the model's text follows it."""

    def __init__(
        self,
        form: NextEditFormat,
        window: Sequence[str],
        language_id: str,
        max_changed_lines: int,
        prefill: str = "",
    ) -> None:
        window_text = "\n" + "\n".join(window)
        self._form = form
        self._start = form.answer_start
        self._most_lines = len(window) + max_changed_lines
        self._markers = [
            marker
            for marker in form.runaway_markers(language_id)
            if "\n" + marker not in window_text
        ]
        self._parts: list[str] = [prefill] if prefill else []
        self._size = len(prefill)
        self._tokens: list[tuple[int, int, float]] = []
        """(start, end, log-probability) of each token, its characters in the answer."""

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, text: str, logprobs: Sequence[tuple[str, float]] = ()) -> str | None:
        """Take the next piece of the answer (and its tokens' log-probabilities); a reason
        when the answer can no longer be a rewrite of the window (stop reading), else None."""
        self._take_tokens(text, logprobs)
        if not text:
            return None
        self._parts.append(text)
        self._size += len(text)
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

    def _take_tokens(self, text: str, logprobs: Sequence[tuple[str, float]]) -> None:
        """Each token's characters: in turn along `text` when the tokens spell it, else all
        of `text` for each (a stop string cut, a character split across tokens)."""
        start = self._size
        if sum(len(token) for token, _ in logprobs) == len(text):
            for token, logprob in logprobs:
                self._tokens.append((start, start + len(token), logprob))
                start += len(token)
        else:
            self._tokens.extend((start, start + len(text), logprob) for _, logprob in logprobs)

    def confidence(self, found: Sequence[Hunk]) -> float | None:
        """How sure the model was of the edit made of the hunks `found` (of the answer
        against the window): the geometric mean of the probabilities of the tokens that
        write characters the window did not have there (a hunk's lines share most of theirs:
        those are copies), and, for a deletion, of the token written in the removed text's
        place. None when the engine sent no log-probabilities (nothing to judge by)."""
        if not self._tokens:
            return None
        _, at = self._form.answer_offsets(self.text)
        chosen: set[int] = set()
        for start, end in _changes(found):
            if start < end:
                low, high = at[start], at[end - 1] + 1
            else:  # the next token: the answer goes on there, or ends
                low = at[start] if start < len(at) else at[-1] + 1 if at else 0
                high = low + 1
            for index, (first, last, _) in enumerate(self._tokens):
                # a token without characters (a stop string's) sits where it was written
                if first < high and max(last, first + 1) > low:
                    chosen.add(index)
                    if start == end:
                        break
        if not chosen:
            return None
        mean = sum(self._tokens[index][2] for index in chosen) / len(chosen)
        return math.exp(mean)


def _changes(found: Sequence[Hunk]) -> list[tuple[int, int]]:
    """The answer's spans (offsets in its window text) that the hunks write anew, character
    by character; an empty span where a hunk only deletes."""
    spans = []
    for hunk in found:
        matcher = difflib.SequenceMatcher(None, hunk.removed, hunk.text, autojunk=False)
        for tag, _, _, start, end in matcher.get_opcodes():
            if tag != "equal":
                spans.append((hunk.new_start + start, hunk.new_start + end))
    return spans
