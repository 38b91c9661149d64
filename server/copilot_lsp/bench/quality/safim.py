"""SAFIM tasks (Syntax-Aware Fill-in-the-Middle, Python subsets) and how they are scored."""

from __future__ import annotations

import ast
import difflib
import gzip
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOLE = "{{completion}}"
SUBSETS = {"block": "block_completion", "control": "control_completion", "api": "api_completion"}
DERIVED = {"holes": "block"}
"""Task sets made from a SAFIM subset (see `statement_holes`)."""


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


def find_data_dir(start: Path) -> Path | None:
    """`$COPILOT_LSP_SAFIM_DIR`, else `shared/eval/safim` beside the checkout (or a parent)."""
    override = os.environ.get("COPILOT_LSP_SAFIM_DIR")
    if override:
        return Path(override) if Path(override).is_dir() else None
    for folder in [start, *start.parents]:
        candidate = folder / "shared" / "eval" / "safim"
        if candidate.is_dir():
            return candidate
    return None


def load_tasks(data_dir: Path, subset: str, limit: int, seed: int = 0) -> list[Task]:
    """A seeded sample of `limit` Python tasks of one subset."""
    path = data_dir / f"{SUBSETS[subset]}.jsonl.gz"
    rows = [row for row in _rows(path) if row.get("lang") == "python"]
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


def _rows(path: Path) -> Iterator[dict[str, Any]]:
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
