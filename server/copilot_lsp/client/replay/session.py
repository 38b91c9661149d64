"""One editing session as the scripted editor replays it: a document, a cursor, what the
user types there (bench/replay/sessions.py cuts them from real code)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["write", "hole", "edit"]
KINDS: tuple[Kind, ...] = ("write", "hole", "edit")


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    kind: Kind
    path: str
    """The file, relative to its corpus root (what the report names)."""
    before: str
    """The document before the cursor."""
    target: str
    """What the user types at the cursor."""
    after: str
    """The document after the cursor; it stays as it is."""
    package: str | None = None
    """The folder of the package the file belongs to, on this machine, when the replay puts
    it in the workspace (`bench replay --workspace package`): `path` is then relative to
    that folder's parent."""

    @property
    def document(self) -> str:
        """The document as the session opens it (the target removed)."""
        return self.before + self.after

    @property
    def cursor(self) -> tuple[int, int]:
        """(line, character) of the cursor at the start; the line is ASCII (see `_usable`)."""
        line = self.before.count("\n")
        return line, len(self.before) - (self.before.rfind("\n") + 1)

    def cursor_at(self, typed: int) -> tuple[int, int]:
        """(line, character) of the cursor once the first `typed` characters of the target
        are in the buffer; the typed text is ASCII too, so characters are UTF-16 units."""
        line, column = self.cursor
        text = self.target[:typed]
        newline = text.rfind("\n")
        if newline < 0:
            return line, column + len(text)
        return line + text.count("\n"), len(text) - newline - 1

    def summary(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "path": self.path,
            "line": self.cursor[0] + 1,
            "target_chars": len(self.target),
            "document_chars": len(self.document),
            # Its name only: a report names no folder of this machine.
            "package": self.package.rsplit("/", 1)[-1] if self.package else None,
        }
