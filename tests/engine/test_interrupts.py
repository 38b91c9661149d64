"""Every command that starts engines stops them when it is interrupted: Ctrl-C (SIGINT) or
SIGTERM while its real vLLM engine starts leaves no engine process behind, and the command
exits soon, not after the engine's own half-minute of ignoring SIGTERM while it compiles.

Each case runs the real command line in a process of its own (SIGINT with Python's default
handler, as in a terminal), finds the engine it started (a child of it running vLLM's API
server), interrupts it once the engine compiles, and looks for the engine afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ENGINE_FOUND_S = 120.0
"""Longest wait for the command to start its engine (model preparation included)."""
PHASE = "waiting for the engine: compiling"
"""The interruption comes once the command says the engine compiles: vLLM then ignores
SIGTERM for half a minute, which is when a command that waits for it looks stuck."""
PHASE_WITHIN_S = 180.0
EXIT_WITHIN_S = 25.0
"""The command must be gone this soon after the signal (the engine's grace is 5 s)."""


def engines_of(parent: int) -> list[int]:
    """The vLLM API servers `parent` started (its direct children)."""
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
        if ppid == parent and b"vllm.entrypoints.openai.api_server" in command:
            found.append(int(entry.name))
    return found


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


def run_and_interrupt(argv: list[str], sig: signal.Signals, log: Path) -> tuple[int, list[int]]:
    """Start `copilot-lsp ARGV`, interrupt it with `sig` once its engine has started starting;
    returns its exit code and the engine pids it had."""
    with log.open("w") as output:
        command = subprocess.Popen(
            [sys.executable, "-m", "copilot_lsp", *argv],
            stdout=output,
            stderr=subprocess.STDOUT,
            # SIGINT as a terminal delivers it: not ignored, whatever this process inherited.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    engines: list[int] = []
    try:
        deadline = time.monotonic() + ENGINE_FOUND_S
        while not engines and time.monotonic() < deadline and command.poll() is None:
            time.sleep(0.5)
            engines = engines_of(command.pid)
        assert engines, f"the command started no engine:\n{log.read_text()[-2000:]}"
        deadline = time.monotonic() + PHASE_WITHIN_S
        while PHASE not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert PHASE in log.read_text(), f"no compile phase seen:\n{log.read_text()[-2000:]}"
        time.sleep(2.0)
        command.send_signal(sig)
        code = command.wait(timeout=EXIT_WITHIN_S)
    finally:
        if command.poll() is None:
            command.kill()
        for engine in engines:  # never leave one behind, whatever the test found
            if group_alive(engine):
                os.killpg(engine, signal.SIGKILL)
    return code, engines


def engines_gone(engines: list[int]) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not any(group_alive(engine) for engine in engines):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_bench_engine_interrupted_while_its_engine_starts(
    sig: signal.Signals, tmp_path: Path, command_log: Path
) -> None:
    argv = ["bench", "engine", "--profiles", "local-cpu-baseline", "--out", str(tmp_path / "o")]
    code, engines = run_and_interrupt(argv, sig, command_log)
    assert code == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM)
    assert engines_gone(engines), "the engine outlived the interrupted command"


def test_bench_replay_interrupted_while_its_engine_starts(
    tmp_path: Path, command_log: Path
) -> None:
    argv = [
        "bench", "replay", "--profiles", "local-cpu-baseline", "--kinds", "write",
        "--sessions", "1", "--repeats", "1", "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    code, engines = run_and_interrupt(argv, signal.SIGTERM, command_log)
    assert code == 128 + signal.SIGTERM
    assert engines_gone(engines), "the engine outlived the interrupted command"
