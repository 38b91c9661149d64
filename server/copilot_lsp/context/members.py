"""What may follow `module.` at the cursor: the names that module binds, when the index
knows them for sure.

After `alias.` a small model guesses a plausible name (`h.load(` where helpers has
`load_config`); the workspace index knows every name the module binds
(context/bindings.py), and the completion can be held to them (completion/constraint.py).
A wrong set would forbid the right answer, so there is none unless every step is certain:

- Python only; the text before the cursor on its line ends with `name.` or `name.partial`,
  where `name` (or a dotted chain from it) is bound by an import above the cursor to a module
  the index holds, resolved by its exact name (a relative import's name is exact), or by
  the ending of a dotted name (`pkg.mod` under `src/`), or without its top package when the
  workspace folder is that package: never a lone name by its ending, since `import json`
  is the standard library's even where the workspace has a `json.py` somewhere;
- the module's names are knowable from its text (no `from x import *`, no `__getattr__`);
- nothing binds `name` otherwise where the cursor sees it (an assignment at the top or in
  a function around the cursor, a parameter, a loop variable, `as name` outside imports,
  a function or class of that name: context/shadowing.py), looking generously;
- a package (`__init__.py`) adds the names of the modules and packages in its folder on
  disk (compiled ones too), which `pkg.sub` reaches once imported anywhere;
- the names offered are those that start with what is typed after the dot, and some must.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from copilot_lsp.context.bindings import MODULE_ATTRIBUTES
from copilot_lsp.context.imported import Imported
from copilot_lsp.context.repo_index import IndexedFile, RepoIndex
from copilot_lsp.context.shadowing import rebound

_ACCESS = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.(\w*)$")
_MODULE_FILE = re.compile(r"^([A-Za-z_]\w*)(?:\.[\w-]+)*\.(?:py|pyi|pyc|so|pyd)$")


@dataclass(frozen=True, slots=True)
class Members:
    """The names that may follow the dot, and the part of one already typed."""

    typed: str
    names: tuple[str, ...]
    """Sorted; each starts with `typed`."""
    module: str
    """The module they belong to (for logs)."""


def members_at(
    index: RepoIndex,
    bound: Sequence[Imported],
    language_id: str,
    line_before: str,
    text: str,
    line: int,
    root: str | None,
    folder: Path | None,
    shadowed: Callable[[str, str], bool] | None = None,
) -> Members | None:
    """The names that may follow the cursor on `line`, which reads `line_before` up to it,
    in a document `text` whose imports above the cursor bind `bound`; None when not
    certain. `shadowed(name, before)` says whether `name`, preceded on the cursor's line by
    `before`, is bound otherwise where the cursor is (default: context/shadowing.py's
    `rebound` over `text`)."""
    if language_id != "python":
        return None
    access = _ACCESS.search(line_before)
    before = line_before[: access.start()] if access is not None else ""
    if access is None or _in_text(before):
        return None
    chain, typed = access.group(1).split("."), access.group(2)
    if typed.startswith("__"):
        return None  # a dunder: anything an object has
    module = _module_of(chain, bound)
    is_shadowed = shadowed or (lambda name, _: rebound(name, text, line))
    if module is None or is_shadowed(chain[0], before):
        return None
    file = _resolved(index, module, root, folder)
    if file is None or file.summary.bindings is None:
        return None
    names = set(file.summary.bindings) | MODULE_ATTRIBUTES
    if os.path.basename(file.path) == "__init__.py":
        names |= _package_modules(file)
    offered = tuple(sorted(name for name in names if name.startswith(typed)))
    return Members(typed, offered, module) if offered else None


def _in_text(before: str) -> bool:
    """Whether what follows `before` on its line may be a comment's or a string's text, where
    any word goes (a `#`, or a quote left open; an f-string's `{m.` too, generously)."""
    return "#" in before or any(before.count(quote) % 2 for quote in ("'", '"'))


def _module_of(chain: list[str], bound: Sequence[Imported]) -> str | None:
    """The module `a.b.c` names, by the last import above that binds a start of it."""
    for imported in reversed(bound):
        if imported.binding == "*" or imported.package:
            continue
        if imported.name is not None:  # from m import name: a module only as a submodule
            if imported.submodule is None or imported.binding != chain[0]:
                continue
            return ".".join([imported.submodule, *chain[1:]])
        parts = imported.binding.split(".")
        if imported.binding != imported.module:  # import a.b as m
            if parts != chain[:1]:
                continue
            return ".".join([imported.module, *chain[1:]])
        if parts[0] == chain[0]:  # import a.b binds a; a.b.c reaches a.b.c
            return ".".join(chain)
    return None


def _resolved(
    index: RepoIndex, module: str, root: str | None, folder: Path | None
) -> IndexedFile | None:
    file = index.module(module, root)
    if file is None or file.module is None:
        return None
    if file.module == module:
        return file
    if "." not in module:
        return None
    top, rest = module.split(".", 1)
    if file.module.endswith("." + module):
        return file
    if file.module == rest and folder is not None and folder.name == top:
        return file
    return None


def _package_modules(file: IndexedFile) -> set[str]:
    """The modules and packages in the folder of package `file`, on disk."""
    folder = Path(unquote(urlparse(file.uri).path)).parent
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set()
    found: set[str] = set()
    for entry in entries:
        if entry.is_dir() and entry.name.isidentifier():
            found.add(entry.name)
            continue
        matched = _MODULE_FILE.match(entry.name)
        if matched is not None:
            found.add(matched.group(1))
    return found
