"""One inline-completion request, typed: what the pipeline needs to know, built in one place.

`inline_request` builds it from the document at the cursor and whatever the caller has of the
rest of the workspace (the document's tree and definitions, the other open documents, the
places recently edited); the LSP server's workspace (completion/workspace.py) fills them all,
tests and benchmarks often only the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tree_sitter

from copilot_lsp.completion.assembly import OtherDocument, PromptRequest, RecentChunk
from copilot_lsp.completion.crossfile import Repository
from copilot_lsp.completion.window import CursorContext, cursor_context
from copilot_lsp.context import snippets
from copilot_lsp.context.members import Members
from copilot_lsp.context.outline import Outline
from copilot_lsp.positions import line_starts as compute_line_starts
from copilot_lsp.settings import CompletionSettings

DefinitionSource = Callable[[], snippets.Definitions]
"""A document's definitions by name, computed when first asked for."""
MemberSource = Callable[[], Members | None]
"""What may follow the dot before the cursor (context/members.py), computed when asked."""


@dataclass(frozen=True, slots=True)
class InlineRequest:
    """A suggestion wanted at one cursor."""

    uri: str
    automatic: bool
    """Asked for by typing (debounced, may be skipped) rather than by the user."""
    window: CursorContext
    """The lines around the cursor (completion.prefixLines / suffixLines)."""
    prompt: PromptRequest
    """The document, the cursor's offset in it, and what the prompt may draw on: its tree and
    definitions, the other open documents, the recently edited places."""
    version: int | None = None
    """The document's version when the request arrived, if the caller tracks versions."""
    members: MemberSource | None = None
    """The names that may follow the dot before the cursor, from the workspace index."""

    @property
    def text(self) -> str:
        return self.prompt.text

    @property
    def offset(self) -> int:
        return self.prompt.offset

    @property
    def language_id(self) -> str:
        return self.prompt.language_id


def inline_request(
    uri: str,
    language_id: str,
    text: str,
    offset: int,
    *,
    automatic: bool,
    options: CompletionSettings,
    version: int | None = None,
    line_starts: list[int] | None = None,
    path: str | None = None,
    tree: tree_sitter.Tree | Outline | None = None,
    own_definitions: DefinitionSource | None = None,
    others: Sequence[OtherDocument] = (),
    recent: Sequence[RecentChunk] = (),
    repository: Repository | None = None,
    members: MemberSource | None = None,
) -> InlineRequest:
    """The request for the cursor at `offset` (code points) in `text`.

    `line_starts` are the document's cached line offsets, if the caller has them. `tree` (the
    document's parse tree or outline for `text`), `own_definitions` and `others` (open documents'
    definitions) feed the prompt's snippets; without them the prompt is the plain line window.
    """
    starts = line_starts if line_starts is not None else compute_line_starts(text)
    return InlineRequest(
        uri=uri,
        automatic=automatic,
        window=cursor_context(text, offset, options.prefix_lines, options.suffix_lines, starts),
        prompt=PromptRequest(
            text=text,
            offset=offset,
            starts=starts,
            language_id=language_id,
            path=path or uri.rsplit("/", 1)[-1],
            tree=tree,
            own_definitions=own_definitions,
            others=others,
            recent=recent,
            repository=repository,
        ),
        version=version,
        members=members,
    )
