"""Code from the workspace index in the prompt: charged to the budget, and the same bytes for
every keystroke on one line (vLLM's prefix cache keeps serving the prompt's head)."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from copilot_lsp.completion.assembly import Limits, build_prompt
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.crossfile import charge
from copilot_lsp.completion.templates import load_template
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Edit
from copilot_lsp.context.retrieval import CrossFile
from copilot_lsp.positions import Position
from copilot_lsp.settings import CompletionSettings
from tests.unit.context.workspace_fixtures import write_package

pytestmark = pytest.mark.timeout(60)

MAIN = "import pkg.mod as m\nfrom pkg.x import format_report\n\n\ndef main() -> None:\n    \n"
KEYSTROKES = ["t", "to", "tot", "total = m.", "total = m.compute_total("]


async def indexed_workspace(root: Path) -> tuple[Workspace, str]:
    write_package(root)
    (root / "app").mkdir()
    (root / "app" / "main.py").write_text(MAIN, encoding="utf-8")
    workspace = Workspace(index_executor=lambda: ThreadPoolExecutor(max_workers=1))
    workspace.index_folders([root.as_uri()])
    await asyncio.wait_for(workspace.indexer.idle.wait(), 20)
    uri = (root / "app" / "main.py").as_uri()
    workspace.open(uri, "python", 1, MAIN)
    return workspace, uri


@pytest.mark.parametrize(
    ("family", "marker"),
    [("qwen2.5-coder-repo", "<|file_sep|>app/main.py"), ("smollm2", "def main")],
)
async def test_the_cross_file_head_is_byte_identical_for_keystrokes_on_one_line(
    tmp_path: Path, family: str, marker: str
) -> None:
    workspace, uri = await indexed_workspace(tmp_path)
    template, counter = load_template(family), TokenCounter()
    limits = Limits(1024, 40, 10, snippets=True, snippet_deadline_ms=1000.0)
    heads = []
    typed = ""
    for version, text in enumerate(KEYSTROKES, start=2):
        workspace.change(
            uri,
            version,
            [Edit(text[len(typed) :], Position(5, 4 + len(typed)), Position(5, 4 + len(typed)))],
            "utf-16",
        )
        typed = text
        request = workspace.request(
            uri, Position(5, 4 + len(text)), "utf-16", automatic=True, options=CompletionSettings()
        )
        assert request is not None
        built = build_prompt(request.prompt, template, counter, limits)
        heads.append(built.prompt[: built.prompt.index(marker)])
    assert "def compute_total(items: list[int], tax: float = RATE) -> float: ..." in heads[0]
    assert "def format_report(total: float, currency: str) -> str: ..." in heads[0]
    assert all(head == heads[0] for head in heads)
    workspace.indexer.close()


async def test_without_a_workspace_folder_nothing_is_retrieved(tmp_path: Path) -> None:
    workspace = Workspace(index_executor=lambda: ThreadPoolExecutor(max_workers=1))
    workspace.open("file:///x/main.py", "python", 1, MAIN)
    request = workspace.request(
        "file:///x/main.py", Position(5, 4), "utf-16", automatic=True, options=CompletionSettings()
    )
    assert request is not None and request.prompt.repository is None


def test_an_api_too_long_is_cut_to_what_fits_and_repeats_are_left_out() -> None:
    api = "\n".join(f"def function_number_{i}(argument: int) -> int: ..." for i in range(40))
    items = [
        CrossFile("pkg/mod.py", api, "imported module"),
        CrossFile("pkg/x.py", "def f() -> None: ...", "definition"),
        CrossFile("pkg/x.py", "def f() -> None: ...", "definition"),
    ]
    counter = TokenCounter()
    chosen, used = charge(lambda deadline: items, [], 0, 120, counter, time.perf_counter() + 60)
    assert chosen[0].path == "pkg/mod.py" and 3 <= chosen[0].text.count("\n") + 1 < 40
    assert api.startswith(chosen[0].text)
    assert len(chosen) == 2 and used <= 120
