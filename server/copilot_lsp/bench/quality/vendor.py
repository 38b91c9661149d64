"""Write the SAFIM tasks vendored in data/ from SAFIM's files as published:

    python -m copilot_lsp.bench.quality.vendor SAFIM_DIR [--out FILE]

SAFIM_DIR holds block_completion.jsonl.gz, control_completion.jsonl.gz and
api_completion.jsonl.gz (huggingface.co/datasets/gonglinyuan/safim). Kept: every Python task
of the three subsets, so a seeded sample and the statement holes made from the block subset
are the tasks the published files give; of each task the fields `bench quality` reads.
Dropped: the other languages, and the problem statements (`prompt`), which nothing here
reads. The same files give the same bytes (fixed order, no timestamp in the gzip header).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from copilot_lsp.bench.quality.safim import DATA, SUBSETS, VENDORED, python_rows

FIELDS = ("task_id", "eval_prompt", "ground_truth", "unit_tests")


def vendored_rows(source: Path) -> list[dict[str, Any]]:
    """The Python tasks of every subset in `source`, each with its subset and FIELDS."""
    rows = [
        {"subset": subset, **{name: row[name] for name in FIELDS}}
        for subset in SUBSETS
        for row in python_rows(source, subset)
    ]
    # The tasks of one program side by side (a problem's block and control tasks share its
    # code and unit tests): gzip then finds the repeats, 280 KB -> 180 KB.
    rows.sort(
        key=lambda row: (
            json.dumps(row["unit_tests"], sort_keys=True),
            row["eval_prompt"],
            row["subset"],
            row["task_id"],
        )
    )
    return rows


def write(rows: list[dict[str, Any]], out: Path) -> int:
    """Write `rows` as gzip-compressed JSON lines to `out`; returns the bytes written."""
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return len(data)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m copilot_lsp.bench.quality.vendor",
        description="Write the vendored SAFIM Python tasks from SAFIM's published files.",
    )
    parser.add_argument("source", type=Path, help="folder with SAFIM's *_completion.jsonl.gz")
    parser.add_argument("--out", type=Path, default=DATA / VENDORED)
    args = parser.parse_args(argv)
    rows = vendored_rows(args.source)
    size = write(rows, args.out)
    counts = {subset: sum(row["subset"] == subset for row in rows) for subset in SUBSETS}
    sys.stdout.write(f"{args.out}: {counts}, {size} bytes\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
