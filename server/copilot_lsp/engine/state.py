"""The state file that `copilot-lsp engine up` writes: which embedded engine runs where."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from copilot_lsp import paths


@dataclass(frozen=True, slots=True)
class EngineState:
    pid: int
    port: int
    url: str
    profile: str
    model: str
    log_path: str
    started_at: float
    samples_exactly: bool = True
    """False when the engine's sampled (temperature > 0) outputs are known to be wrong: vLLM's
    CPU build with speculative decoding (its rejection sampler's CPU kernels; greedy outputs
    are exact). The server then asks it for greedy suggestions only."""
    speculative_method: str | None = None
    """The profile's `[speculative] method`, "none" for plain decoding; None in a state file
    written before it was recorded."""
    health: dict[str, Any] | None = None
    """The profile's health rule (engine/health.py: signal, threshold, recovery), which the
    server judges this engine's speculation by; None for plain decoding."""


def state_path() -> Path:
    return paths.state_dir() / "engine.json"


def read_state(path: Path | None = None) -> EngineState | None:
    """The recorded engine, or None when none was started or the file is unreadable."""
    path = path or state_path()
    try:
        return EngineState(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_state(state: EngineState, path: Path | None = None) -> None:
    path = path or state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(state), indent=2), encoding="utf-8")
    os.replace(temporary, path)


def clear_state(path: Path | None = None) -> None:
    (path or state_path()).unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
