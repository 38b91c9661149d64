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

API_LINES = 40
"""Lines of one module's API at most."""


def module_api(file: IndexedFile, max_lines: int = API_LINES) -> str:
    """The public names of a module with their signatures, members under their type."""
    return package_api([file], max_lines)


def package_api(files: Sequence[IndexedFile], max_lines: int = API_LINES) -> str:
    """The public API of the modules `files` make up together (a Go package's folder)."""
    if not files:
        return ""
    language_id = files[0].language_id
    family = FAMILY.get(language_id, "")
    exported_only = family in ("javascript", "typescript") and any(
        symbol.top_level and symbol.header.startswith("export")
        for file in files
        for symbol in file.summary.symbols
    )
    tops: list[Symbol] = []
    for file in files:  # a name per line at least: more than `max_lines` are never shown
        tops += [
            s for s in file.summary.symbols if s.top_level and _public_top(s, family, exported_only)
        ]
        if len(tops) >= max_lines:
            break
    tops = tops[:max_lines]
    traits = {s.name for s in tops if family == "rust" and " trait " in f" {s.header}"}
    listed = {symbol.name for symbol in tops}
    members: dict[str, list[Symbol]] = {}
    for file in files:
        for symbol in file.summary.symbols:
            container = symbol.container
            if container in listed and _public_member(symbol, family, container in traits):
                members.setdefault(container, []).append(symbol)
    indent = "" if family == "go" else "    "
    lines: list[str] = []
    for symbol in tops:
        own = members.pop(symbol.name, [])
        lines += stub(symbol.header, language_id, members=bool(own)).split("\n")
        for member in own:
            lines += [indent + line for line in stub(member.header, language_id).split("\n")]
        if len(lines) >= max_lines:
            break
    return "\n".join(lines[:max_lines])


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
