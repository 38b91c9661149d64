"""The repository stands alone: nothing in it reads a file that lies beside the checkout.

`make test` in a fresh clone with nothing beside it must pass (issue 27), so no module, test,
script or build file names a path of the machine it was written on: the shared evaluation
folder this project's SAFIM tasks once came from (they are vendored now: bench/quality/data)
or the workspace the checkouts lived in. Document URIs such as `file:///work/demo.py` are
names the tests give documents, never read from disk, and are allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

FOLDERS = ("server", "tests", "scripts", "configs", "deploy", "examples", ".ci")
FILES = ("Makefile", "pyproject.toml")
SUFFIXES = frozenset({".py", ".toml", ".sh", ".cfg", ".ini", ".yaml", ".yml", ".txt", ""})
OUTSIDE = re.compile(
    r'shared"?\s*/\s*"?(?:eval|safim)'  # the shared evaluation folder, as text or joined
    r"|(?<![\w/:.])/work/"  # the workspace the checkouts lived in (a URI's path is fine)
    r"|beside the checkout"  # how the old code said it looked for them
)


def checked_files(root: Path = REPO) -> list[Path]:
    found = [root / name for name in FILES]
    for folder in FOLDERS:
        found += [
            path
            for path in sorted((root / folder).rglob("*"))
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts
        ]
    return [path for path in found if path.is_file() and path != Path(__file__).resolve()]


def outside_paths(path: Path, root: Path = REPO) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []  # weights, archives: no paths written by hand
    return [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if OUTSIDE.search(line)
    ]


def test_the_reader_finds_paths_outside_and_lets_document_uris_pass(tmp_path: Path) -> None:
    module = tmp_path / "server" / "m.py"
    module.parent.mkdir()
    module.write_text(
        'DATA = Path("/work/shared/eval/safim")\n'
        'URI = "file:///work/demo.py"\n'
        'candidate = folder / "shared" / "eval" / "safim"\n'
        "candidate = root / 'shared/safim'\n",
        encoding="utf-8",
    )
    assert checked_files(tmp_path) == [module]
    assert [line.split(":")[1] for line in outside_paths(module, tmp_path)] == ["1", "3", "4"]


def test_no_module_test_or_build_file_names_a_path_outside_the_repository() -> None:
    files = checked_files()
    assert any(path.name == "safim.py" for path in files)  # the reader sees the package
    assert [line for path in files for line in outside_paths(path)] == []
