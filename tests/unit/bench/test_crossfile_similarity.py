"""`bench crossfile --similarity`: Jaccard and BM25 rankings of similar code on the tasks."""

from __future__ import annotations

from pathlib import Path

from copilot_lsp.bench.crossfile import similarity
from copilot_lsp.bench.crossfile.tasks import find_tasks
from copilot_lsp.cli.main import build_parser
from tests.fakes.crossfile_package import write_package


def test_each_ranking_is_scored_on_every_task(tmp_path: Path) -> None:
    root = write_package(tmp_path)
    tasks = find_tasks(root, "pkg")
    result = similarity.compare(tasks, {"pkg": "dev"})
    rows = result["splits"]["dev"]
    assert list(rows) == list(similarity.SCORINGS)
    for row in rows.values():
        assert row["tasks"] == 3
        assert 0 <= row["hit"] <= row["named"] + row["hit"] and row["hit"] <= 3
    # The package's other modules share `value`, `client`… with app.py's lines: windows of
    # util.py and models.py come up for every task, models.py defining what they use.
    assert rows["bm25, top 3"]["hit"] >= 1 and rows["jaccard, top 3"]["windows"] >= 3
    for ranking in ("jaccard", "bm25"):  # a floor only ever leaves windows out
        assert rows[ranking]["windows"] <= rows[f"{ranking}, top 3"]["windows"]
        assert rows[ranking]["hit"] <= rows[f"{ranking}, top 3"]["hit"]
    table = similarity.table(result)
    assert "| dev | bm25 | 3 |" in table and "| dev | jaccard, top 3 | 3 |" in table


def test_the_flag_is_an_option_of_the_bench() -> None:
    args = build_parser().parse_args(["bench", "crossfile", "--similarity", "--out", "x"])
    assert args.similarity is True
