"""Rust imports: `use` trees and `mod` declarations, resolved to files of the crate.

The crate is the nearest Cargo.toml's package: its modules live under `src/`, the crate
root is `src/lib.rs` (`src/main.rs` in a binary, and for main.rs itself). A module path
`a::b` is `src/a/b.rs` or `src/a/b/mod.rs` (the index keys both as `src/a/b`). Paths start
at the crate root (`crate::`, or the package's own name from a test or example), the
current module (`self::`, and a plain path: a child module, as 2018 paths allow), or its
parents (`super::`). Groups nest (`use crate::a::{b::{C, D as E}, f, self};`). A path
dependency on another crate of the workspace (`core = { path = "../core" }`, or through
`[workspace.dependencies]` with `workspace = true`) leads into that crate's library
(`use core::x::Y` is `../core/src/x.rs`). Any other crate's path (`use serde::…`) names no
file of the workspace and resolves to nothing.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.project_files import Crate

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_VISIBILITY = re.compile(r"^pub(?:\s*\([^)]*\))?\s+")
_MOD = re.compile(r"^mod\s+([A-Za-z_]\w*)\s*;")
_TOKEN = re.compile(r"::|[{},*;]|[A-Za-z_][A-Za-z0-9_]*")

Path_ = tuple[list[str], str | None]
"""(segments, alias) of one leaf of a use tree."""


@dataclass(frozen=True, slots=True)
class _Modules:
    """Where the importing file's modules are."""

    folder: str
    """The folder of the current module's children (`mod x;` is `<folder>/x`)."""
    here: list[str]
    """The current module's path from the crate root (None-like [] at the root)."""
    src: str
    """The crate root's folder (`crate::a` is `<src>/a`)."""
    root: str | None
    """The crate root file's module key."""


def parse(statement: str, place: Place) -> list[Imported]:
    """What a `use` or `mod` item binds in the file at `place`."""
    text = _VISIBILITY.sub("", " ".join(_COMMENT.sub(" ", statement).split()))
    crate = place.files.crate(place.root, place.relative)
    if crate is None:
        return []
    modules = _modules(place.relative, crate)
    declared = _MOD.match(text)
    if declared:
        name = declared.group(1)
        return [Imported(_join(modules.folder, name), name)]
    if not text.startswith("use "):
        return []
    tokens = _TOKEN.findall(text[4:])
    found: list[Imported] = []
    for segments, alias in _tree(tokens, [], 0)[0]:
        imported = _resolve(segments, alias, modules, crate)
        if imported is not None:
            found.append(imported)
    return found


def _modules(relative: str, crate: Crate) -> _Modules:
    stem = relative[:-3] if relative.endswith(".rs") else relative
    src_root = crate.main if relative == crate.main else (crate.lib or crate.main)
    root = src_root[:-3] if src_root else None
    if not relative.startswith(crate.src + "/") or relative.startswith(crate.src + "/bin/"):
        # A crate of its own (a test, an example, a binary): the file is its root.
        folder = posixpath.dirname(relative)
        return _Modules(folder, [], folder, stem)
    parts = stem[len(crate.src) + 1 :].split("/")
    if parts in (["lib"], ["main"]):
        parts = []
    elif parts[-1] == "mod":
        parts = parts[:-1]
    return _Modules(_join(crate.src, *parts), parts, crate.src, root)


def _tree(tokens: list[str], prefix: list[str], at: int) -> tuple[list[Path_], int]:
    """The leaves of the use tree starting at `tokens[at]` under `prefix`, and where it
    ends."""
    segments = list(prefix)
    while at < len(tokens):
        token = tokens[at]
        if token == "{":
            return _group(tokens, segments, at + 1)
        if token == "*":
            return [([*segments, "*"], None)], at + 1
        if token in ("::", ",", "}", ";"):
            if token == "::":
                at += 1
                continue
            break
        segments.append(token)
        at += 1
        if at < len(tokens) and tokens[at] == "as" and at + 1 < len(tokens):
            return [(segments, tokens[at + 1])], at + 2
    return ([(segments, None)] if len(segments) > len(prefix) else []), at


def _group(tokens: list[str], prefix: list[str], at: int) -> tuple[list[Path_], int]:
    found: list[Path_] = []
    while at < len(tokens) and tokens[at] != "}":
        if tokens[at] == ",":
            at += 1
            continue
        leaves, next_at = _tree(tokens, prefix, at)
        found += leaves
        at = max(next_at, at + 1)
    return found, at + 1


def _resolve(
    segments: list[str], alias: str | None, modules: _Modules, crate: Crate
) -> Imported | None:
    if not segments:
        return None
    head, rest = segments[0], segments[1:]
    src, root = modules.src, modules.root
    if head == "crate":
        base: list[str] = []
    elif head == crate.name and crate.lib and modules.src != crate.src:
        base, src, root = [], crate.src, crate.lib[:-3]  # a test or example uses its library
    elif (dependency := crate.dependency(head)) is not None:
        base, src, root = [], dependency.src, dependency.lib[:-3]  # another crate's library
    elif head == "self":
        base = list(modules.here)
    elif head == "super":
        base = list(modules.here)
        rest = list(segments)
        while rest and rest[0] == "super":
            if not base:
                return None
            base, rest = base[:-1], rest[1:]
    else:
        base, rest = list(modules.here), list(segments)
    full = base + rest
    if not full:
        return None

    def key(parts: list[str]) -> str | None:
        return _join(src, *parts) if parts else root

    last = full[-1]
    if last == "*":
        module = key(full[:-1])
        return Imported(module, "*") if module else None
    if last == "self":
        module = key(full[:-1])
        if module is None or len(full) < 2:
            return None
        return Imported(module, alias or full[-2])
    module = key(full[:-1])
    if module is None:
        return None
    return Imported(module, alias or last, last, submodule=key(full))


def _join(folder: str, *parts: str) -> str:
    return posixpath.join(folder, *parts) if folder else posixpath.join(*parts)
