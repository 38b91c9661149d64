"""Discovery: what git would track (or no .gitignore excludes), never secrets, within limits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from copilot_lsp.context import workspace_files
from copilot_lsp.context.workspace_files import Limits, admitted, discover, excluded, exclusion
from tests.unit.context.workspace_fixtures import SECRET, git_init, write_package

EXTRA = {
    ".gitignore": "ignored/\n*.gen.py\n",
    "ignored/skip.py": "x = 1\n",
    "made.gen.py": "x = 1\n",
    "src/nested/.gitignore": "local.py\n",
    "src/nested/local.py": "x = 1\n",
    "src/nested/kept.py": "x = 1\n",
    ".env.py": f"TOKEN = '{SECRET}'\n",
    "config/credentials.py": f"PASSWORD = '{SECRET}'\n",
    "keys/id_rsa.py": f"KEY = '{SECRET}'\n",
    "notes.txt": "not code\n",
    "web/app.ts": "export function go(): void {}\n",
}


@pytest.fixture(params=["git", "plain"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    write_package(tmp_path)
    write_package(tmp_path, EXTRA)
    if request.param == "git":
        git_init(tmp_path)
    return tmp_path


def test_discovery_honours_gitignore_and_skips_secrets(workspace: Path) -> None:
    found = discover(workspace, Limits())
    assert "pkg/mod.py" in found and "web/app.ts" in found and "src/nested/kept.py" in found
    for left_out in (
        "ignored/skip.py",
        "made.gen.py",
        "src/nested/local.py",
        ".env.py",
        "config/credentials.py",
        "keys/id_rsa.py",
        "notes.txt",
    ):
        assert left_out not in found, left_out
    assert found == sorted(found)


def test_discovery_respects_size_count_and_user_excludes(workspace: Path) -> None:
    (workspace / "big.py").write_text("x = 1\n" * 100, encoding="utf-8")
    assert "big.py" in discover(workspace, Limits())
    assert "big.py" not in discover(workspace, Limits(max_file_bytes=100))
    assert len(discover(workspace, Limits(max_files=3))) == 3
    found = discover(workspace, Limits(exclude=("pkg/sub/", "*.ts")))
    assert "pkg/mod.py" in found
    assert not [path for path in found if path.startswith("pkg/sub/") or path.endswith(".ts")]


def test_a_file_created_later_passes_the_same_rules(workspace: Path) -> None:
    (workspace / "ignored" / "new.py").write_text("x = 1\n", encoding="utf-8")
    (workspace / "fresh.py").write_text("x = 1\n", encoding="utf-8")
    (workspace / ".env.local.py").write_text(f"T = '{SECRET}'\n", encoding="utf-8")
    assert admitted(workspace, "fresh.py", Limits())
    assert not admitted(workspace, "ignored/new.py", Limits())
    assert not admitted(workspace, "src/nested/local.py", Limits())
    assert not admitted(workspace, ".env.local.py", Limits())
    assert not admitted(workspace, "fresh.py", Limits(exclude=("fresh.py",)))


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.production",
        "a/b/server.pem",
        "tls.key",
        "id_rsa",
        "id_rsa.pub",
        "c.p12",
        "c.pfx",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "aws/credentials",
        "gcp-credentials.json",
    ],
)
def test_secrets_are_excluded_in_any_folder(name: str) -> None:
    assert excluded(exclusion(), name)
    assert not excluded(exclusion(), "src/environment.py")


def test_symbolic_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(f"S = '{SECRET}'\n", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.py").symlink_to(outside)
    (root / "real.py").write_text("x = 1\n", encoding="utf-8")
    assert discover(root, Limits()) == ["real.py"]
    assert workspace_files.readable_size(root / "link.py") is None


OPENS = r"""
import sys
from pathlib import Path
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
from copilot_lsp.context.file_summary import summarize_batch
from copilot_lsp.context.workspace_files import Limits, discover, language_of
root = Path(sys.argv[1])
found = discover(root, Limits())
relative = [*found, ".env.py", "config/credentials.py"]  # as if created later: checked
items = [(str(root), path, language_of(path), None, path not in found) for path in relative]
summaries = summarize_batch(items, Limits())
print("\n".join(path for path in opened if path.startswith(str(root))))
print("indexed", sum(summary is not None for summary in summaries))
"""


def test_the_indexing_process_never_opens_a_secret(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OPENS, str(workspace)], capture_output=True, text=True, check=True
    )
    opened = done.stdout.splitlines()
    assert opened[-1] == "indexed 8"  # the package, kept.py and app.ts
    assert str(workspace / "pkg" / "mod.py") in opened
    for path in opened[:-1]:
        if Path(path).name == ".gitignore":
            continue  # read for its rules (tried in every folder on the way)
        assert SECRET not in Path(path).read_text(), path
        assert not path.endswith(("credentials.py", ".env.py", "id_rsa.py", "skip.py"))


def test_a_folder_its_repository_ignores_is_read_by_its_own_rules(tmp_path: Path) -> None:
    # One package of an ignored virtual environment (or vendored tree) opened as the
    # workspace: git's "ignored" for the whole folder must not hide every file.
    git_init(tmp_path)
    (tmp_path / ".gitignore").write_text("venv/\n")
    package = write_package(tmp_path / "venv" / "pkg", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    (package / ".gitignore").write_text("b.py\n")
    (package / ".env").write_text(f"TOKEN={SECRET}\n")
    assert discover(package, Limits()) == ["a.py"]
    assert admitted(package, "a.py", Limits()) and not admitted(package, "b.py", Limits())
    assert discover(tmp_path, Limits()) == []  # the repository itself still ignores it
