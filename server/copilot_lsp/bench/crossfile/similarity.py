"""`bench crossfile --similarity`: which ranking of similar code (context/repo_index.py
`similar`: Jaccard or BM25 over the windows' identifier sets) finds the code a task needs,
in process, no engine.

Each task's package folder is indexed as the server would (discovery's rules, the files'
summaries), and the windows of the other files are ranked against the 20 lines above the
cursor's line (retrieval's query). A ranking hits
when one of its SIMILAR windows (one per file) comes from a module that defines the API, and
names the API when one of them holds its name.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from copilot_lsp.bench.crossfile.tasks import Task
from copilot_lsp.context.file_summary import summarize_file, tokens
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.retrieval import JACCARD_FLOOR, MIN_SIMILARITY, SIMILAR, query_text
from copilot_lsp.context.workspace_files import Limits, discover, language_of

SCORINGS = ("jaccard", "bm25", "jaccard, top 3", "bm25, top 3")
"""Each ranking with its floor (Jaccard over JACCARD_FLOOR, as retrieval kept it; BM25 over
MIN_SIMILARITY, as retrieval keeps it); and each one's top SIMILAR whatever their scores, to
compare them window for window."""
FLOORS = {"jaccard": JACCARD_FLOOR, "bm25": MIN_SIMILARITY}


def index_package(root: Path) -> RepoIndex:
    """The package folder's index as discovery and the indexing process build it (file A's
    windows never count: it is excluded from every ranking, as retrieval excludes it)."""
    limits = Limits()
    index = RepoIndex()
    for relative in discover(root, limits):
        language = language_of(relative)
        summary = (
            summarize_file(root, relative, language, None, False, limits) if language else None
        )
        if summary is not None:
            index.put((root / relative).as_uri(), relative, summary)
    return index


def compare(tasks: list[Task], split_of: dict[str, str]) -> dict[str, Any]:
    """Per split and scoring (`SCORINGS`): tasks, hits, API named, windows kept."""
    started = time.time()
    totals: dict[str, dict[str, dict[str, int]]] = {}
    indexes: dict[str, RepoIndex] = {}
    for task in sorted(tasks, key=lambda task: task.package):
        if task.package not in indexes:
            indexes.clear()  # one package at a time: memory stays one index
            indexes[task.package] = index_package(task.root)
        index = indexes[task.package]
        uri = (task.root / task.path).as_uri()
        text, offset = task.editor_text()
        above = text[: text.rfind("\n", 0, offset) + 1]
        query = tokens(query_text(above))
        named = re.compile(rf"(?<!\w){re.escape(task.name)}(?!\w)")
        split = totals.setdefault(split_of.get(task.package, ""), {})
        for scoring in SCORINGS:
            ranking = scoring.split(",")[0]
            found = index.similar(query, exclude=(uri,), limit=SIMILAR, scoring=ranking)
            if scoring in FLOORS:
                found = [item for item in found if item.score >= FLOORS[scoring]]
            row = split.setdefault(scoring, {"tasks": 0, "hit": 0, "named": 0, "windows": 0})
            row["tasks"] += 1
            row["windows"] += len(found)
            row["hit"] += any(item.file.path in task.defining for item in found)
            row["named"] += any(named.search(item.text) for item in found)
    return {"duration_s": round(time.time() - started, 1), "splits": totals}


def table(result: dict[str, Any]) -> str:
    lines = [
        "| split | ranking | tasks | a window of the defining module | a window naming the API "
        "| windows per task |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for split, rows in result["splits"].items():
        for scoring, row in rows.items():
            n = row["tasks"] or 1
            lines.append(
                f"| {split} | {scoring} | {row['tasks']} | {row['hit'] / n:.3f} "
                f"| {row['named'] / n:.3f} | {row['windows'] / n:.2f} |"
            )
    return "\n".join(lines)
