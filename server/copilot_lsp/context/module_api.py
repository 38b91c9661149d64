"""A module's public API as the prompt shows it: its public names with their signatures,
members under their type, in the language's own sense of public:

- Python: names without a leading underscore (`__init__` among members);
- Go: capitalised names; a package is a folder, so its API gathers every file's, and
  methods follow their receiver's type whichever file defines them;
- Rust: `pub` items, `pub` methods of their type's `impl` blocks, a `pub` trait's methods;
- JavaScript/TypeScript: the exported names (every top-level name when the file exports
  none: CommonJS `module.exports`), members without `_`/`#` or `private`.
"""

from __future__ import annotations

from collections.abc import Sequence

from copilot_lsp.context.file_summary import Symbol
from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.repo_index import IndexedFile
from copilot_lsp.context.topic import NOTHING, Topic, descending

API_LINES = 40
"""Lines of one module's API at most."""
TOPIC_MEMBERS = 6
"""Members listed first under each name the code around the cursor is about."""


def module_api(file: IndexedFile, max_lines: int = API_LINES, near: Topic = NOTHING) -> str:
    """The public names of a module with their signatures, members under their type."""
    return package_api([file], max_lines, near)


def package_api(
    files: Sequence[IndexedFile], max_lines: int = API_LINES, near: Topic = NOTHING
) -> str:
    """The public API of the modules `files` make up together (a Go package's folder).

    With `near` (what the code above the cursor is about), the best names come first (the
    others in their order): a prompt with little room keeps the API's first lines only.
    Their members come when every name has its line (`_chosen`): a module of 80 classes
    shows first the ones the code at hand is about."""
    if not files:
        return ""
    language_id = files[0].language_id
    family = FAMILY.get(language_id, "")
    exported_only = family in ("javascript", "typescript") and any(
        symbol.top_level and symbol.header.startswith("export")
        for file in files
        for symbol in file.summary.symbols
    )
    tops = [
        symbol
        for file in files
        for symbol in file.summary.symbols
        if symbol.top_level and _public_top(symbol, family, exported_only)
    ]
    members = _members(files, tops, family)
    listed = [(symbol, members.get(id(symbol), [])) for symbol in tops]
    lines = _listing(listed, language_id, family, max_lines + 1)
    if near or len(lines) > max_lines:
        lines = _listing(_chosen(listed, language_id, max_lines, near), language_id, family)
    return "\n".join(lines)


def _members(
    files: Sequence[IndexedFile], tops: list[Symbol], family: str
) -> dict[int, list[Symbol]]:
    """id(top) -> its public members (under the first top of that name)."""
    first: dict[str, Symbol] = {}
    for symbol in tops:
        first.setdefault(symbol.name, symbol)
    traits = {name for name, s in first.items() if family == "rust" and " trait " in f" {s.header}"}
    members: dict[int, list[Symbol]] = {}
    for file in files:
        for symbol in file.summary.symbols:
            owner = first.get(symbol.container or "")
            if owner is not None and _public_member(symbol, family, symbol.container in traits):
                members.setdefault(id(owner), []).append(symbol)
    return members


Listed = list[tuple[Symbol, list[Symbol]]]
"""Top-level names, each with the members shown under it."""


def _listing(listed: Listed, language_id: str, family: str, limit: int = API_LINES) -> list[str]:
    indent = "" if family == "go" else "    "
    lines: list[str] = []
    for symbol, own in listed:
        lines += _lines(symbol.header, language_id, members=bool(own))
        for member in own:
            lines += [indent + line for line in _lines(member.header, language_id)]
        if len(lines) >= limit:
            break
    return lines[:limit]


def _chosen(listed: Listed, language_id: str, max_lines: int, near: Topic) -> Listed:
    """What `max_lines` lines hold best, best first (`Topic.score`): the names, a line each,
    those sharing words with `near` first; then `TOPIC_MEMBERS` members of each of those,
    best first; then the other members as the lines left allow."""

    def size(symbol: Symbol) -> int:
        return len(_lines(symbol.header, language_id))

    scores = [near.score(symbol) for symbol, _ in listed]
    rank = sorted(range(len(listed)), key=lambda i: (descending(scores[i]), i))
    picked: dict[int, list[Symbol]] = {}
    room = max_lines

    def names(indices: list[int]) -> None:
        nonlocal room
        for i in indices:
            if size(listed[i][0]) > room:
                return
            picked[i] = []
            room -= size(listed[i][0])

    ranked: dict[int, list[Symbol]] = {}
    """A name's members, best first (sorted once, for both rounds of members)."""

    def members(indices: list[int], cap: int | None) -> None:
        nonlocal room
        for i in indices:
            if not room:
                return
            if i not in ranked:
                ranked[i] = sorted(listed[i][1], key=lambda m: descending(near.score(m)))
            for member in ranked[i][len(picked[i]) :][:cap]:
                if size(member) > room:
                    break
                picked[i].append(member)
                room -= size(member)

    names(rank)
    members([i for i in rank if i in picked and scores[i][2]], TOPIC_MEMBERS)
    members([i for i in rank if i in picked], None)
    return [(listed[i][0], picked[i]) for i in rank if i in picked]


def _lines(header: str, language_id: str, members: bool = False) -> list[str]:
    """A header's stub; a Python one on one line where it spans several (a signature with a
    parameter per line; comments left out): the listing is charged by the line, and often
    only its first lines fit. (A Go struct's or a TypeScript interface's fields would need
    separators once joined: left as they are.)"""
    if language_id != "python":
        return stub(header, language_id, members).split("\n")
    lines = header.split("\n")
    joined = lines[0].rstrip()
    for line in lines[1:]:
        part = line.strip()
        if part and not part.startswith(("#", "//")):
            joined += (" " if joined.endswith(",") and part[0] not in ")]}>" else "") + part
    return [stub(joined, language_id, members)]


def definition(files: Sequence[IndexedFile], name: str, max_lines: int = API_LINES) -> str | None:
    """The definition of top-level `name` in `files`: its header, with the public members of
    its type when it has some (a class's methods, a Rust type's `impl` methods); None when
    none of them defines it."""
    if not files:
        return None
    language_id = files[0].language_id
    family = FAMILY.get(language_id, "")
    symbols = [symbol for file in files for symbol in file.summary.symbols]
    own = [s for s in symbols if s.top_level and s.name == name]
    if not own:
        return None
    chosen = next((s for s in own if not s.header.startswith("impl")), own[0])
    in_trait = family == "rust" and " trait " in f" {chosen.header}"
    members = [
        s
        for s in symbols
        if not s.top_level and s.container == name and _public_member(s, family, in_trait)
    ]
    lines = stub(chosen.header, language_id, members=bool(members)).split("\n")
    indent = "" if family == "go" else "    "
    for member in members:
        lines += [indent + line for line in stub(member.header, language_id).split("\n")]
    return "\n".join(lines[:max_lines])


def stub(header: str, language_id: str, members: bool = False) -> str:
    """A Python header as a stub line (`def f(x): ...`), so that it reads as valid code."""
    if language_id == "python" and header.endswith(":") and not members:
        return header + " ..."
    return header


def _public_top(symbol: Symbol, family: str, exported_only: bool) -> bool:
    if family == "go":
        return symbol.name[:1].isupper()
    if family == "rust":
        return symbol.header.startswith("pub")
    if exported_only:
        return symbol.header.startswith("export")
    return not symbol.name.startswith("_")


def _public_member(symbol: Symbol, family: str, in_trait: bool) -> bool:
    if family == "go":
        return symbol.name[:1].isupper()
    if family == "rust":
        return in_trait or symbol.header.startswith("pub")
    if family in ("javascript", "typescript"):
        private = symbol.header.startswith(("private", "#")) or symbol.name.startswith("#")
        return not private and not symbol.name.startswith("_")
    return not symbol.name.startswith("_") or symbol.name == "__init__"
