"""Cross-file completion tasks, built by static analysis from installed pure-Python packages.

A task is a line of module A of a package that uses an API defined in another module B of
the same package: `alias.name` where `alias` is B imported as a module (and `name` appears
nowhere else in A, so A cannot give it away), or a name imported from B (and used nowhere
else in A but its import). The cursor sits before the API name (after `alias.`, or at the
start of the imported name); the answer is the rest of the line. The editor holds A with
that rest removed; the workspace is the package's folder.

Only lines that are a whole statement on their own (no bracket left open, no comment) with
an answer of at most MAX_ANSWER characters qualify, one task per line (its first use). The
selection is seeded: per package a shuffled list capped at PER_FILE tasks per module, then
the packages of a split taken in turn. The splits are fixed lists of packages: `dev`, the
packages one may look at while working on the server, and `heldout`, reported separately.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import io
import random
import re
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from copilot_lsp.bench.crossfile.imports import (
    Module,
    definer,
    import_spans,
    imported_names,
    module_aliases,
    package_modules,
)

SPLITS: dict[str, tuple[str, ...]] = {
    "dev": ("anyio", "click", "httpx", "jinja2", "requests", "rich", "starlette", "urllib3"),
    "heldout": (
        "cattrs",
        "httpcore",
        "jsonschema",
        "packaging",
        "pydantic",
        "pygls",
        "typer",
        "uvicorn",
    ),
}
"""Pure-Python packages with several modules that `make setup` installs (directly or as
dependencies of the engine and the tools)."""
MAX_ANSWER = 80
PER_FILE = 3
SEED = 28


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    package: str
    path: str
    """Module A, relative to the package's folder (POSIX)."""
    line: int
    """0-based."""
    column: int
    """Code points from the line's start: where the cursor sits."""
    kind: str
    """`attribute` (alias.name) or `import` (a name imported from B)."""
    name: str
    """The API name as written at the cursor."""
    module: str
    """Module B, dotted: where the name is taken from."""
    answer: str
    """The rest of the line from the cursor, trailing whitespace stripped."""
    defining: tuple[str, ...]
    """The package's modules (relative paths) that define what the answer uses: B, the
    module a re-export leads to, and those of other names of the package right of the cursor."""
    root: Path = field(compare=False, repr=False)
    """The package's folder on this machine: not written into reports."""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["root"]
        data["defining"] = list(self.defining)
        return data

    def file_text(self) -> str:
        return (self.root / self.path).read_text(encoding="utf-8")

    def editor_text(self) -> tuple[str, int]:
        """File A with the rest of the task's line removed, and the cursor's offset in it."""
        lines = self.file_text().splitlines(keepends=True)
        line = lines[self.line]
        ending = line[len(line.rstrip("\r\n")) :]
        lines[self.line] = line[: self.column] + ending
        offset = sum(len(text) for text in lines[: self.line]) + self.column
        return "".join(lines), offset


@dataclass(frozen=True, slots=True)
class _Use:
    line: int
    byte_column: int
    kind: str
    name: str
    module: str
    definer: str


def find_tasks(root: Path, package: str) -> list[Task]:
    """Every qualifying task of the package in `root`, ordered by file and line."""
    modules = package_modules(root, package)
    tasks: list[Task] = []
    for module in modules.values():
        tasks.extend(_module_tasks(module, modules, root, package))
    return tasks


def _module_tasks(
    module: Module, modules: dict[str, Module], root: Path, package: str
) -> list[Task]:
    whole, commented = _statement_lines(module.text)
    if not whole:
        return []
    uses = _uses(module, modules)
    lines = module.text.splitlines()
    first: dict[int, _Use] = {}
    for use in uses:
        if use.line not in whole or use.line in commented:
            continue
        if use.line not in first or use.byte_column < first[use.line].byte_column:
            first[use.line] = use
    anywhere, outside_imports = _unique_names(module, skip_imports=False), _unique_names(module)
    tasks = []
    for row, use in sorted(first.items()):
        if use.name not in (anywhere if use.kind == "attribute" else outside_imports):
            continue
        text = lines[row - 1]
        column = len(text.encode("utf-8")[: use.byte_column].decode("utf-8", "replace"))
        answer = text[column:].rstrip()
        if not answer.startswith(use.name) or len(answer) > MAX_ANSWER:
            continue
        related = [use] + [u for u in uses if u.line == row and u.byte_column > use.byte_column]
        defining: list[str] = []
        for item in related:
            for name in (item.module, item.definer):
                path = modules[name].path.as_posix()
                if name != module.name and path not in defining:
                    defining.append(path)
        path = module.path.as_posix()
        tasks.append(
            Task(
                f"{package}/{path}:{row}:{column}",
                package,
                path,
                row - 1,
                column,
                use.kind,
                use.name,
                use.module,
                answer,
                tuple(defining),
                root,
            )
        )
    return tasks


def _uses(module: Module, modules: dict[str, Module]) -> list[_Use]:
    """Uses of the package's other modules in `module`: attributes of module aliases and
    imported names, each with the module that defines it."""
    aliases = module_aliases(module, modules)
    names = imported_names(module, modules)
    uses = []
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.lineno == node.end_lineno
            and node.end_col_offset is not None
        ):
            source = aliases[node.value.id]
            found = definer(modules, source, node.attr)
            if found is not None:
                column = node.end_col_offset - len(node.attr.encode("utf-8"))
                uses.append(_Use(node.lineno, column, "attribute", node.attr, source, found))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            source, original = names[node.id]
            found = definer(modules, source, original)
            if found is not None:
                uses.append(_Use(node.lineno, node.col_offset, "import", node.id, source, found))
    return uses


def _unique_names(module: Module, *, skip_imports: bool = True) -> set[str]:
    """Identifiers written exactly once in the module (outside its import statements with
    `skip_imports`); comments and strings count: they would give the name away too."""
    spans = import_spans(module) if skip_imports else []
    skipped = {row for first, last in spans for row in range(first, last + 1)}
    counts: dict[str, int] = {}
    for row, line in enumerate(module.text.splitlines(), start=1):
        if row in skipped:
            continue
        for word in re.findall(r"[^\W\d]\w*", line):
            counts[word] = counts.get(word, 0) + 1
    return {word for word, count in counts.items() if count == 1}


def _statement_lines(text: str) -> tuple[set[int], set[int]]:
    """(lines that hold a whole logical line, lines with a comment), 1-based."""
    whole: set[int] = set()
    commented: set[int] = set()
    start: int | None = None
    boundaries = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                commented.add(token.start[0])
            elif token.type == tokenize.NEWLINE:
                if start is not None and start == token.start[0]:
                    whole.add(start)
                start = None
            elif token.type not in (*boundaries, tokenize.ENDMARKER) and start is None:
                start = token.start[0]
    except (tokenize.TokenError, SyntaxError):
        return set(), set()
    return whole, commented


def select(tasks: list[Task], seed: int, per_file: int = PER_FILE) -> list[Task]:
    """One package's tasks in a seeded order, at most `per_file` from each module."""
    ordered = sorted(tasks, key=lambda task: (task.path, task.line))
    if not ordered:
        return []
    random.Random(f"{seed}:{ordered[0].package}").shuffle(ordered)
    taken: dict[str, int] = {}
    chosen = []
    for task in ordered:
        if taken.get(task.path, 0) < per_file:
            taken[task.path] = taken.get(task.path, 0) + 1
            chosen.append(task)
    return chosen


def interleave(per_package: list[list[Task]], limit: int) -> list[Task]:
    """The first of each package in turn, then the second of each, … up to `limit`."""
    chosen: list[Task] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(tasks) for tasks in per_package):
        chosen.extend(tasks[depth] for tasks in per_package if depth < len(tasks))
        depth += 1
    return chosen[:limit]


@dataclass(frozen=True, slots=True)
class PackageInfo:
    name: str
    version: str | None
    root: Path | None
    """None: not installed here."""
    found: int = 0
    """Qualifying tasks before the selection."""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "found": self.found}


def locate(package: str) -> PackageInfo:
    """Where the installed package lives (its folder) and its distribution's version."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return PackageInfo(package, None, None)
    distributions = importlib.metadata.packages_distributions().get(package, [package])
    try:
        version = importlib.metadata.version(distributions[0])
    except importlib.metadata.PackageNotFoundError:
        version = None
    return PackageInfo(package, version, Path(locations[0]))


def build_split(
    split: str, limit: int, seed: int = SEED, packages: dict[str, Path] | None = None
) -> tuple[list[Task], list[PackageInfo]]:
    """`limit` tasks of a split's packages (or of `packages`: name -> folder, for tests),
    and what was found of each package."""
    infos = (
        [PackageInfo(name, None, root) for name, root in sorted(packages.items())]
        if packages is not None
        else [locate(name) for name in SPLITS[split]]
    )
    per_package: list[list[Task]] = []
    described = []
    for info in infos:
        found = find_tasks(info.root, info.name) if info.root is not None else []
        per_package.append(select(found, seed))
        described.append(PackageInfo(info.name, info.version, info.root, len(found)))
    return interleave(per_package, limit), described
