"""The packages of a JavaScript/TypeScript monorepo: where `import … from "@acme/utils"` leads
when `@acme/utils` is one of the workspace's own packages rather than something installed.

npm and Yarn list the package folders in the root package.json's `workspaces` (an array of
globs, or `{"packages": […]}`), pnpm in pnpm-workspace.yaml's `packages:`. Each folder's
package.json gives the package's `name` and its entry points (`types`, `typings`, `module`,
`main`, and `exports["."]`); the source under `src/` is tried after them, since the declared
entry is often built output (`dist/`) that git ignores and the index does not hold. A
subpath (`@acme/utils/dates`) goes through the package's subpath `exports` (`"./dates"`, or a
pattern such as `"./*": "./dist/*.js"`), built output again followed by its `src/`
counterpart, then to the folder of that name and under `src/`.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from pathlib import Path
from typing import Any

PACKAGE_JSON = "package.json"
PNPM_WORKSPACE = "pnpm-workspace.yaml"
MAX_PACKAGES = 1000
MAX_VISITED = 20_000
"""Folders a `**` workspace glob may walk."""
_ENTRY_FIELDS = ("types", "typings", "module", "main")
_CONDITIONS = ("types", "import", "module", "require", "default")
_PNPM_ITEM = re.compile(r"""^\s*-\s*['"]?([^'"#\s]+)['"]?""")

Subpaths = tuple[tuple[str, tuple[str, ...]], ...]
"""(subpath pattern without its `./`, e.g. `dates` or `features/*`; the paths it maps to)."""
Packages = tuple[tuple[str, str, tuple[str, ...], Subpaths], ...]
"""(package name, its folder, its entry paths, most likely first, its subpath exports),
folders and paths relative to the workspace folder."""
_BUILT = re.compile(r"^(?:dist|build|lib|out)/")
"""A path under a package's build output, whose source is usually under `src/`."""


def workspace_globs(root: Path, folder: str) -> list[str] | None:
    """The package globs of a monorepo root at `folder` (relative to `root`); None when the
    folder is no such root."""
    pnpm = root / folder / PNPM_WORKSPACE
    if pnpm.is_file():
        return _pnpm_globs(pnpm.read_text(encoding="utf-8", errors="replace"))
    manifest = root / folder / PACKAGE_JSON
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return None
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    if not isinstance(workspaces, list):
        return None
    return [glob for glob in workspaces if isinstance(glob, str)]


def _pnpm_globs(text: str) -> list[str]:
    globs: list[str] = []
    inside = False
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and not line.startswith("-"):
            inside = line.split(":", 1)[0].strip() == "packages"
            continue
        if inside and (match := _PNPM_ITEM.match(line)):
            globs.append(match.group(1))
    return globs


def packages(root: Path, folder: str, globs: list[str]) -> Packages:
    """The packages the `globs` of the monorepo root at `folder` name (`!glob` excludes)."""
    base = root / folder
    excluded: set[Path] = set()
    for glob in globs:
        if glob.startswith("!"):
            excluded.update(_folders(base, glob[1:]))
    found: list[tuple[str, str, tuple[str, ...], Subpaths]] = []
    for glob in globs:
        if glob.startswith("!"):
            continue
        for package in _folders(base, glob):
            if package in excluded or len(found) >= MAX_PACKAGES:
                continue
            described = _describe(root, package)
            if described is not None and all(described[0] != f[0] for f in found):
                found.append(described)
    return tuple(found)


def _folders(base: Path, glob: str) -> list[Path]:
    """The folders under `base` that `glob` matches and that hold a package.json. A `**` glob
    is walked with node_modules and hidden folders pruned (Path.glob would walk every
    installed package first), `MAX_VISITED` folders at most: this runs on a keystroke's
    retrieval, once per monorepo."""
    pattern = glob.strip().rstrip("/").removeprefix("./")
    if not pattern or pattern.startswith(("/", "..")):
        return []
    if "**" not in pattern:
        found = [manifest.parent for manifest in base.glob(f"{pattern}/{PACKAGE_JSON}")]
        return sorted(f for f in found if "node_modules" not in f.relative_to(base).parts)
    start = base / pattern.split("**", 1)[0].rstrip("/")
    found = []
    for visited, (folder, children, files) in enumerate(os.walk(start)):
        if visited >= MAX_VISITED:
            break
        children[:] = sorted(c for c in children if c != "node_modules" and not c.startswith("."))
        relative = Path(folder).relative_to(base).as_posix()
        if PACKAGE_JSON in files and _matches(relative, pattern):
            found.append(Path(folder))
    return sorted(found)


def _matches(relative: str, pattern: str) -> bool:
    """Whether folder `relative` matches a glob where `**` is any number of folders."""
    expression = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*")
    return re.fullmatch(expression.replace(r"\*", "[^/]*"), relative) is not None


def _describe(root: Path, package: Path) -> tuple[str, str, tuple[str, ...], Subpaths] | None:
    try:
        data = json.loads((package / PACKAGE_JSON).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        return None
    folder = package.relative_to(root).as_posix()
    folder = "" if folder == "." else folder
    declared = [data[field] for field in _ENTRY_FIELDS if isinstance(data.get(field), str)]
    declared += _exported(data.get("exports"))
    entries = [_join(folder, entry) for entry in declared]
    entries += [_join(folder, "src/index"), _join(folder, "index")]
    unique = tuple(dict.fromkeys(e for e in entries if e is not None))
    return name, folder, unique, _subpaths(folder, data.get("exports"))


def _subpaths(folder: str, exports: Any) -> Subpaths:
    """The package's subpath exports (`"./dates": …`, `"./*": …`), each to its paths (by its
    conditions' order, each built one followed by its `src/` counterpart); an export to
    `null` (hidden) maps to nothing."""
    if not isinstance(exports, dict):
        return ()
    found: list[tuple[str, tuple[str, ...]]] = []
    for key, value in exports.items():
        if not isinstance(key, str) or not key.startswith("./") or key == "./":
            continue
        paths: list[str] = []
        for target in _exported(value):
            relative = posixpath.normpath(target)
            source = _BUILT.sub("src/", relative) if _BUILT.match(relative) else None
            paths += [p for each in (relative, source) if each and (p := _join(folder, each))]
        found.append((key[2:], tuple(dict.fromkeys(paths))))
    return tuple(found)


def _exported(exports: Any) -> list[str]:
    """The paths `exports` maps the package's root (".") to, by its conditions' order."""
    if isinstance(exports, str):
        return [exports]
    if not isinstance(exports, dict):
        return []
    if "." in exports:
        return _exported(exports["."])
    if any(key.startswith(".") for key in exports):
        return []  # subpaths only
    found: list[str] = []
    for condition in (*_CONDITIONS, *exports):
        if condition in exports:
            found += [path for path in _exported(exports[condition]) if path not in found]
    return found


def _join(folder: str, path: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(folder, path))
    return None if joined.startswith(("..", "/")) else joined


def entries(specifier: str, found: Packages) -> list[str]:
    """The paths a bare `specifier` (`@acme/utils`, `@acme/utils/sub/x`) may name among the
    workspace's packages; [] when it names none of them."""
    for name, folder, points, subpaths in sorted(found, key=lambda package: -len(package[0])):
        if specifier == name:
            return list(points)
        if specifier.startswith(name + "/"):
            rest = specifier[len(name) + 1 :]
            exported = _subpath(rest, subpaths)
            if exported is not None and not exported:
                return []  # hidden (`null`): not importable
            fallback = [p for p in (_join(folder, rest), _join(folder, f"src/{rest}")) if p]
            return list(dict.fromkeys([*(exported or []), *fallback]))
    return []


def _subpath(rest: str, subpaths: Subpaths) -> list[str] | None:
    """The paths subpath `rest` is exported as: an exact key, else the pattern with the longest
    part before its `*` (as Node picks); None when no export names it."""
    best: tuple[int, list[str]] | None = None
    for pattern, paths in subpaths:
        head, star, tail = pattern.partition("*")
        if not star:
            if rest == pattern:
                return list(paths)
            continue
        fits = len(rest) >= len(head) + len(tail) and rest.startswith(head) and rest.endswith(tail)
        if fits and (best is None or len(head) > best[0]):
            middle = rest[len(head) : len(rest) - len(tail)]
            best = (len(head), [path.replace("*", middle) for path in paths])
    return best[1] if best is not None else None
