"""Prompt assembly under a token budget.

The budget is shared in a fixed order: the prefix window first (it matters most), then the
suffix window (fill-in-the-middle formats only), then snippets in order of usefulness:
headers of the definitions the cursor is in, the file's imports (when the window does not
reach them), definitions of names used near the cursor from this and other open documents,
code from the rest of the workspace (completion/crossfile.py), recently edited places. Every
snippet passes `context/secrets.redact` first: a key written in another file never reaches
the engine. The
window's first line snaps to a multiple of `ANCHOR` lines, so typing moves the prompt's start
rarely and vLLM's prefix cache keeps serving the unchanged head.

Everything before the cursor's line stays byte-identical while the user types on it: the
cursor's line is charged a fixed `CURSOR_LINE_RESERVE` tokens (the window and the snippets
that fit do not shift with each character), and snippets are chosen from the window without
the cursor's line (a name half typed there neither adds nor drops one).
"""

from __future__ import annotations

import bisect
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import tree_sitter

from copilot_lsp.completion.alignment import split_trailing_whitespace
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.crossfile import Repository, charge
from copilot_lsp.completion.templates import PromptTemplate, Snippet, comment_leader
from copilot_lsp.completion.window import CursorContext
from copilot_lsp.context import snippets
from copilot_lsp.context.definition_cache import FileDefinitions
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.recent import similarity, words
from copilot_lsp.context.secrets import redact
from copilot_lsp.positions import line_content

logger = logging.getLogger(__name__)

ANCHOR = 8
CURSOR_LINE_RESERVE = 48
"""Tokens the cursor's line is charged at least, whatever has been typed on it so far."""
PREFIX_SHARE = 0.6
SUFFIX_SHARE = 0.15


@dataclass(frozen=True, slots=True)
class OtherDocument:
    """An open document that may hold definitions the cursor's code uses."""

    path: str
    definitions: Callable[[], snippets.Definitions]


@dataclass(frozen=True, slots=True)
class RecentChunk:
    """Code around a place the user recently edited or viewed."""

    path: str
    text: str
    same_document: bool = False
    start_line: int = 0


@dataclass(frozen=True, slots=True)
class PromptRequest:
    text: str
    offset: int
    starts: list[int]
    language_id: str
    path: str
    tree: tree_sitter.Tree | Outline | None = None
    """The document's tree (or its outline: context/outline.py), when it matches `text`; None
    falls back to the plain window."""
    own_definitions: Callable[[], snippets.Definitions] | None = None
    others: Sequence[OtherDocument] = ()
    recent: Sequence[RecentChunk] = ()
    repository: Repository | None = None
    """Code from the other files of the workspace index (completion/crossfile.py)."""


@dataclass(frozen=True, slots=True)
class BuiltPrompt:
    prompt: str
    context: CursorContext
    held_back: str
    """Whitespace before the cursor kept out of the prompt (see alignment.py)."""
    tokens: int
    first_line: int
    snippets: list[Snippet] = field(default_factory=list)
    skeleton_lines: int = 0
    head: str = ""
    """The prompt up to where the current file's code starts (`PromptTemplate.head`): what a
    prefix warm-up sends (completion/prefix_warmup.py)."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_tokens: int
    prefix_lines: int
    suffix_lines: int
    snippets: bool
    snippet_deadline_ms: float
    repo: str = ""


def build_prompt(
    request: PromptRequest, template: PromptTemplate, counter: TokenCounter, limits: Limits
) -> BuiltPrompt:
    """The prompt for `request`: the window of lines, then snippets while the budget lasts."""
    window = _window(request, template, counter, limits)
    skeleton, chosen, used = _snippets(request, window, counter, limits)
    prompt_prefix, held_back = split_trailing_whitespace(skeleton + window.context.prefix)
    prompt = template.render(
        prefix=prompt_prefix,
        suffix=window.context.suffix if template.uses_suffix else "",
        snippets=chosen,
        path=request.path,
        repo=limits.repo,
        language_id=request.language_id,
    )
    head = template.head(
        snippets=chosen, path=request.path, repo=limits.repo, language_id=request.language_id
    )
    return BuiltPrompt(
        prompt=prompt,
        context=window.context,
        held_back=held_back,
        tokens=used,
        first_line=window.first,
        snippets=chosen,
        skeleton_lines=skeleton.count("\n"),
        head=head,
    )


@dataclass(frozen=True, slots=True)
class _Window:
    """The lines around the cursor the prompt shows, and the tokens they cost."""

    context: CursorContext
    first: int
    last: int
    used: int


def _window(
    request: PromptRequest, template: PromptTemplate, counter: TokenCounter, limits: Limits
) -> _Window:
    text, offset, starts = request.text, request.offset, request.starts
    line = _line_of(starts, offset)
    line_start = starts[line]
    line_end = line_start + len(line_content(text, starts, line))
    budget = limits.max_tokens

    # 1. Prefix: whole lines upward from the cursor's line, then snap the start.
    used = max(counter.count(text[line_start:offset]), CURSOR_LINE_RESERVE)
    first = line
    allowance = budget * PREFIX_SHARE
    while first > 0 and line - first < limits.prefix_lines:
        cost = counter.count_line(line_content(text, starts, first - 1))
        if used + cost > allowance:
            break
        used += cost
        first -= 1
    if first > 0:
        snapped = min(line, math.ceil(first / ANCHOR) * ANCHOR)
        used -= sum(
            counter.count_line(line_content(text, starts, i)) for i in range(first, snapped)
        )
        first = snapped

    # 2. Suffix: whole lines downward, for templates that show it.
    last = line
    suffix_end = line_end
    if template.uses_suffix:
        used += counter.count(text[offset:line_end])
        allowance = used + budget * SUFFIX_SHARE
        while last + 1 < len(starts) and last - line < limits.suffix_lines:
            cost = counter.count_line(line_content(text, starts, last + 1))
            if used + cost > allowance:
                break
            used += cost
            last += 1
        suffix_end = starts[last] + len(line_content(text, starts, last))
    next_last = min(len(starts) - 1, line + max(limits.suffix_lines, 1))
    context = CursorContext(
        prefix=text[starts[first] : offset],
        suffix=text[offset:suffix_end],
        line_before_cursor=text[line_start:offset],
        line_after_cursor=text[offset:line_end],
        next_lines=tuple(line_content(text, starts, i) for i in range(line + 1, next_last + 1)),
    )
    return _Window(context, first, last, used)


def _snippets(
    request: PromptRequest, window: _Window, counter: TokenCounter, limits: Limits
) -> tuple[str, list[Snippet], int]:
    """3. Snippets, each source under the deadline, while the budget lasts: the enclosing
    headers (the skeleton), definitions, recent edits; and the tokens used with them."""
    used, budget = window.used, limits.max_tokens
    if not limits.snippets or request.tree is None:
        return "", [], used
    context, first, last = window.context, window.first, window.last
    deadline = time.perf_counter() + limits.snippet_deadline_ms / 1000.0
    skeleton, used = _guarded(
        "enclosing headers",
        lambda: _skeleton(request, first, used, budget, counter, deadline),
        ("", used),
    )
    chosen, used = _guarded(
        "definitions",
        lambda: _definitions(request, context, first, last, used, budget, counter, deadline),
        (list[Snippet](), used),
    )
    repository, used = _guarded(
        "workspace index",
        lambda: charge(request.repository, chosen, used, budget, counter, deadline),
        (list[Snippet](), used),
    )
    recent, used = _guarded(
        "recent edits",
        lambda: _recent(request, context, first, last, used, budget, counter, deadline),
        (list[Snippet](), used),
    )
    return skeleton, chosen + repository + recent, used


def _skeleton(
    request: PromptRequest,
    first: int,
    used: int,
    budget: int,
    counter: TokenCounter,
    deadline: float,
) -> tuple[str, int]:
    """Imports and enclosing headers that the window starts below, as real code.

    An elision line (`...` in Python, a `// ...` comment elsewhere) marks each gap, so the
    model reads a faithful outline of the file rather than code glued together.
    """
    if first == 0 or request.tree is None:
        return "", used
    leader = (
        "..." if request.language_id == "python" else f"{comment_leader(request.language_id)} ..."
    )
    # Probe at the last code before the cursor: a blank line belongs to no node, but the
    # code just above it tells which definitions the cursor sits in.
    before = request.text[: request.offset].rstrip()
    cursor_byte = max(0, len(before.encode("utf-8", "surrogatepass")) - 1)
    parts: list[str] = []
    imports = [
        statement
        for statement in snippets.imports(request.tree, request.language_id, deadline)
        if statement
    ]
    headers = [
        header
        for start_line, header in snippets.enclosing_headers(
            request.tree, request.language_id, cursor_byte, deadline
        )
        if start_line < first
    ]
    for block in ["\n".join(imports)] if imports else []:
        cost = counter.count(block + "\n")
        if used + cost > budget:
            break
        parts.append(block)
        used += cost
    for header in headers:
        cost = counter.count(header + "\n") + 2
        if used + cost > budget:
            break
        indent = header[: len(header) - len(header.lstrip())]
        parts.append(f"{indent}{leader}\n{header}")
        used += cost
    if not parts:
        return "", used
    window_first = request.text[request.starts[first] :].split("\n", 1)[0]
    indent = window_first[: len(window_first) - len(window_first.lstrip())]
    return "\n".join(parts) + f"\n{indent}{leader}\n", used + 2


def _definitions(
    request: PromptRequest,
    context: CursorContext,
    first: int,
    last: int,
    used: int,
    budget: int,
    counter: TokenCounter,
    deadline: float,
) -> tuple[list[Snippet], int]:
    above = context.prefix[: len(context.prefix) - len(context.line_before_cursor)]
    names = snippets.names_near(above[-1500:])
    indexes: list[tuple[str, snippets.Definitions]] = []
    if request.own_definitions is not None and time.perf_counter() < deadline:
        # The definitions inside the window are in the prompt already.
        indexes.append((request.path, _OutsideWindow(request.own_definitions(), first, last)))
    for other in request.others:
        if time.perf_counter() > deadline:
            break
        indexes.append((other.path, other.definitions()))
    chosen: list[Snippet] = []
    for path, definition in snippets.lookup(names, indexes):
        if time.perf_counter() > deadline:
            break
        header = redact(definition.header)
        cost = counter.count(header) + 8
        if used + cost > budget:
            continue
        chosen.append(Snippet(path=path, text=header, kind="definition"))
        used += cost
    return chosen, used


class _OutsideWindow(Mapping[str, list[snippets.Definition]]):
    """A document's definitions of each name that do not start on lines `first`..`last`, as
    far as `snippets.lookup` reads them: the first one, found when a name is looked up (a
    5,000-line file defines hundreds of names, some of them hundreds of times)."""

    def __init__(self, every: snippets.Definitions, first: int, last: int) -> None:
        self._every = every
        self._first = first
        self._last = last

    def __getitem__(self, name: str) -> list[snippets.Definition]:
        every, first, last = self._every, self._first, self._last
        if isinstance(every, FileDefinitions):
            found = every.first_outside(name, first, last)
            if found is None and name not in every:
                raise KeyError(name)
            return [found] if found is not None else []
        return [d for d in every[name] if not first <= d.start_line <= last]

    def __iter__(self) -> Iterator[str]:
        return iter(self._every)

    def __len__(self) -> int:
        return len(self._every)


_T = TypeVar("_T")
_FAILED: set[tuple[str, str]] = set()
"""(source, exception type) already reported at warning level: later ones go to debug."""


def _guarded(
    source: str, gather: Callable[[], tuple[_T, int]], empty: tuple[_T, int]
) -> tuple[_T, int]:
    """A snippet source's result, or `empty` when it raises: a failing source costs its
    snippets, never the completion."""
    try:
        return gather()
    except Exception as error:
        kind = (source, type(error).__name__)
        # The type only: an exception's text may quote the user's code.
        level = logging.DEBUG if kind in _FAILED else logging.WARNING
        _FAILED.add(kind)
        logger.log(level, "prompt snippets from %s failed (%s); left out", *kind)
        logger.debug("the failure", exc_info=True)
        return empty


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


SIMILARITY_LIMIT = 0.5


def _recent(
    request: PromptRequest,
    context: CursorContext,
    first: int,
    last: int,
    used: int,
    budget: int,
    counter: TokenCounter,
    deadline: float,
) -> tuple[list[Snippet], int]:
    # The window without the cursor's line, which changes with every keystroke.
    above = context.prefix[: len(context.prefix) - len(context.line_before_cursor)]
    window = words(above + context.suffix[len(context.line_after_cursor) :])
    chosen: list[Snippet] = []
    for chunk in request.recent:
        if time.perf_counter() > deadline:
            break
        if chunk.same_document and first - 6 <= chunk.start_line <= last:
            continue  # already inside the window
        if similarity(words(chunk.text), window) > SIMILARITY_LIMIT:
            continue
        text = redact(chunk.text)
        cost = counter.count(text) + 8
        if used + cost > budget:
            continue
        chosen.append(Snippet(path=chunk.path, text=text, kind="recently edited"))
        used += cost
    return chosen, used
