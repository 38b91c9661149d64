"""The project files that decide where an import leads: `go.mod`'s module path and local
`replace` directives, `go.work`'s modules, `Cargo.toml`'s crate (its `src/` and root file),
`tsconfig.json`/`jsconfig.json`'s `baseUrl` and `paths`, a JavaScript/TypeScript monorepo's
packages (`package.json` `workspaces`, `pnpm-workspace.yaml`: context/script_packages.py).

Retrieval runs on keystrokes, so each file is found and read once and kept (`ProjectFiles`)
until one of them changes on disk: `workspace/didChangeWatchedFiles` and `didSave` call
`forget` (context/indexer.py's watchers include these names). A file that cannot be read or
parsed counts as absent: imports then resolve as far as they can without it.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from copilot_lsp.context import script_packages

logger = logging.getLogger(__name__)

GO_MOD = "go.mod"
GO_WORK = "go.work"
CARGO = "Cargo.toml"
SCRIPT_CONFIGS = ("tsconfig.json", "jsconfig.json")
PROJECT_FILES = frozenset(
    {
        GO_MOD,
        GO_WORK,
        CARGO,
        *SCRIPT_CONFIGS,
        script_packages.PACKAGE_JSON,
        script_packages.PNPM_WORKSPACE,
    }
)
"""The names whose change makes `forget` necessary."""
MAX_BYTES = 1_000_000

_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"/]+[^\s\"]*)\"?", re.MULTILINE)
_GO_COMMENT = re.compile(r"//[^\n]*")
_GO_BLOCK = re.compile(r"^\s*(replace|use)\s*\(([^)]*)\)", re.MULTILINE)
_GO_LINE = re.compile(r"^\s*(replace|use)\s+([^(\s][^\n]*)$", re.MULTILINE)
_GO_REPLACE = re.compile(r"^(\S+)(?:\s+\S+)?\s*=>\s*(\S+)\s*$")
_JSON_NOISE = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GoModule:
    folder: str
    """Where go.mod is, relative to the workspace folder ("" at its top)."""
    path: str
    """Its `module` line: the import path of that folder."""
    replaces: tuple[tuple[str, str], ...] = ()
    """Its `replace` directives to folders of the workspace: (module path, folder)."""


@dataclass(frozen=True, slots=True)
class Crate:
    src: str
    """The crate's `src/` folder, relative to the workspace folder."""
    lib: str | None
    """`src/lib.rs` when it exists."""
    main: str | None
    """`src/main.rs` when it exists."""
    name: str
    """The package's name as paths spell it (`my-crate` -> `my_crate`); "" when unknown."""
    dependencies: tuple[Dependency, ...] = ()
    """Its dependencies on crates of the workspace (`path = "../x"`, directly or through the
    workspace's `[workspace.dependencies]`)."""

    def dependency(self, name: str) -> Dependency | None:
        return next((d for d in self.dependencies if d.name == name), None)


@dataclass(frozen=True, slots=True)
class Dependency:
    """A library crate of the workspace that a crate depends on."""

    name: str
    """The name the depending crate's code uses (the dependency's key, `-` as `_`)."""
    src: str
    lib: str
    """Its `src/lib.rs`."""


@dataclass(frozen=True, slots=True)
class ScriptPaths:
    base: str | None
    """`compilerOptions.baseUrl` relative to the workspace folder; None when not set."""
    paths: tuple[tuple[str, tuple[str, ...]], ...]
    """`compilerOptions.paths` with each target relative to the workspace folder."""
    packages: script_packages.Packages = ()
    """The monorepo's own packages (context/script_packages.py)."""


class ProjectFiles:
    """The project files of the workspace folders, found and parsed once each."""

    def __init__(self) -> None:
        self._nearest: dict[tuple[Path, str, tuple[str, ...]], str | None] = {}
        self._parsed: dict[tuple[Path, str], Any] = {}

    def forget(self) -> None:
        """A project file changed (or appeared, or went): read them again when next needed."""
        self._nearest.clear()
        self._parsed.clear()

    def go_module(self, root: Path, relative: str) -> GoModule | None:
        """The Go module `relative` (a file under `root`) belongs to."""
        found = self._find(root, posixpath.dirname(relative), (GO_MOD,))
        return self._load(root, found, _go_module) if found is not None else None

    def go_work(self, root: Path, relative: str) -> tuple[tuple[str, str], ...]:
        """(module path, folder) of each module of the go.work nearest `relative`: its `use`
        folders with a go.mod, their local replacements and go.work's own; () without one."""
        found = self._find(root, posixpath.dirname(relative), (GO_WORK,))
        if found is None:
            return ()
        folders, replaces = self._load(root, found, _go_work) or ((), ())
        modules: list[tuple[str, str]] = []
        for folder in folders:
            module = self._load(root, posixpath.join(folder, GO_MOD), _go_module)
            if module is not None:
                modules += [(module.path, module.folder), *module.replaces]
        return (*modules, *replaces)

    def crate(self, root: Path, relative: str) -> Crate | None:
        """The Cargo package `relative` belongs to."""
        found = self._find(root, posixpath.dirname(relative), (CARGO,))
        return self._load(root, found, _crate) if found is not None else None

    def script_paths(self, root: Path, relative: str) -> ScriptPaths | None:
        """The path mapping of the tsconfig.json (else jsconfig.json) nearest `relative`, and
        the packages of the monorepo it is in; None with neither."""
        found = self._find(root, posixpath.dirname(relative), SCRIPT_CONFIGS)
        config = self._load(root, found, _script_paths) if found is not None else None
        monorepo = self._monorepo(root, posixpath.dirname(relative))
        if monorepo is None:
            return config
        packages = self._load(root, monorepo, _monorepo_packages) or ()
        return replace(config or ScriptPaths(None, ()), packages=packages)

    def _monorepo(self, root: Path, folder: str) -> str | None:
        """The nearest folder at or above `folder` whose package.json has `workspaces` (or
        that has a pnpm-workspace.yaml)."""
        key = (root, folder, (script_packages.PACKAGE_JSON,))
        if key not in self._nearest:
            try:
                here = script_packages.workspace_globs(root, folder) is not None
            except OSError:
                here = False
            parent = posixpath.dirname(folder)
            above = self._monorepo(root, parent if parent != folder else "") if folder else None
            self._nearest[key] = folder if here else above
        return self._nearest[key]

    def _find(self, root: Path, folder: str, names: tuple[str, ...]) -> str | None:
        """The nearest of `names` in `folder` or above it, up to `root` (a relative path)."""
        key = (root, folder, names)
        if key in self._nearest:
            return self._nearest[key]
        found: str | None = None
        for name in names:
            candidate = posixpath.join(folder, name) if folder else name
            if (root / candidate).is_file():
                found = candidate
                break
        if found is None and folder:
            parent = posixpath.dirname(folder)
            found = self._find(root, parent if parent != folder else "", names)
        self._nearest[key] = found
        return found

    def _load(self, root: Path, relative: str, parse: Callable[[Path, str], T | None]) -> T | None:
        key = (root, relative)
        if key not in self._parsed:
            try:
                self._parsed[key] = parse(root, relative)
            except (OSError, ValueError, TypeError, tomllib.TOMLDecodeError) as error:
                logger.info("could not read %s: %s", relative, error)
                self._parsed[key] = None
        parsed: T | None = self._parsed[key]
        return parsed


def _read(root: Path, relative: str) -> str:
    path = root / relative
    if path.stat().st_size > MAX_BYTES:
        raise ValueError("too large")
    return path.read_text(encoding="utf-8", errors="replace")


def _go_module(root: Path, relative: str) -> GoModule | None:
    text = _GO_COMMENT.sub("", _read(root, relative))
    match = _GO_MODULE.search(text)
    if match is None:
        return None
    folder = posixpath.dirname(relative)
    replaces = tuple(
        (path, target)
        for path, to in _go_directives(text, "replace")
        if (target := _local(folder, to)) is not None
    )
    return GoModule(folder, match.group(1), replaces)


def _go_work(root: Path, relative: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(the `use` folders, the local `replace` directives) of go.work, relative to the
    workspace folder; those outside it are left out."""
    text = _GO_COMMENT.sub("", _read(root, relative))
    folder = posixpath.dirname(relative)
    used = tuple(
        target
        for to, _ in _go_directives(text, "use")
        if (target := _local(folder, to)) is not None
    )
    replaces = tuple(
        (path, target)
        for path, to in _go_directives(text, "replace")
        if (target := _local(folder, to)) is not None
    )
    return used, replaces


def _go_directives(text: str, verb: str) -> list[tuple[str, str]]:
    """`use` lines as (folder, ""), `replace` lines as (module path, what replaces it)."""
    lines = [
        body
        for kind, block in _GO_BLOCK.findall(text)
        if kind == verb
        for body in block.split("\n")
    ]
    lines += [line for kind, line in _GO_LINE.findall(text) if kind == verb]
    found: list[tuple[str, str]] = []
    for line in (line.replace('"', "").strip() for line in lines):
        if not line:
            continue
        if verb == "use":
            found.append((line, ""))
        elif match := _GO_REPLACE.match(line):
            found.append((match.group(1), match.group(2)))
    return found


def _inside(folder: str, path: str) -> str | None:
    """`path`, relative to `folder`, as a folder of the workspace; None out of it."""
    if posixpath.isabs(path):
        return None
    joined = posixpath.normpath(posixpath.join(folder, path))
    return None if joined.startswith("..") else "" if joined == "." else joined


def _local(folder: str, target: str) -> str | None:
    """A go.mod/go.work path (`./x`, `../x`) as a folder of the workspace; None when it is a
    module path (not on disk) or leads out of the workspace."""
    target = target.strip('"')
    if not target.startswith(("./", "../")) and target not in (".", ".."):
        return None
    return _inside(folder, target)


def _crate(root: Path, relative: str) -> Crate:
    folder = posixpath.dirname(relative)
    src = posixpath.join(folder, "src") if folder else "src"
    lib, main = posixpath.join(src, "lib.rs"), posixpath.join(src, "main.rs")
    manifest = tomllib.loads(_read(root, relative))
    package = manifest.get("package", {})
    name = package.get("name", "") if isinstance(package, dict) else ""
    return Crate(
        src,
        lib if (root / lib).is_file() else None,
        main if (root / main).is_file() else None,
        name.replace("-", "_") if isinstance(name, str) else "",
        _dependencies(root, folder, manifest),
    )


_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _dependencies(root: Path, folder: str, manifest: dict[str, Any]) -> tuple[Dependency, ...]:
    """The path dependencies of the crate whose Cargo.toml (`manifest`) is in `folder` that
    lead to a library crate of the workspace."""
    shared: dict[str, Any] | None = None  # [workspace.dependencies], read when first needed
    found: list[Dependency] = []
    for table in _DEPENDENCY_TABLES:
        entries = manifest.get(table)
        for key, spec in entries.items() if isinstance(entries, dict) else ():
            at, base = (spec.get("path"), folder) if isinstance(spec, dict) else (None, folder)
            if isinstance(spec, dict) and spec.get("workspace") is True:
                if shared is None:
                    shared = _workspace_dependencies(root, folder)
                inherited = shared.get(key)
                at, base = inherited if isinstance(inherited, tuple) else (None, folder)
            target = _inside(base, at) if isinstance(at, str) else None
            lib = posixpath.join(target, "src", "lib.rs") if target else "src/lib.rs"
            if target is not None and (root / lib).is_file():
                found.append(Dependency(key.replace("-", "_"), posixpath.dirname(lib), lib))
    return tuple(found)


def _workspace_dependencies(root: Path, folder: str) -> dict[str, Any]:
    """{key: (its `path`, the workspace's folder)} of `[workspace.dependencies]` in the
    nearest Cargo.toml above `folder` (itself included) that has a `[workspace]`."""
    while True:
        relative = posixpath.join(folder, CARGO) if folder else CARGO
        if (root / relative).is_file():
            workspace = tomllib.loads(_read(root, relative)).get("workspace")
            if isinstance(workspace, dict):
                entries = workspace.get("dependencies")
                return {
                    key: (spec["path"], folder)
                    for key, spec in (entries.items() if isinstance(entries, dict) else ())
                    if isinstance(spec, dict) and isinstance(spec.get("path"), str)
                }
        if not folder:
            return {}
        folder = posixpath.dirname(folder)


def json_with_comments(text: str) -> Any:
    """JSON as tsconfig.json allows it: with comments and trailing commas."""
    text = _JSON_NOISE.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", text))


def _options(root: Path, relative: str, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(config folder, compilerOptions) of `relative` and the relative configs it `extends`,
    base first."""
    config = json_with_comments(_read(root, relative))
    if not isinstance(config, dict):
        return []
    folder = posixpath.dirname(relative)
    found: list[tuple[str, dict[str, Any]]] = []
    parent = config.get("extends")
    if isinstance(parent, str) and parent.startswith(".") and depth < 3:
        target = posixpath.normpath(posixpath.join(folder, parent))
        target = target if target.endswith(".json") else target + ".json"
        if not target.startswith("..") and (root / target).is_file():
            found += _options(root, target, depth + 1)
    options = config.get("compilerOptions")
    found.append((folder, options if isinstance(options, dict) else {}))
    return found


def _monorepo_packages(root: Path, folder: str) -> script_packages.Packages:
    globs = script_packages.workspace_globs(root, folder) or []
    return script_packages.packages(root, folder, globs)


def _script_paths(root: Path, relative: str) -> ScriptPaths:
    base: str | None = None
    paths: dict[str, Any] = {}
    paths_folder = ""
    for folder, options in _options(root, relative):  # a later config overrides an earlier
        if isinstance(options.get("baseUrl"), str):
            base = _join(folder, options["baseUrl"])
        if isinstance(options.get("paths"), dict):
            paths, paths_folder = options["paths"], folder
    anchor = base if base is not None else paths_folder  # TS: paths without baseUrl
    mapped = tuple(
        (pattern, tuple(_join(anchor, t) for t in targets if isinstance(t, str)))
        for pattern, targets in paths.items()
        if isinstance(pattern, str) and isinstance(targets, list)
    )
    return ScriptPaths(base, mapped)


def _join(folder: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(folder, path))
    return "" if joined == "." else joined
