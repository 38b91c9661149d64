"""SAFIM tasks (Syntax-Aware Fill-in-the-Middle, Python subsets) and how they are scored.

The tasks are read from the package (data/, see its README: the Python tasks of the three
subsets, vendored) unless a folder with SAFIM's files as published is given: both give the
same tasks for the same subset, limit and seed.
"""

from __future__ import annotations

import ast
import difflib
import gzip
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_lsp import paths
from copilot_lsp.errors import CopilotLspError

HOLE = "{{completion}}"
SUBSETS = {"block": "block_completion", "control": "control_completion", "api": "api_completion"}
"""Subset -> the name of SAFIM's file for it (`NAME.jsonl.gz`)."""
DERIVED = {"holes": "block"}
"""Task sets made from a SAFIM subset (see `statement_holes`)."""
DATA = paths.evaluation_data()
"""The vendored tasks' folder: the default data."""
VENDORED = "safim-python.jsonl.gz"
"""The vendored file in DATA: every Python task of SUBSETS, one JSON object a line with its
`subset` (written by vendor.py)."""


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    subset: str
    before: str
    after: str
    ground_truth: str
    tests: list[dict[str, Any]]

    @property
    def text(self) -> str:
        return self.before + self.after


def python_rows(data_dir: Path, subset: str) -> list[dict[str, Any]]:
    """The Python tasks of `subset` in `data_dir`: the vendored file when it holds one,
    else SAFIM's file for the subset as published (all languages, filtered here)."""
    vendored = data_dir / VENDORED
    if vendored.is_file():
        return [row for row in read_rows(vendored) if row["subset"] == subset]
    published = data_dir / f"{SUBSETS[subset]}.jsonl.gz"
    if not published.is_file():
        raise CopilotLspError(
            f"no SAFIM tasks in {data_dir}: neither {VENDORED} nor {published.name}"
        )
    return [row for row in read_rows(published) if row.get("lang") == "python"]


def load_tasks(data_dir: Path, subset: str, limit: int, seed: int = 0) -> list[Task]:
    """A seeded sample of `limit` Python tasks of one subset."""
    rows = python_rows(data_dir, subset)
    # Sorted first: the sample depends on the seed alone, not on the order of the file.
    rows.sort(key=lambda row: row["task_id"])
    sample = random.Random(seed).sample(rows, min(limit, len(rows)))
    tasks = []
    for row in sample:
        before, _, after = row["eval_prompt"].partition(HOLE)
        tasks.append(
            Task(row["task_id"], subset, before, after, row["ground_truth"], row["unit_tests"])
        )
    return tasks


def statement_holes(data_dir: Path, limit: int, seed: int = 0) -> list[Task]:
    """One statement cut out between existing statements: the block tasks whose body's first
    line is a simple statement with the next statement right below it at the same
    indentation, filled in and that first line removed (its unit tests still apply)."""
    holes = []
    for task in load_tasks(data_dir, "block", 100_000, seed):
        body = task.ground_truth.split("\n")
        if len(body) < 2 or not body[0].strip() or not body[1].strip():
            continue
        indent = task.before[task.before.rfind("\n") + 1 :]
        if indent.strip() or body[1][: len(body[1]) - len(body[1].lstrip())] != indent:
            continue  # the hole's line is not blank, or the next line sits elsewhere
        eol = "\r" if body[0].endswith("\r") else ""
        after = eol + "\n" + "\n".join(body[1:]) + task.after
        truth = body[0].rstrip("\r")
        holes.append(Task(f"{task.task_id}/hole", "holes", task.before, after, truth, task.tests))
    holes.sort(key=lambda task: task.task_id)
    return random.Random(seed).sample(holes, min(limit, len(holes)))


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def edit_similarity(completion: str, truth: str) -> float:
    """1.0 for identical text (whitespace runs collapsed), down to 0.0."""
    a, b = " ".join(completion.split()), " ".join(truth.split())
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b).ratio()


def exact_match(completion: str, truth: str) -> bool:
    """Equal after whitespace normalisation, or as Python expressions/statements (AST)."""
    if " ".join(completion.split()) == " ".join(truth.split()):
        return True
    try:
        return ast.dump(ast.parse(completion.strip())) == ast.dump(ast.parse(truth.strip()))
    except SyntaxError:
        return False
