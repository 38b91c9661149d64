"""What an import statement binds (context/imports.py reads it, per language), and where the
statement is: the file and its workspace folder, with the project files that decide where
its imports lead (context/project_files.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from copilot_lsp.context.project_files import ProjectFiles


@dataclass(frozen=True, slots=True)
class Imported:
    module: str
    """The module's name as the index keys it (RepoIndex.module): dotted for Python, the
    workspace path without extension for the others; for a Go package (`package`) its
    folder."""
    binding: str
    """The name the importing file uses: an alias, a dotted path, or "*" (every name)."""
    name: str | None = None
    """The module's member imported (`from m import name`); None: the module itself."""
    submodule: str | None = None
    """The module `name` is when it names a module rather than a member (`from pkg import
    mod`, Rust's `use crate::a::b;`); tried before the member."""
    package: bool = False
    """`module` is a folder whose files make one package (Go)."""


@dataclass(frozen=True, slots=True)
class Place:
    """The importing file."""

    root: Path
    """Its workspace folder."""
    relative: str
    """Its path under `root` (posix)."""
    files: ProjectFiles
