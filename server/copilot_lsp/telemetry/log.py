"""The per-completion JSON-lines log in the user's state dir."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from copilot_lsp import paths

logger = logging.getLogger(__name__)


def default_log_path() -> Path:
    return paths.state_dir() / "completions.jsonl"


class CompletionLog:
    """Appends one JSON object per line; a failing disk costs the log, never a completion."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._warned = False

    def append(self, record: dict[str, Any]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        except OSError as error:
            if not self._warned:
                logger.warning("cannot write the completion log %s: %s", self.path, error)
                self._warned = True


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    """Records of the log, later records for the same id merged over earlier ones."""
    if not path.exists():
        return
    merged: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "id" in record:
                merged.setdefault(record["id"], {}).update(record)
    yield from merged.values()
