"""One real vLLM CPU engine (the embedded profile) for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from copilot_lsp.engine.metrics import parse_metrics, total
from copilot_lsp.engine.state import read_state
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import load_profile
from tests.conftest import free_port


@dataclass(frozen=True)
class RealEngine:
    url: str
    state_dir: Path
    pid: int

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def metric(self, name: str) -> float:
        return total(parse_metrics(httpx.get(f"{self.root}/metrics", timeout=5).text), name)


@pytest.fixture(scope="session")
def real_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealEngine]:
    """Starts the `local-cpu` profile on a free port; its state file stays out of the user's."""
    state_dir = tmp_path_factory.mktemp("engine-state")
    state = launcher.engine_up(
        load_profile("local-cpu"), port=free_port(), log=print, state_dir=state_dir
    )
    try:
        yield RealEngine(state.url, state_dir, state.pid)
    finally:
        stopped = launcher.engine_down(state_dir=state_dir)
    # `engine down` stopped the real engine: its state is gone and its port is closed.
    assert stopped is not None and stopped.pid == state.pid
    assert read_state(launcher.state_file(state_dir)) is None
    assert not launcher.health(state.url.removesuffix("/v1"), timeout=5)
