"""Fitting a finished completion to the file: its syntax, indentation style and line endings,
and the closers right of the cursor it replaces."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from copilot_lsp.completion.assembly import PromptRequest
from copilot_lsp.completion.mode import Mode, only_closers
from copilot_lsp.completion.window import CursorContext
from copilot_lsp.context.languages import grammar
from copilot_lsp.context.validate import trim_to_valid_syntax

_LEADING = re.compile(r"^[ \t]*")
_INDENTS = re.compile(r"^([ \t]*)[^ \t\r\n\f\v]", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FileStyle:
    """How the file indents and ends its lines."""

    indent: str | None = None
    """One indentation step (a tab, or some number of spaces); None when the file does not
    show one, and then the model's own indentation is kept."""
    eol: str = "\n"


def detect_style(text: str) -> FileStyle:
    """The indentation step and line ending most of `text` uses."""
    eol = "\r\n" if "\r\n" in text else "\n"
    tabs = 0
    widths: Counter[int] = Counter()
    previous = 0
    # The leading whitespace of every non-blank line, found in C (this runs per completion
    # on a window of the file).
    for leading in _INDENTS.findall(text):
        if leading.startswith("\t"):
            tabs += 1
            continue
        width = len(leading)
        if width != previous:
            step = abs(width - previous)
            if step in (2, 3, 4, 8):
                widths[step] += 1
        previous = width
    if tabs and tabs >= sum(widths.values()):
        return FileStyle("\t", eol)
    if widths:
        return FileStyle(" " * widths.most_common(1)[0][0], eol)
    return FileStyle(None, eol)


def completion_indent_step(lines: list[str]) -> str | None:
    """The indentation step the completion itself uses, when it indents at all."""
    spaces: Counter[int] = Counter()
    for line in lines:
        leading = _LEADING.match(line).group(0)  # type: ignore[union-attr]
        if "\t" in leading:
            return "\t"
        if leading:
            spaces[len(leading)] += 1
    if not spaces:
        return None
    step = math.gcd(*spaces)
    return " " * (step if step in (2, 3, 4, 8) else min(spaces))


def normalize_indentation(completion: str, style: FileStyle, base_indent: str) -> str:
    """Re-indent lines after the first from the model's step to the file's step.

    Only the part beyond `base_indent` (the indentation the cursor's block already has)
    is converted, so a completion in a 4-space file is never touched and a model writing
    4-space Python into a 2-space or tab-indented file fits the file.
    """
    lines = completion.split("\n")
    if len(lines) < 2 or style.indent is None:
        return completion
    body = [line for line in lines[1:] if line.strip()]
    relative = [line[len(base_indent) :] if line.startswith(base_indent) else line for line in body]
    step = completion_indent_step(relative)
    if step is None or step == style.indent:
        return completion
    converted = [lines[0]]
    for line in lines[1:]:
        if not line.strip() or not line.startswith(base_indent):
            converted.append(line)
            continue
        rest = line[len(base_indent) :]
        leading = _LEADING.match(rest).group(0)  # type: ignore[union-attr]
        levels, remainder = divmod(len(leading.expandtabs(len(step))), len(step))
        converted.append(
            base_indent + style.indent * levels + " " * remainder + rest[len(leading) :]
        )
    return "\n".join(converted)


def apply_line_endings(completion: str, style: FileStyle) -> str:
    """The completion with the file's line endings (the model may write \\n in a CRLF file)."""
    plain = completion.replace("\r\n", "\n")
    return plain.replace("\n", style.eol) if style.eol != "\n" else plain


def replaced_closers(context: CursorContext, completion: str) -> int:
    """How many characters right of the cursor the completion replaces.

    When only closing brackets/quotes follow the cursor (often typed by the editor's
    auto-pairing) and the completion ends with the same closers, the item replaces them
    rather than duplicating them: `foo(|)` + `x)` gives `foo(x)`, not `foo(x))`.
    """
    rest = context.line_after_cursor
    closers = rest.strip()
    if closers and only_closers(rest) and completion.rstrip().endswith(closers):
        return len(rest)
    return 0


def fit_to_file(
    completion: str, request: PromptRequest, context: CursorContext, mode: Mode, filters: bool
) -> str:
    """Trim lines that break the file's syntax, match its indentation (both filters), and
    always its line endings."""
    if not completion.strip():
        return completion
    text, offset = request.text, request.offset
    language = grammar(request.language_id) if request.tree is not None else None
    if filters and language is not None and mode is Mode.MULTI_LINE:
        # Judge the file as it will read after accepting, closers replaced included.
        end = offset + replaced_closers(context, completion)
        completion = trim_to_valid_syntax(
            language, text[:offset], completion, text[end:], syntax=request.tree
        )
    line_start = text.rfind("\n", 0, offset) + 1
    cursor_line = text[line_start:offset]
    base_indent = cursor_line[: len(cursor_line) - len(cursor_line.lstrip(" \t"))]
    # A few hundred lines show the indentation step; the whole file would cost more per
    # completion than the rest of the server.
    window = text[max(0, offset - 8_000) : offset + 2_000]
    style = detect_style(window)
    if filters:
        completion = normalize_indentation(completion, style, base_indent)
    return apply_line_endings(completion, style)
