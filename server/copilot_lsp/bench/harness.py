"""What the benchmarks share: the engines they start for themselves.

A benchmark that starts engines (`bench engine`, `bench replay`, the greedy comparison) is
given a state folder by its command line (`state_folder`, one per run) and records every
engine it starts there, never in the user's: the engine the user started with `engine up`,
and the server their editor runs against it, are neither seen nor stopped by a benchmark.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from copilot_lsp.engine.state import EngineState
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import Profile


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
    finally:
        launcher.engine_down(state_dir=state_dir)
