"""Shared fixtures: keep every test's files out of the user's state, cache and config dirs.

Also: per-tier default timeouts (a hang fails fast, with a traceback) and a one-line count
per tier at the end of the run (`make test` prints them).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import trustme

from copilot_lsp.testing.fake_engine import FakeEngine

REPO = Path(__file__).resolve().parent.parent
"""The checkout's root: import it (`from tests.conftest import REPO`) rather than counting
`Path(__file__).parents`, which breaks when a test file moves."""
TESTS = REPO / "tests"
TIERS = ("unit", "lsp", "engine", "editors", "fuzz", "golden")
# Above pyproject's default (240 s): the engine tier starts real vLLM engines (minutes on two
# busy cores, counted in the first test that uses one), the editors tier real Neovim, the
# fuzz tier a few hundred hypothesis examples per test.
TIER_TIMEOUT_S = {"engine": 900, "editors": 300, "fuzz": 300}


def tier_of(path: Path) -> str:
    try:
        return path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return "other"


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM ends the run the way Ctrl-C does, through fixture teardown: the engines and
    routers the engine and cluster tiers start run in sessions of their own, and pytest's
    default (dying at once) left them running (tests/engine/test_interrupts.py)."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    ):
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        timeout = TIER_TIMEOUT_S.get(tier_of(item.path))
        if timeout is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(timeout))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts: dict[str, Counter[str]] = {}
    for outcome in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            if outcome != "error" and getattr(report, "when", "call") not in ("call", "setup"):
                continue
            path = Path(str(terminalreporter.config.rootpath), report.nodeid.split("::")[0])
            counts.setdefault(tier_of(path), Counter())[outcome] += 1
    if not counts:
        return
    terminalreporter.write_sep("-", "per tier")
    for tier in (*TIERS, *sorted(set(counts) - set(TIERS))):
        if tier in counts:
            parts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts[tier].items()))
            terminalreporter.write_line(f"tier {tier}: {parts}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (free when asked; bind it soon)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def repo_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Profiles and the rest of configs/ read from this checkout (COPILOT_LSP_CONFIGS), not
    from an installed copy. A module that loads the shipped profiles in every test says
    `pytestmark = pytest.mark.usefixtures("repo_configs")`."""
    monkeypatch.setenv("COPILOT_LSP_CONFIGS", str(REPO / "configs"))


@pytest.fixture
def isolated_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment for a server process whose state/config live under tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_LSP_")}
    env["COPILOT_LSP_STATE_DIR"] = str(tmp_path / "state")
    env["COPILOT_LSP_CONFIG_DIR"] = str(tmp_path / "config")
    env["COPILOT_LSP_SETTINGS_FILE"] = str(tmp_path / "config" / "absent.toml")
    yield env


@pytest.fixture
def isolated_process_env(
    isolated_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """`isolated_env` applied to this process, for the servers that code under test starts
    itself (benchmarks); undone after the test."""
    for key, value in isolated_env.items():
        monkeypatch.setenv(key, value)
    return isolated_env


async def until(
    condition: Callable[[], object],
    within: float = 5.0,
    what: str = "condition",
    every: float = 0.02,
) -> None:
    """Poll `condition` every `every` seconds until it holds; fail after `within` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {within} s")
        await asyncio.sleep(every)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    """A private certificate authority (what a team's engine behind https is signed by)."""
    return trustme.CA()


@pytest_asyncio.fixture
async def tls_engine(ca: trustme.CA) -> AsyncIterator[FakeEngine]:
    """The scripted engine over TLS, its certificate issued by `ca` for 127.0.0.1."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    engine = await FakeEngine().start(tls=context)
    try:
        yield engine
    finally:
        await engine.stop()
