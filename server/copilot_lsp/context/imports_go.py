"""Go imports: `import "example.com/m/pkg/util"` and grouped `import ( u "…"; . "…"; _ "…" )`.

An import path under the module path of the nearest go.mod (its `module` line) names a
folder of the workspace: that folder is the package, all its non-test files together. So does
one under a module that go.mod's `replace` directives point at a folder of the workspace
(`replace example.com/lib => ../lib`), or one of the modules of the nearest go.work (`use
./lib`, and its own `replace` directives): the longest module path that holds the import
path wins. A module from elsewhere that the module vendors (`go mod vendor`: its copy under
`vendor/<import path>` beside go.mod) leads to that copy. Anything else (the standard
library, modules neither local nor vendored) is not in the workspace and resolves to
nothing; a blank import (`_`) binds no name.
"""

from __future__ import annotations

import posixpath
import re

from copilot_lsp.context.imported import Imported, Place

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_SPEC = re.compile(r"(?:^|[\s(;])(?:([A-Za-z_]\w*|\.)\s+)?(?:\"([^\"\n]+)\"|`([^`\n]+)`)")


def parse(statement: str, place: Place) -> list[Imported]:
    """What an `import` declaration binds in the file at `place`."""
    text = _COMMENT.sub(" ", statement).strip()
    if not text.startswith("import"):
        return []
    roots = _module_roots(place)
    if not roots:
        return []
    vendor = _vendor_folder(place)
    found: list[Imported] = []
    for match in _SPEC.finditer(text[len("import") :]):
        alias, path = match.group(1), match.group(2) or match.group(3)
        folder = next(
            (f for p, at in roots if (f := package_folder(path, p, at)) is not None), None
        )
        if folder is None and vendor is not None:
            folder = _vendored(path, vendor, place)
        if folder is None or alias == "_":
            continue
        binding = "*" if alias == "." else alias or _package_name(path)
        found.append(Imported(folder, binding, package=True))
    return found


def _module_roots(place: Place) -> list[tuple[str, str]]:
    """(module path, its folder) of every module an import may lead into, the longest path
    first: the file's own module and its local replacements, then go.work's."""
    own = place.files.go_module(place.root, place.relative)
    roots: list[tuple[str, str]] = []
    if own is not None:
        roots += [(own.path, own.folder), *own.replaces]
    roots += place.files.go_work(place.root, place.relative)
    unique = dict.fromkeys(roots)
    return sorted(unique, key=lambda root: -len(root[0]))


def _vendor_folder(place: Place) -> str | None:
    """The `vendor` folder beside the file's go.mod, when there is one."""
    own = place.files.go_module(place.root, place.relative)
    if own is None:
        return None
    vendor = posixpath.join(own.folder, "vendor") if own.folder else "vendor"
    return vendor if (place.root / vendor).is_dir() else None


def _vendored(path: str, vendor: str, place: Place) -> str | None:
    """The vendored copy of package `path` (a folder of `vendor`), if it is there."""
    if path.startswith(("/", ".")) or "/." in path or "." not in path.split("/", 1)[0]:
        return None  # the standard library (`fmt`, `net/http`) is never vendored
    folder = posixpath.join(vendor, path)
    return folder if (place.root / folder).is_dir() else None


def package_folder(path: str, module_path: str, module_folder: str) -> str | None:
    """The workspace folder of import path `path` in the module `module_path` whose go.mod
    is in `module_folder`; None outside the module."""
    if path == module_path:
        rest = ""
    elif path.startswith(module_path + "/"):
        rest = path[len(module_path) + 1 :]
    else:
        return None
    joined = posixpath.normpath(posixpath.join(module_folder, rest)) if rest else module_folder
    if joined.startswith(".."):
        return None
    return "" if joined == "." else joined


def _package_name(path: str) -> str:
    """The name a package is used by: its path's last element, but a major version
    (`…/yaml/v3`) or a `gopkg.in/yaml.v3` suffix."""
    parts = path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    return re.sub(r"\.v\d+$", "", last).replace("-", "_")
