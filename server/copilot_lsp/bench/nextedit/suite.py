"""The next-edit quality suite as stored: scenarios (a file, the user's recent edits as
didChange steps, the cursor, the expected buffer or none), read from and written to
data/scenarios.json.gz (bench/nextedit/scenarios.py builds them)."""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data") / "scenarios.json.gz"


@dataclass(frozen=True, slots=True)
class Step:
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    kind: str
    source: str
    """Where the file came from: `stdlib:MODULE:LINE` or `hand`."""
    before: str
    """The file as opened."""
    steps: tuple[Step, ...]
    """The user's recent edits, replayed as didChange steps."""
    cursor: int
    expected: str | None
    """The buffer after the right next edit; None when no edit is right."""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def wants_edit(self) -> bool:
        return self.expected is not None

    def current(self) -> str:
        """The buffer after the user's steps: what the next edit applies to."""
        return apply_steps(self.before, self.steps)

    def target(self) -> str:
        """The buffer a perfect suggester leaves: the expected one, or the current one."""
        return self.expected if self.expected is not None else self.current()


def apply_steps(text: str, steps: tuple[Step, ...] | list[Step]) -> str:
    for step in steps:
        text = text[: step.start] + step.text + text[step.end :]
    return text


def save(scenarios: list[Scenario], path: Path = DATA) -> None:
    data = {
        "built_by": "python -m copilot_lsp.bench.nextedit.scenarios",
        "python": sys.version.split()[0],
        "scenarios": [asdict(s) for s in scenarios],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=0, ensure_ascii=False) + "\n"
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))


def load(path: Path = DATA) -> list[Scenario]:
    data = json.loads(gzip.decompress(path.read_bytes()))
    return [
        Scenario(**{**item, "steps": tuple(Step(**step) for step in item["steps"])})
        for item in data["scenarios"]
    ]
