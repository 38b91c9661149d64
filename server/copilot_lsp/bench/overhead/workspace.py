"""`bench overhead --workspace`: the server's cost with its workspace index on, over a copy of a
real folder (the edited file inside it), measured once the index's first pass is done."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

from copilot_lsp.client.driver import EditorSession

SKIPPED = shutil.ignore_patterns(
    ".git", "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache", ".ruff_cache"
)
INDEX_WAIT_S = 600.0


def copy_workspace(source: Path, target: Path) -> Path:
    """A copy of `source`'s files under `target` (the rounds add files there; the original
    stays untouched)."""
    if not source.is_dir():
        raise NotADirectoryError(f"--workspace: not a folder: {source}")
    shutil.copytree(source, target, ignore=SKIPPED, symlinks=True)
    return target


async def wait_for_index(session: EditorSession) -> dict[str, Any]:
    """The index's figures from copilot/stats once its first pass is done."""
    deadline = time.monotonic() + INDEX_WAIT_S
    while True:
        index = (await session.stats()).get("index") or {}
        if index.get("first_pass_s") is not None:
            return dict(index)
        if time.monotonic() > deadline:
            raise TimeoutError(f"the workspace index's first pass took over {INDEX_WAIT_S:.0f} s")
        await asyncio.sleep(0.2)
