"""One import (context/imported.py) followed into the workspace index: the public API of the
module (of the package, for Go: a folder) it binds, or the definition of the name it binds.
A module's re-exports are followed one level: JavaScript/TypeScript's `export * from "./x"`
and `export { a } from "./x"` (a barrel `index.ts` leads to the files it re-exports), Rust's
`pub use a::b::Thing;` (a crate's `lib.rs` facade) for the names it binds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from copilot_lsp.context import imports_rust, imports_script
from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.languages import FAMILY
from copilot_lsp.context.module_api import API_LINES, definition, module_api, package_api
from copilot_lsp.context.repo_index import IndexedFile, RepoIndex
from copilot_lsp.context.topic import NOTHING, Topic

MODULE = "imported module"
DEFINITION = "definition"


@dataclass(frozen=True, slots=True)
class CrossFile:
    """Code from another file for the prompt."""

    path: str
    text: str
    kind: str


def files_of(
    index: RepoIndex, imported: Imported, language_id: str, root: str | None = None
) -> list[IndexedFile]:
    """The indexed files `imported` leads to (a Go package's several; else one or none),
    those of workspace folder `root` first."""
    if imported.package:
        return package_files(index, imported.module, root)
    if imported.submodule is not None:  # `from pkg import mod`: the module, as `follow` does
        submodule = _module(index, imported.submodule, language_id, root)
        if submodule is not None:
            return [submodule]
    found = _module(index, imported.module, language_id, root)
    return [found] if found is not None else []


def package_files(index: RepoIndex, folder: str, root: str | None = None) -> list[IndexedFile]:
    """A Go package: the non-test Go files of `folder`."""
    return [
        file
        for file in index.folder(folder, root)
        if file.language_id == "go" and not file.path.endswith("_test.go")
    ]


def follow(
    index: RepoIndex,
    imported: Imported,
    language_id: str,
    own_uri: str,
    place: Place | None,
    root: str | None = None,
    near: Topic = NOTHING,
) -> list[CrossFile]:
    """What the prompt should carry of `imported`, bound in the file `own_uri` of workspace
    folder `root` (`root_of`; None: outside every folder). `near`: what the code above the
    cursor is about (context/topic.py), which orders a module's names."""
    if imported.package:
        files = [
            file for file in package_files(index, imported.module, root) if file.uri != own_uri
        ]
        api = package_api(files, near=near)
        return [CrossFile(imported.module or ".", api, MODULE)] if api else []
    if imported.name is not None and imported.submodule is not None:
        submodule = _module(index, imported.submodule, language_id, root)
        if submodule is not None and submodule.uri != own_uri:
            return _api(index, submodule, place, near)
    module = _module(index, imported.module, language_id, root)
    if module is None or module.uri == own_uri:
        return []
    if imported.name is None:
        return _api(index, module, place, near)
    text = definition([module], imported.name)
    if text is not None:
        return [CrossFile(module.path, text, DEFINITION)]
    for target, original in _reexported(index, module, imported.name, place):
        if original == "*":
            return [CrossFile(target.path, module_api(target, near=near), MODULE)]
        text = definition([target], original)
        if text is not None:
            return [CrossFile(target.path, text, DEFINITION)]
    return []


def _module(index: RepoIndex, name: str, language_id: str, root: str | None) -> IndexedFile | None:
    """Python names resolve by their ending too (`pkg.mod` under `src/`); the others are
    workspace paths already, looked up exactly."""
    return index.module(name, root) if language_id == "python" else index.exact(name, root)


def _api(
    index: RepoIndex, module: IndexedFile, place: Place | None, near: Topic
) -> list[CrossFile]:
    """A module's API, then what it re-exports, within `API_LINES` together."""
    api = module_api(module, near=near)
    found = [CrossFile(module.path, api, MODULE)] if api else []
    room = API_LINES - (api.count("\n") + 1 if api else 0)
    for specifier, names in module.summary.reexports:
        if room <= 0:
            break
        for target in _targets(index, module, specifier, place):
            if names is None:
                text = module_api(target, room, near)
            else:
                parts = [definition([target], original) for _, original in names]
                text = "\n".join(part for part in parts if part)
                text = "\n".join(text.split("\n")[:room]) if text else ""
            if text:
                found.append(CrossFile(target.path, text, MODULE))
                room -= text.count("\n") + 1
            break
    return found


def _reexported(
    index: RepoIndex, module: IndexedFile, name: str, place: Place | None
) -> Iterator[tuple[IndexedFile, str]]:
    """(module, its name for it) of each re-export of `module` that may be `name`."""
    if module.language_id == "rust":
        yield from _rust_reexported(index, module, name, place)
        return
    for specifier, names in module.summary.reexports:
        if names is None:
            original = name
        else:
            matching = [original for exported, original in names if exported == name]
            if not matching:
                continue
            original = matching[0]
        for target in _targets(index, module, specifier, place):
            yield target, original


def _rust_reexported(
    index: RepoIndex, module: IndexedFile, name: str, place: Place | None
) -> Iterator[tuple[IndexedFile, str]]:
    if place is None:
        return
    there = Place(place.root, module.path, place.files)
    for statement, _ in module.summary.reexports:
        for imported in imports_rust.parse(statement, there):
            if imported.binding not in (name, "*"):
                continue
            submodule = index.exact(imported.submodule, module.root) if imported.submodule else None
            if submodule is not None:  # `pub use a::b;`: the module itself
                yield submodule, "*"
                continue
            target = index.exact(imported.module, module.root)
            if target is not None and target.uri != module.uri:
                yield target, imported.name or name


def _targets(
    index: RepoIndex, module: IndexedFile, specifier: str, place: Place | None
) -> Iterator[IndexedFile]:
    """The indexed modules `specifier`, written in `module`, leads to (itself excluded)."""
    if FAMILY.get(module.language_id, "") not in ("javascript", "typescript"):
        return
    paths = place.files.script_paths(place.root, module.path) if place is not None else None
    for key in imports_script.resolve(specifier, module.path, paths):
        target = index.exact(key, module.root)
        if target is not None and target.uri != module.uri:
            yield target
