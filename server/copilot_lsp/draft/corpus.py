"""The training corpus: Python source that is on every machine, split by file hash.

Sources are the standard library and the installed packages (site-packages), which need no
network. A file's split is decided by the SHA-256 of its content, so the split never depends on
where a file lives, on the order of a directory listing or on which packages are installed
(identical files vendored by two packages fall on the same side). Evaluation data is refused
even if a caller points at it: the SAFIM tasks shipped in the package (`paths.evaluation_data`)
and any file or folder named after SAFIM (a copy of the published files).
"""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from copilot_lsp import paths
from copilot_lsp.errors import ConfigError

Split = Literal["train", "heldout"]
TokenEncoder = Callable[[str], list[int]]
"""text -> token ids (a tokenizer's encode, without special tokens)."""

# Never train on these: the evaluation tasks, wherever the package is installed.
_FORBIDDEN_ROOTS = (paths.evaluation_data(),)
_MIN_BYTES = 256
_MAX_BYTES = 256_000


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    digest: str
    """SHA-256 of the content: decides the split and removes duplicates."""

    def split(self, heldout_percent: int) -> Split:
        return "heldout" if int(self.digest[:8], 16) % 100 < heldout_percent else "train"


def default_roots() -> list[Path]:
    """The standard library and the installed packages of this interpreter."""
    paths = sysconfig.get_paths()
    roots = [Path(paths["stdlib"]), Path(paths["purelib"])]
    return [root for root in dict.fromkeys(roots) if root.is_dir()]


def resolve_roots(specs: Sequence[str]) -> list[Path]:
    """`stdlib`, `site-packages`, `default` or folders/files; evaluation data is refused."""
    roots: list[Path] = []
    stdlib, purelib = default_roots()[0], Path(sysconfig.get_paths()["purelib"])
    for spec in specs or ["default"]:
        if spec == "default":
            roots += default_roots()
        elif spec == "stdlib":
            roots.append(stdlib)
        elif spec == "site-packages":
            roots.append(purelib)
        else:
            path = Path(spec).expanduser().resolve()
            if not path.exists():
                raise ConfigError(f"corpus path {spec} does not exist")
            _refuse_evaluation_data(path)
            roots.append(path)
    return list(dict.fromkeys(roots))


def _refuse_evaluation_data(path: Path) -> None:
    if _is_evaluation_path(path):
        raise ConfigError(f"{path} is evaluation data (SAFIM); drafts are never trained on it")


def _is_evaluation_path(path: Path) -> bool:
    if any(path == root or root in path.parents for root in _FORBIDDEN_ROOTS):
        return True
    return any("safim" in part.lower() for part in path.parts)


def iter_python_files(roots: Iterable[Path]) -> Iterator[Path]:
    """`.py` files under the roots, in sorted order, without following symlinks."""
    for root in roots:
        if root.is_file():
            if root.suffix == ".py":
                yield root
            continue
        for path in sorted(root.rglob("*.py")):
            if path.is_symlink() or _is_evaluation_path(path):
                continue
            yield path


def collect(roots: Iterable[Path]) -> list[SourceFile]:
    """Unique source files (by content), ordered by content hash: a deterministic shuffle."""
    seen: dict[str, SourceFile] = {}
    for path in iter_python_files(roots):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if not _MIN_BYTES <= len(data) <= _MAX_BYTES:
            continue
        digest = hashlib.sha256(data).hexdigest()
        seen.setdefault(digest, SourceFile(path, digest))
    return [seen[key] for key in sorted(seen)]


def read_text(source: SourceFile) -> str | None:
    try:
        return source.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True, slots=True)
class Chunking:
    seq_len: int = 256
    """Tokens per training sequence."""
    max_chunks_per_file: int = 4
    """Caps how much one long file weighs in the corpus."""


def token_sequences(
    files: Iterable[SourceFile],
    encode: TokenEncoder,
    chunking: Chunking,
    max_tokens: int,
) -> Iterator[tuple[SourceFile, list[int]]]:
    """Fixed-length token windows from the files, in order, until `max_tokens` are produced."""
    produced = 0
    for source in files:
        if produced >= max_tokens:
            return
        text = read_text(source)
        if text is None:
            continue
        ids = encode(text)
        length = chunking.seq_len
        windows = [ids[i : i + length] for i in range(0, len(ids) - length + 1, length)]
        for window in windows[: chunking.max_chunks_per_file]:
            yield source, window
            produced += length
            if produced >= max_tokens:
                return
