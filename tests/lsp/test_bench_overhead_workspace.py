"""`bench overhead --workspace`: the rounds run with the workspace index on and built."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.overhead.report import render
from copilot_lsp.bench.overhead.run import run_overhead

pytestmark = pytest.mark.timeout(120)


async def test_rounds_run_over_an_indexed_copy_of_the_workspace(
    tmp_path: Path, isolated_process_env: dict[str, str]
) -> None:
    source = tmp_path / "project"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "records.py").write_text("def sort_records(rows):\n    return rows\n")
    (source / "pkg" / "store.py").write_text("class Store:\n    def load(self): ...\n")
    work = tmp_path / "work"
    work.mkdir()
    report = await run_overhead(3, work, warmup=1, edits=["char"], workspace=source)
    index = report["workspace"]["index"]
    # The three files of the copy and the documents the rounds opened in it.
    assert index["files"] >= 3 and index["definitions"] >= 3, index
    assert report["servers"]["current"]["edits"]["char"]["round_trip_ms"]["n"] == 3
    assert sorted(p.name for p in source.rglob("*.py")) == ["__init__.py", "records.py", "store.py"]
    assert "workspace index on: " in render(report)
