"""Every command that starts engines stops them when it is interrupted: Ctrl-C (SIGINT) or
SIGTERM while its real vLLM engine starts leaves no engine process behind, and the command
exits soon, not after the engine's own half-minute of ignoring SIGTERM while it compiles.

Each case runs the real command line in a process of its own (SIGINT with Python's default
handler, as in a terminal), finds the engines it started (children of it running vLLM's API
server), interrupts it, and looks for the engines afterwards. The commands interrupted once
their engine compiles (`bench engine`, `bench replay`, the cluster harness on Ctrl-C) check
the hard case, an engine that ignores SIGTERM then; the others are interrupted a few seconds
into the start (cheap: they share `bench/harness.started_engine` and the launcher's stop,
and check that each command's path goes through them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from copilot_lsp.serving.startup import StartupLog
from tests.conftest import REPO, free_port

ENGINE_FOUND_S = 120.0
"""Longest wait for the command to start its engine (model preparation included)."""
PHASE = "waiting for the engine: compiling"
"""The interruption comes once the command says the engine compiles: vLLM then ignores
SIGTERM for half a minute, which is when a command that waits for it looks stuck."""
PHASE_WITHIN_S = 180.0
EXIT_WITHIN_S = 25.0
"""The command must be gone this soon after the signal (the engine's grace is 5 s)."""


def children_of(parent: int, marker: bytes) -> list[int]:
    """The processes `parent` started (its direct children) whose command line has `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and marker in command:
            found.append(int(entry.name))
    return found


def engines_of(parent: int) -> list[int]:
    """The vLLM API servers `parent` started."""
    return children_of(parent, b"vllm.entrypoints.openai.api_server")


def group_alive(group: int) -> bool:
    """Any process left in the engine's process group (its workers included), zombies not."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


@pytest.fixture
def command_log(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "command.log"


def said_compiling(log: Path) -> Callable[[], bool]:
    """The command said its engine compiles: vLLM then ignores SIGTERM for half a minute,
    which is when a command that waits for it looks stuck."""
    return lambda: PHASE in log.read_text()


def soon() -> bool:
    """Interrupt a few seconds into the start (see `run_and_interrupt`)."""
    return True


def run_and_interrupt(
    argv: list[str],
    sig: signal.Signals,
    log: Path,
    *,
    ready: Callable[[], bool] | None = None,
    engines_wanted: int = 1,
    env: dict[str, str] | None = None,
) -> Interrupted:
    """Start `copilot-lsp ARGV` (or ARGV itself when it is a whole command line), interrupt
    it with `sig` once it has started `engines_wanted` engines and `ready` holds (default:
    the command said its engine compiles), 2 s later; what was left is read before this
    kills whatever the command left (so that no test leaves an engine behind either)."""
    ready = said_compiling(log) if ready is None else ready
    whole = argv[0] == sys.executable
    with log.open("w") as output:
        command = subprocess.Popen(
            argv if whole else [sys.executable, "-m", "copilot_lsp", *argv],
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
            # SIGINT as a terminal delivers it: not ignored, whatever this process inherited.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    engines: list[int] = []
    try:
        deadline = time.monotonic() + ENGINE_FOUND_S
        while len(engines) < engines_wanted and time.monotonic() < deadline:
            if command.poll() is not None:
                break
            time.sleep(0.5)
            engines = engines_of(command.pid)
        assert len(engines) >= engines_wanted, (
            f"the command started {len(engines)} engines:\n{log.read_text()[-2000:]}"
        )
        deadline = time.monotonic() + PHASE_WITHIN_S
        while not ready() and time.monotonic() < deadline and command.poll() is None:
            time.sleep(0.5)
        assert ready(), f"the start did not get there:\n{log.read_text()[-2000:]}"
        time.sleep(2.0)
        command.send_signal(sig)
        code = command.wait(timeout=EXIT_WITHIN_S)
        left = survivors(engines)
    finally:
        started = children_of(command.pid, b"vllm") if command.poll() is None else []
        if command.poll() is None:
            command.kill()
        for engine in {*engines, *started}:  # never leave one behind, whatever the test found
            if group_alive(engine):
                os.killpg(engine, signal.SIGKILL)
    return Interrupted(code, engines, left)


@dataclass(frozen=True)
class Interrupted:
    code: int
    """The command's exit status."""
    engines: list[int]
    """The engines it had started (process group leaders)."""
    left: list[int]
    """Those of `engines` with a process of their group still running 5 s after the command
    exited."""


def survivors(engines: list[int], within_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while any(group_alive(engine) for engine in engines) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [engine for engine in engines if group_alive(engine)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_bench_engine_interrupted_while_its_engine_starts(
    sig: signal.Signals, tmp_path: Path, command_log: Path
) -> None:
    argv = ["bench", "engine", "--profiles", "local-cpu-baseline", "--out", str(tmp_path / "o")]
    done = run_and_interrupt(argv, sig, command_log)
    assert done.code == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM)
    assert done.left == [], "the engine outlived the interrupted command"


def test_bench_replay_interrupted_while_its_engine_starts(
    tmp_path: Path, command_log: Path
) -> None:
    argv = [
        "bench", "replay", "--profiles", "local-cpu-baseline", "--kinds", "write",
        "--sessions", "1", "--repeats", "1", "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    done = run_and_interrupt(argv, signal.SIGTERM, command_log)
    assert done.code == 128 + signal.SIGTERM
    assert done.left == [], "the engine outlived the interrupted command"


def test_engine_up_interrupted_while_its_engine_starts(tmp_path: Path, command_log: Path) -> None:
    """`engine up` in a terminal, Ctrl-C before the engine answers: the engine it leaves
    running on purpose once healthy must not be left half-started."""
    env = {**os.environ, "COPILOT_LSP_STATE_DIR": str(tmp_path / "state")}
    argv = ["engine", "up", "--profile", "local-cpu-baseline", "--port", str(free_port())]
    done = run_and_interrupt(argv, signal.SIGINT, command_log, ready=soon, env=env)
    assert done.code == 130
    assert done.left == [], "the engine outlived the interrupted command"
    assert not (tmp_path / "state" / "engine.json").exists(), "a stopped engine is recorded"


def test_bench_nextedit_interrupted_while_its_engine_starts(
    tmp_path: Path, command_log: Path
) -> None:
    argv = [
        "bench", "nextedit", "--profile", "local-cpu-baseline", "--limit", "1",
        "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    done = run_and_interrupt(argv, signal.SIGTERM, command_log, ready=soon)
    assert done.code == 128 + signal.SIGTERM
    assert done.left == [], "the engine outlived the interrupted command"


def test_bench_crossfile_interrupted_while_its_engine_starts(
    tmp_path: Path, command_log: Path
) -> None:
    argv = [
        "bench", "crossfile", "--profile", "local-cpu-baseline", "--tasks", "1",
        "--arms", "naive", "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    done = run_and_interrupt(argv, signal.SIGINT, command_log, ready=soon)
    assert done.code == 130
    assert done.left == [], "the engine outlived the interrupted command"


def replica_compiles(logs: Path) -> Callable[[], bool]:
    """A replica of the cluster harness compiles (read from its vLLM log, as `engine up`
    reads its engine's)."""
    readers = [StartupLog(logs / f"replica-{name}-1.log") for name in ("a", "b")]
    return lambda: any(reader.phase() == "compiling" for reader in readers)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_cluster_harness_interrupted_while_its_engines_start(
    sig: signal.Signals, tmp_path: Path, command_log: Path
) -> None:
    """`make test-cluster` (pytest starting two engines, then vllm-router) interrupted while
    its engines start: Ctrl-C once an engine compiles (the stop must not wait out vLLM's
    half-minute of ignoring SIGTERM, per engine), SIGTERM a few seconds in (pytest's default
    is to die at once, leaving the engines it started in their own sessions)."""
    logs = tmp_path / "logs"
    env = {**os.environ, "COPILOT_LSP_CLUSTER_LOGS": str(logs)}
    env.pop("COPILOT_LSP_CLUSTER_REPORT", None)
    argv = [
        sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
        "-m", "cluster", "tests/cluster/test_router_cluster.py",
    ]  # fmt: skip
    ready = replica_compiles(logs) if sig == signal.SIGINT else soon
    done = run_and_interrupt(argv, sig, command_log, ready=ready, engines_wanted=2, env=env)
    assert done.left == [], "an engine outlived the interrupted cluster harness"
    assert done.code == pytest.ExitCode.INTERRUPTED, command_log.read_text()[-2000:]
