"""What the benchmarks share: the engines they start for themselves, and their raw results.

A benchmark that starts engines (`bench engine`, `bench replay`, the greedy comparison) is
given a state folder by its command line (`state_folder`, one per run) and records every
engine it starts there, never in the user's: the engine the user started with `engine up`,
and the server their editor runs against it, are neither seen nor stopped by a benchmark.

The benchmarks that write a report folder keep every request of the run in it as well, the
raw results the report is drawn from (`--report-only` draws it again). They run to megabytes
of repetitive JSON, so they are written gzip-compressed (about a tenth of the size);
`load_results` also reads the plain `results.json` of runs saved before.
"""

from __future__ import annotations

import gzip
import json
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from copilot_lsp.engine.state import EngineState
from copilot_lsp.errors import CopilotLspError
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import Profile

RESULTS = "results.json.gz"
"""The raw results in a report folder."""
PLAIN_RESULTS = "results.json"
"""What runs before the compression wrote; read when RESULTS is absent."""


@contextmanager
def state_folder(prefix: str = "copilot-lsp-bench-") -> Iterator[Path]:
    """An empty state folder for the engines of one run, removed after it."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield Path(folder)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def started_engine(
    profile: Profile,
    *,
    state_dir: Path,
    port: int | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> Iterator[EngineState]:
    """The profile's engine, started on `port` (None: a free one) for the block and stopped
    after it, also when the block fails."""
    state = launcher.engine_up(
        profile, port=free_port() if port is None else port, log=log, state_dir=state_dir
    )
    try:
        yield state
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM) or failed: stop it without the long grace.
        launcher.engine_down(launcher.INTERRUPTED_GRACE_S, state_dir=state_dir)
        raise
    launcher.engine_down(state_dir=state_dir)


def save_results(folder: Path, data: dict[str, Any]) -> Path:
    """Write the run's raw results into `folder` (created if missing); returns the file.

    The same data give the same bytes (no timestamp in the gzip header), so regenerating a
    committed report does not change the file; a plain copy left by an older run is removed,
    as it would no longer match the report."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RESULTS
    text = json.dumps(data, separators=(",", ":")) + "\n"
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    (folder / PLAIN_RESULTS).unlink(missing_ok=True)
    return path


def measured_or_reloaded(
    folder: Path, report_only: bool, measure: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """A report folder's raw results: reloaded from `folder` (`--report-only`), else measured
    now and saved there."""
    if report_only:
        return load_results(folder)
    data = measure()
    save_results(folder, data)
    return data


def load_results(folder: Path) -> dict[str, Any]:
    """The raw results saved in `folder`: RESULTS, else the PLAIN_RESULTS of an older run."""
    path = folder / RESULTS
    if not path.exists() and (folder / PLAIN_RESULTS).exists():
        path = folder / PLAIN_RESULTS
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if path.suffix == ".gz" else raw
        data = json.loads(text)
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, ValueError) as error:
        raise CopilotLspError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict):
        raise CopilotLspError(f"cannot read {path}: not a benchmark's results")
    return data
