"""JavaScript/TypeScript imports: what `import … from`, TypeScript's `import x = require()`
and CommonJS `const x = require()` / `const { a, b: c } = require()` bind, and where their
specifiers lead.

A specifier resolves to a workspace module (a path without extension: `x.ts`, `x.tsx`,
`x.js`, `x/index.ts` are all `x`): relative (`./x`, `../x`) against the importing file;
else through the nearest tsconfig.json/jsconfig.json's `compilerOptions.paths` patterns
(`"@/*": ["src/*"]`, the longest matching prefix first) and `baseUrl`, then the monorepo's
own packages (`@acme/utils` to its entry points: context/script_packages.py). Any other bare
package name (`react`) leads to node_modules, which is not indexed: it resolves to nothing.
"""

from __future__ import annotations

import posixpath
import re

from copilot_lsp.context import script_packages
from copilot_lsp.context.imported import Imported
from copilot_lsp.context.project_files import ScriptPaths

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_FROM = re.compile(r"""^(?:import|export)\s+(?:type\s+)?(.+?)\s+from\s+['"]([^'"]+)['"]""")
_TS_REQUIRE = re.compile(
    r"""^(?:export\s+)?import\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)"""
)
_CJS = re.compile(r"""^(?:const|let|var)\s+(.+?)\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)""")
_NAMED = re.compile(r"\{([^}]*)\}")
_EXTENSION = re.compile(r"\.(?:d\.ts|[cm]?[jt]sx?)$")


def parse(statement: str, relative: str, paths: ScriptPaths | None) -> list[Imported]:
    """What `statement` binds in the file at `relative` (its workspace path), `paths` the
    nearest tsconfig's mapping (None: no such file)."""
    flat = " ".join(_COMMENT.sub(" ", statement).split())
    if match := _TS_REQUIRE.match(flat):
        binding, specifier = match.groups()
        return [Imported(target, binding) for target in resolve(specifier, relative, paths)]
    if match := _CJS.match(flat):
        clause, specifier = match.groups()
        return _bindings(clause, resolve(specifier, relative, paths), ":")
    if match := _FROM.match(flat):
        clause, specifier = match.groups()
        return _bindings(clause, resolve(specifier, relative, paths), " as ")
    return []


def _bindings(clause: str, targets: list[str], rename: str) -> list[Imported]:
    """The names `clause` binds from each of `targets`: `{ a, b as c }` (`{ a, b: c }` in a
    destructuring `require`), `* as ns`, a default import, a whole module."""
    found: list[Imported] = []
    for target in targets:
        rest = clause
        named = _NAMED.search(rest)
        if named:
            for part in named.group(1).split(","):
                pieces = part.strip().removeprefix("type ").split(rename)
                original, binding = pieces[0].strip(), pieces[-1].strip()
                if original and binding.isidentifier():
                    found.append(Imported(target, binding, original))
            rest = _NAMED.sub("", rest)
        for part in rest.split(","):
            part = part.strip()
            if part.startswith("* as "):
                found.append(Imported(target, part[5:].strip()))
            elif part and part.replace("$", "_").isidentifier():
                found.append(Imported(target, part))
    return found


def resolve(specifier: str, relative: str, paths: ScriptPaths | None) -> list[str]:
    """The module keys `specifier` may name, imported from `relative`, most likely first."""
    if specifier.startswith(("./", "../")) or specifier in (".", ".."):
        found = [_normal(posixpath.join(posixpath.dirname(relative), specifier))]
    elif paths is not None:
        found = [*_mapped(specifier, paths), *script_packages.entries(specifier, paths.packages)]
    else:
        found = []
    keys: list[str] = []
    for path in found:
        if path is None:
            continue
        key = _EXTENSION.sub("", path)
        key = key[: -len("/index")] if key.endswith("/index") else key
        if key and key != "index" and key not in keys:
            keys.append(key)
    return keys


def _mapped(specifier: str, paths: ScriptPaths) -> list[str | None]:
    """`specifier` through the `paths` patterns (the longest matching prefix first), else
    under `baseUrl`."""
    matches: list[tuple[int, list[str | None]]] = []
    for pattern, targets in paths.paths:
        head, star, tail = pattern.partition("*")
        if not star:
            if specifier == pattern:
                matches.append((len(pattern) + 1, [_normal(target) for target in targets]))
            continue
        fits = len(specifier) >= len(head) + len(tail)
        if fits and specifier.startswith(head) and specifier.endswith(tail):
            middle = specifier[len(head) : len(specifier) - len(tail)]
            found = [_normal(target.replace("*", middle, 1)) for target in targets]
            matches.append((len(head), found))
    if matches:
        return max(matches, key=lambda match: match[0])[1]
    if paths.base is not None:
        return [_normal(posixpath.join(paths.base, specifier) if paths.base else specifier)]
    return []


def _normal(path: str) -> str | None:
    """A workspace path, or None when it leaves the workspace folder."""
    joined = posixpath.normpath(path)
    return None if joined.startswith("..") or joined.startswith("/") else joined
