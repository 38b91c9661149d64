"""The draft corpus: deterministic split by content, duplicates removed, SAFIM refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp import paths
from copilot_lsp.draft import corpus
from copilot_lsp.errors import ConfigError


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def source(i: int) -> str:
    return f"def function_{i}(x):\n    return x * {i}\n" * 20


def test_split_follows_the_content_not_the_path(tmp_path: Path) -> None:
    for i in range(40):
        write(tmp_path / "a", f"m{i}.py", source(i))
        write(tmp_path / "b" / "deep", f"other_name_{i}.py", source(i))  # same content elsewhere
    files = corpus.collect([tmp_path])
    assert len(files) == 40  # duplicates collapsed
    splits = {f.digest: f.split(30) for f in files}
    assert set(splits.values()) == {"train", "heldout"}
    again = corpus.collect([tmp_path / "b"])
    assert {f.digest: f.split(30) for f in again} == splits
    assert [f.digest for f in files] == sorted(f.digest for f in files)


def test_tiny_and_huge_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "tiny.py", "x = 1\n")
    write(tmp_path, "huge.py", "x = 1\n" * 100_000)
    write(tmp_path, "fine.py", source(1))
    assert [f.path.name for f in corpus.collect([tmp_path])] == ["fine.py"]


def test_evaluation_data_is_refused(tmp_path: Path) -> None:
    safim = tmp_path / "SAFIM" / "data"
    write(safim, "task.py", source(3))
    with pytest.raises(ConfigError, match="SAFIM"):
        corpus.resolve_roots([str(safim)])
    write(tmp_path / "code", "ok.py", source(4))
    assert [f.path.name for f in corpus.collect([tmp_path])] == ["ok.py"]  # walked past SAFIM
    with pytest.raises(ConfigError, match="does not exist"):
        corpus.resolve_roots([str(tmp_path / "missing")])


def test_the_evaluation_tasks_shipped_in_the_package_are_refused() -> None:
    """bench quality's SAFIM tasks live inside the package, so an installed package's folder
    (site-packages is a default corpus root) holds them: refused by where they are, not only
    by a name (the README there says nothing of SAFIM in its path)."""
    shipped = paths.evaluation_data()
    assert (shipped / "safim-python.jsonl.gz").is_file()
    for path in (shipped, shipped / "README.md", shipped / "safim-python.jsonl.gz"):
        with pytest.raises(ConfigError, match="evaluation data"):
            corpus.resolve_roots([str(path)])


def test_windows_are_fixed_length_and_capped_per_file(tmp_path: Path) -> None:
    write(tmp_path, "long.py", source(7) * 10)
    files = corpus.collect([tmp_path])
    encode = lambda text: list(range(len(text)))  # noqa: E731 - one token per character
    chunking = corpus.Chunking(seq_len=100, max_chunks_per_file=3)
    windows = [w for _, w in corpus.token_sequences(files, encode, chunking, 10_000)]
    assert len(windows) == 3 and all(len(w) == 100 for w in windows)
    limited = list(corpus.token_sequences(files, encode, chunking, 150))
    assert len(limited) == 2  # stops once the token budget is reached
