"""Next-edit prompt formats (configs/nextedit/*.toml), chosen by the served model.

A format names where the file, the recent edits, the window as it was, the window now (with
the cursor marked) and the context around it go, how one edit of the history reads, and the
stop sequences that end the model's answer after the window. Like the completion families
(completion/families.py), a format declares the served models it fits (`detect`, over the
model's id and weights path) and the completion families it goes with (`families`); the
setting `nextEditSuggestions.format` overrides both; `plain` fits any model.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

from copilot_lsp import paths
from copilot_lsp.completion.templates import comment_leader
from copilot_lsp.errors import ConfigError
from copilot_lsp.nextedit.history import EditStep
from copilot_lsp.nextedit.window import Window

FALLBACK_FORMAT = "plain"
_PLACEHOLDER = re.compile(
    r"\{(path|file|history|original|current|before|after|start|end|comment|diff|accepted)\}"
)


class NextEditFormat(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    template: str
    """The prompt: `{path}`, `{file}`, `{history}`, `{original}`, `{current}` (the window with
    the cursor marker), `{before}`/`{after}` (context lines around the window, each line
    ending in a line break), `{start}`/`{end}` (the window's 1-based lines), `{comment}`."""
    event: str
    """One step of the edit history: `{path}`, `{diff}` (unified), `{before}`/`{after}` (its
    lines), `{accepted}` (`accepted_note` for a suggestion the user accepted, else empty)."""
    accepted_note: str = ""
    comment_events: bool = False
    """Put the language's comment leader before every line of the history."""
    cursor_marker: str | None = None
    answer_start: str | None = None
    """When the answer holds this, it starts after its last occurrence."""
    prefill_first_line: bool = False
    """End the prompt with the window's first line (no line break): the answer's start, given
    to the model, which goes on copying the window from there (a small model left to start
    the copy itself repeats the prompt's headers instead). The server reads the answer as
    this line followed by what the model wrote (`prefill`)."""
    stop: list[str] = []
    """Stop sequences; `{comment}` is the language's line-comment leader."""
    runaway: list[str] = []
    """Line starts no rewrite of the window holds (the prompt's own headers, `{comment}`
    filled): an answer with such a line has run past the window (nextedit/answer.py)."""
    detect: list[str] = []
    families: list[str] = []
    context_lines: int = 0
    """Lines of `{before}` and `{after}`."""
    file_chars: int = 6000
    """Characters of `{file}`: the whole document, or the lines around the window."""

    def stops(self, language_id: str) -> list[str]:
        return [fill(stop, {"comment": comment_leader(language_id)}) for stop in self.stop]

    def runaway_markers(self, language_id: str) -> list[str]:
        return [fill(marker, {"comment": comment_leader(language_id)}) for marker in self.runaway]

    def prefill(self, window: Window) -> str:
        """The answer's start that the prompt gives (`prefill_first_line`), else empty."""
        return window.lines[0] if self.prefill_first_line and window.lines else ""

    def render(self, parts: PromptParts) -> str:
        """The prompt for `parts`, ending with the answer's `prefill`; the edit history is
        rendered beforehand (`event_text`)."""
        window = parts.window
        return self._fill(parts) + self.prefill(window)

    def _fill(self, parts: PromptParts) -> str:
        window = parts.window
        return fill(
            self.template,
            {
                "path": parts.path,
                "file": parts.file,
                "history": parts.history,
                "original": parts.original,
                "current": window.text(self.cursor_marker),
                "before": _with_breaks(parts.before),
                "after": _with_breaks(parts.after),
                "start": str(window.first + 1),
                "end": str(window.last + 1),
                "comment": comment_leader(parts.language_id),
            },
        )

    def event_text(self, step: EditStep, language_id: str) -> str:
        """One step of the edit history as this format writes it."""
        text = fill(
            self.event,
            {
                "path": step.path,
                "diff": step.unified(),
                "before": "\n".join(step.before),
                "after": "\n".join(step.after),
                "accepted": self.accepted_note if step.accepted else "",
            },
        )
        return commented(text, language_id) if self.comment_events else text

    def answer(self, text: str) -> str:
        """The window's new lines out of the model's answer, `\\n`-separated."""
        return self.answer_offsets(text)[0]

    def answer_offsets(self, text: str) -> tuple[str, list[int]]:
        """`answer(text)`, and where each of its characters is in `text`: CRLF read as LF,
        what precedes the last `answer_start` and every cursor marker left out, one final
        line break dropped."""
        at = [i for i, char in enumerate(text) if char != "\r" or text[i + 1 : i + 2] != "\n"]
        plain = "".join(text[i] for i in at)
        if self.answer_start is not None and self.answer_start in plain:
            cut = plain.rindex(self.answer_start) + len(self.answer_start)
            plain, at = plain[cut:], at[cut:]
        marker = self.cursor_marker
        if marker and marker in plain:
            kept: list[int] = []
            start = 0
            while (found := plain.find(marker, start)) >= 0:
                kept.extend(range(start, found))
                start = found + len(marker)
            kept.extend(range(start, len(plain)))
            plain, at = "".join(plain[j] for j in kept), [at[j] for j in kept]
        if plain.endswith("\n"):
            plain, at = plain[:-1], at[:-1]
        return plain, at


@dataclass(frozen=True, slots=True)
class PromptParts:
    path: str
    language_id: str
    window: Window
    original: str
    """The window's lines as they were before the recent edits."""
    history: str
    file: str = ""
    before: str = ""
    after: str = ""


def _with_breaks(text: str) -> str:
    return text + "\n" if text else ""


def fill(template: str, values: dict[str, str]) -> str:
    """The template with its placeholders replaced, in one pass: code that holds `{path}`
    stays as it is."""
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)


def commented(text: str, language_id: str) -> str:
    leader = comment_leader(language_id)
    return "".join(f"{leader} {line}".rstrip() + "\n" for line in text.splitlines())


def available_formats() -> list[str]:
    return sorted(path.stem for path in (paths.configs_root() / "nextedit").glob("*.toml"))


@functools.cache
def load_format(name: str) -> NextEditFormat:
    path = paths.configs_root() / "nextedit" / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(available_formats()) or "none"
        raise ConfigError(f"no next-edit format {name!r} in configs/nextedit (known: {known})")
    try:
        return NextEditFormat.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as error:
        raise ConfigError(f"invalid next-edit format file {path}: {error}") from None


def choose_format(
    configured: str | None, served_names: Iterable[str | None], family: str | None
) -> NextEditFormat:
    """The configured format; else the first whose `detect` matches a served model's name;
    else the first that goes with the completion `family`; else `plain`."""
    if configured is not None:
        return load_format(configured)
    formats = [load_format(name) for name in available_formats()]
    names = [name for name in served_names if name]
    for candidate in formats:
        for pattern in candidate.detect:
            if any(re.search(pattern, name, re.IGNORECASE) for name in names):
                return candidate
    for candidate in formats:
        if family is not None and family in candidate.families:
            return candidate
    return load_format(FALLBACK_FORMAT)
