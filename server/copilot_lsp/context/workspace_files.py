"""Which files of a workspace folder the index may read: discovery and exclusion.

The files git would track (`git ls-files --cached --others --exclude-standard`) where the
folder is in a git repository, else a walk that honours every `.gitignore` on the way; of
those only the languages the server has a grammar for, under a size limit, up to a count
limit. Secrets are never read, whatever git says: `.env*`, keys and certificates, package
manager and netrc credentials, anything named like a credentials file (`SECRET_PATTERNS`),
plus the user's `context.workspace.exclude` globs.

Runs in the indexing process (context/indexer.py), never on the event loop: it starts git
and reads the disk.
"""

from __future__ import annotations

import functools
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec

SECRET_PATTERNS: tuple[str, ...] = (
    ".env*",
    "*.env",
    "*.pem",
    "*.key",
    "*.crt",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".git-credentials",
    "*credentials*",
    "secrets.json",
    "secrets.y*ml",
    "secrets.toml",
)
"""Never read, in any folder, even when git tracks them."""

NOISE_PATTERNS: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".pytest_cache/",
    ".tox/",
    "*.min.js",
)
"""Left out of a folder without git (git repositories usually ignore them already)."""

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".go": "go",
    ".rs": "rust",
}
"""The language id of each indexed file name ending (the languages with a grammar)."""

GIT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = 1_000_000
    max_files: int = 20_000
    exclude: tuple[str, ...] = ()
    """The user's globs (gitignore syntax), on top of `SECRET_PATTERNS`."""


def language_of(path: str) -> str | None:
    """The language id of a file name, or None for a language the index does not read."""
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


def exclusion(extra: Iterable[str] = ()) -> pathspec.GitIgnoreSpec:
    """The secrets and the user's globs, as one gitignore-style matcher of relative paths."""
    return pathspec.GitIgnoreSpec.from_lines([*SECRET_PATTERNS, *extra])


@functools.cache
def _secrets() -> pathspec.GitIgnoreSpec:
    return exclusion()


def secret_file(path: str) -> bool:
    """Whether `path` (a posix path, relative or not) names a secret file (`SECRET_PATTERNS`):
    an open `.env` never lends its lines to a prompt either."""
    return excluded(_secrets(), path.lstrip("/"))


def excluded(spec: pathspec.GitIgnoreSpec, relative: str) -> bool:
    """Whether `relative` (a posix path under the root) or a folder above it is excluded."""
    if spec.match_file(relative):
        return True
    parts = relative.split("/")
    return any(spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts)))


def discover(root: Path, limits: Limits) -> list[str]:
    """The relative posix paths of the files under `root` the index reads, sorted, at most
    `limits.max_files` of them."""
    spec = exclusion(limits.exclude)
    listed = _git_files(root)
    noise = pathspec.GitIgnoreSpec.from_lines(NOISE_PATTERNS)
    candidates = listed if listed is not None else _walk(root, noise)
    found: list[str] = []
    for relative in sorted(candidates):
        if len(found) >= limits.max_files:
            break
        if language_of(relative) is None or excluded(spec, relative):
            continue
        if readable_size(root / relative) is not None and _small(root / relative, limits):
            found.append(relative)
    return found


def admitted(root: Path, relative: str, limits: Limits) -> bool:
    """Whether one file (created, saved or opened after discovery) may be indexed: the same
    rules as `discover`, git's ignore rules included."""
    if language_of(relative) is None or excluded(exclusion(limits.exclude), relative):
        return False
    if not _small(root / relative, limits):
        return False
    return not _ignored(root, relative)


def readable_size(path: Path) -> int | None:
    """The size of a regular file (no symbolic link, folder or device), else None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _small(path: Path, limits: Limits) -> bool:
    size = readable_size(path)
    return size is not None and size <= limits.max_file_bytes


def _git(root: Path, arguments: Sequence[str]) -> subprocess.CompletedProcess[bytes] | None:
    environment = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        return subprocess.run(
            ["git", "-C", str(root), *arguments],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env=environment,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _git_files(root: Path) -> list[str] | None:
    """What git would track under `root`; None when `root` is not in a git repository, or
    lies in a part of one that git ignores (then its own `.gitignore` files rule)."""
    if _ignored_folder(root):
        return None
    done = _git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    if done is None or done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name})


def _ignored_folder(root: Path) -> bool:
    """Whether `root` is a folder its enclosing repository ignores: a user who opens, say,
    one package of a virtual environment or a vendored tree as the workspace wants it read."""
    if root.parent == root:
        return False
    done = _git(root.parent, ["check-ignore", "-q", "--", root.name + "/"])
    return done is not None and done.returncode == 0


def _ignored(root: Path, relative: str) -> bool:
    done = None if _ignored_folder(root) else _git(root, ["check-ignore", "-q", "--", relative])
    if done is not None and done.returncode in (0, 1):
        return done.returncode == 0
    parts = relative.split("/")
    for depth in range(len(parts)):
        folder = root.joinpath(*parts[:depth])
        spec = _gitignore(folder)
        if spec is not None and excluded(spec, "/".join(parts[depth:])):
            return True
    return False


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _walk(root: Path, noise: pathspec.GitIgnoreSpec) -> Iterator[str]:
    """Files under `root` that no `.gitignore` on the way ignores (nor `noise`)."""
    rules: list[tuple[str, pathspec.GitIgnoreSpec]] = []  # (folder relative to root, its rules)
    for folder, subfolders, files in os.walk(root):
        here = Path(folder).relative_to(root).as_posix()
        here = "" if here == "." else here
        spec = _gitignore(Path(folder))
        rules = [(base, rule) for base, rule in rules if _within(here, base)]
        if spec is not None:
            rules.append((here, spec))
        subfolders[:] = sorted(
            name for name in subfolders if not _skipped(_join(here, name) + "/", noise, rules)
        )
        for name in sorted(files):
            relative = _join(here, name)
            if not _skipped(relative, noise, rules):
                yield relative


def _skipped(
    relative: str, noise: pathspec.GitIgnoreSpec, rules: list[tuple[str, pathspec.GitIgnoreSpec]]
) -> bool:
    """Whether `relative` (a folder's ends with "/") is noise or ignored by a `.gitignore`."""
    if noise.match_file(relative):
        return True
    return any(rule.match_file(_below(relative, base)) for base, rule in rules)


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def _within(path: str, base: str) -> bool:
    return not base or path == base or path.startswith(base + "/")


def _below(path: str, base: str) -> str:
    return path[len(base) + 1 :] if base else path
