"""What a starting vLLM engine is doing, read from its log, for `engine up`'s progress lines.

vLLM takes from seconds (the embedded model on a free machine) to many minutes (a 32B model,
or a busy CPU) to answer /health; a silent wait that long looks like a hang. Each phase is
recognised by a line vLLM logs when it enters it; the latest one seen is the current phase.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

PROGRESS_EVERY_S = 5.0
"""Seconds between two progress lines while waiting for /health."""
PHASES = (
    ("Initializing a V1 LLM engine", "starting the engine core"),
    ("Starting to load model", "loading the weights"),
    ("Loading safetensors", "loading the weights"),
    ("Loading weights took", "loading the weights"),
    ("Loading drafter model", "loading the draft head"),
    ("KV cache", "allocating the KV cache"),
    ("init engine (profile, create kv cache, warmup model)", "warming up"),
    ("torch.compile", "compiling"),
    ("Capturing CUDA graph", "capturing CUDA graphs"),
    ("Supported tasks", "starting the HTTP server"),
    ("Starting vLLM API server", "starting the HTTP server"),
    ("Application startup complete", "starting the HTTP server"),
)
"""(a line vLLM logs, the phase it begins), in startup order."""
FIRST_PHASE = "starting vLLM"


class StartupLog:
    """Follows the engine's log; `phase()` reads only what was appended since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._rest = ""
        self._phase = FIRST_PHASE
        self._rank = -1

    def phase(self) -> str:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except OSError:
            return self._phase
        self._offset += len(chunk)
        lines = (self._rest + chunk.decode("utf-8", errors="replace")).split("\n")
        self._rest = lines.pop()  # an unfinished line: read again with the rest of it
        for line in lines:
            for rank, (marker, phase) in enumerate(PHASES):
                if rank > self._rank and marker in line:
                    self._rank, self._phase = rank, phase
        return self._phase


class Progress:
    """Says `phase, N s` through `log` at most every `every_s` seconds of waiting."""

    def __init__(
        self,
        log: Callable[[str], None],
        startup: StartupLog,
        *,
        every_s: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._startup = startup
        self._every_s = every_s
        self._clock = clock
        self._started = clock()
        self._next = self._started + every_s

    def tick(self) -> None:
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self._every_s
        elapsed = now - self._started
        self._log(
            f"waiting for the engine: {self._startup.phase()}, {elapsed:.0f} s "
            f"(log: {self._startup.path})"
        )
