"""`engine up` / `engine down` around a stand-in engine process (a few lines of Python in
place of `vllm serve`): start, reuse, stop the whole process group, and each way a start
can fail. The real vLLM engine is started and stopped the same way in tests/engine.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_lsp.cli.main import main as cli_main
from copilot_lsp.engine.state import pid_alive, read_state
from copilot_lsp.errors import LauncherError
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import Profile
from tests.conftest import free_port

pytestmark = pytest.mark.timeout(60)

# Serves /health on the port it is given, and starts a child in its process group (as vLLM
# starts workers) whose pid it writes to a file: `engine down` must stop both.
HEALTHY = """
import http.server, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[2], "w").write(str(child.pid))
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""
CRASHING = "import sys; print('CUDA out of memory (scripted)'); sys.exit(3)"
SILENT = "import time; time.sleep(600)"
# As vLLM while it compiles: SIGTERM does nothing for longer than anyone waits.
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may linger here: PID 1 need not reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return pid_alive(pid)
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("COPILOT_LSP_STATE_DIR", str(tmp_path / "state"))
    yield tmp_path / "state"
    launcher.engine_down(5)  # whatever a failed test left running


def stand_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, script: str, startup_timeout_s: float = 60
) -> Profile:
    """A profile whose engine command runs `script` instead of vLLM."""
    path = tmp_path / "engine.py"
    path.write_text(script)
    child = tmp_path / "child.pid"

    def command(self: Profile, model_path: str, port: int | None = None, *_: object) -> list[str]:
        return [sys.executable, str(path), str(port), str(child)]

    monkeypatch.setattr(Profile, "command", command)
    return Profile.model_validate(
        {
            "name": "stand-in",
            "model": {"source": "/models/none", "served_name": "m"},
            "server": {"host": "127.0.0.1", "startup_timeout_s": startup_timeout_s},
        }
    )


def record_processes(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """The engine processes `engine up` starts from now on, in a list filled as it starts them."""
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recording(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        process = popen(*args, **kwargs)  # type: ignore[call-overload]
        started.append(process)
        return process

    monkeypatch.setattr(subprocess, "Popen", recording)
    return started


def test_engine_down_stops_the_engine_and_its_workers(
    state_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    profile = stand_in(monkeypatch, tmp_path, HEALTHY)
    port = free_port()
    state = launcher.engine_up(profile, port=port)
    assert read_state() == state and state.url == f"http://127.0.0.1:{port}/v1"
    assert launcher.health(f"http://127.0.0.1:{port}")
    worker = int((tmp_path / "child.pid").read_text())
    assert running(state.pid) and running(worker)
    # A second `engine up` for the same profile and port reuses the running engine.
    assert launcher.engine_up(profile, port=port) == state

    assert cli_main(["engine", "down"]) == 0
    assert f"stopped engine pid {state.pid}" in capsys.readouterr().err
    assert not running(state.pid)
    while running(worker):  # the group got SIGTERM with the engine; it is on its way out
        time.sleep(0.05)
    assert read_state() is None
    assert not launcher.health(f"http://127.0.0.1:{port}")
    assert cli_main(["engine", "down"]) == 0
    assert "no engine was running" in capsys.readouterr().err


def test_an_engine_started_in_a_state_folder_of_its_own_leaves_the_users_alone(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a benchmark does: its engine is recorded in the folder it passes, beside the one
    the user started, and `engine down` there stops only its own."""
    profile = stand_in(monkeypatch, tmp_path, HEALTHY)
    users = launcher.engine_up(profile, port=free_port())
    bench = tmp_path / "bench-state"
    own = launcher.engine_up(profile, port=free_port(), state_dir=bench)
    assert own.pid != users.pid  # not taken for the user's engine, nor refused because of it
    assert read_state(bench / "engine.json") == own and read_state() == users
    assert Path(own.log_path).parent == bench
    assert launcher.engine_down(state_dir=bench) == own
    assert not running(own.pid) and running(users.pid)
    assert read_state(bench / "engine.json") is None and read_state() == users


def test_an_engine_that_exits_while_starting_is_reported_with_its_log(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = stand_in(monkeypatch, tmp_path, CRASHING)
    with pytest.raises(LauncherError, match=r"exited with code 3 while starting") as raised:
        launcher.engine_up(profile, port=free_port())
    assert "CUDA out of memory (scripted)" in str(raised.value)  # the log's tail
    assert read_state() is None


def test_an_engine_that_never_becomes_healthy_is_stopped(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = stand_in(monkeypatch, tmp_path, SILENT, startup_timeout_s=1)
    started = record_processes(monkeypatch)
    with pytest.raises(LauncherError, match=r"did not become healthy within 1 s"):
        launcher.engine_up(profile, port=free_port())
    assert len(started) == 1
    assert started[0].wait(timeout=30) is not None  # stopped, not left running
    assert read_state() is None


def test_a_port_that_serves_another_engine_is_refused(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    other = subprocess.Popen([sys.executable, "-c", HEALTHY, str(port), str(tmp_path / "o")])
    try:
        while not launcher.health(f"http://127.0.0.1:{port}"):
            assert other.poll() is None, "the other engine did not start"
        profile = stand_in(monkeypatch, tmp_path, HEALTHY)
        with pytest.raises(LauncherError, match=rf"port {port} is already serving"):
            launcher.engine_up(profile, port=port)
        assert read_state() is None
    finally:
        other.kill()
        other.wait()
        child = tmp_path / "o"
        if child.exists():
            subprocess.run(["kill", child.read_text()], check=False)


def test_another_profiles_engine_must_be_stopped_first(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = stand_in(monkeypatch, tmp_path, HEALTHY)
    running = launcher.engine_up(profile, port=free_port())
    other = profile.model_copy(update={"name": "another"})
    with pytest.raises(LauncherError, match=r"already runs .* engine down"):
        launcher.engine_up(other, port=free_port())
    assert read_state() == running


def test_an_engine_interrupted_while_starting_is_stopped(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or SIGTERM, which the CLI turns into an exit through `finally`) while the engine
    starts: it runs in its own session, so `engine up` must stop it before giving up."""
    profile = stand_in(monkeypatch, tmp_path, SILENT)
    started = record_processes(monkeypatch)

    def interrupt_when_waiting(message: str) -> None:
        if message.startswith("waiting for the engine"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        launcher.engine_up(profile, port=free_port(), log=interrupt_when_waiting)
    assert len(started) == 1
    assert started[0].wait(timeout=30) is not None
    assert read_state() is None


def test_an_interrupted_start_kills_an_engine_that_ignores_sigterm(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted while starting, `engine up` gives the engine a short grace, then kills it:
    waiting the full grace of `engine down` is what made Ctrl-C look ignored."""
    profile = stand_in(monkeypatch, tmp_path, STUBBORN)
    started = record_processes(monkeypatch)

    def interrupt_when_waiting(message: str) -> None:
        if message.startswith("waiting for the engine"):
            raise KeyboardInterrupt

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        launcher.engine_up(profile, port=free_port(), log=interrupt_when_waiting)
    assert time.monotonic() - began < launcher.STOP_GRACE_S
    assert not running(started[0].pid)  # killed: it ignored SIGTERM
    assert read_state() is None


def test_an_interrupt_while_stopping_kills_at_once_and_is_raised(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second Ctrl-C (or a supervisor's SIGTERM) during `engine down`'s grace must not
    leave the engine behind: it is killed, then the interruption goes on."""
    profile = stand_in(
        monkeypatch,
        tmp_path,
        HEALTHY.replace(
            "import http.server",
            "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\nimport http.server",
        ),
    )
    state = launcher.engine_up(profile, port=free_port())
    sleep = time.sleep

    def interrupted(seconds: float) -> None:
        sleep(0.05)
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)  # the launcher waits with time.sleep
    with pytest.raises(KeyboardInterrupt):
        launcher.engine_down()
    monkeypatch.setattr(time, "sleep", sleep)
    deadline = time.monotonic() + 10
    while running(state.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(state.pid)
    assert read_state() is None


SIGTERM_DURING_A_COMMAND = """
import importlib, sys, time
from pathlib import Path
cli = importlib.import_module("copilot_lsp.cli.main")

def run(args):
    try:
        print("running", flush=True)
        time.sleep(60)
    finally:
        Path(sys.argv[1]).write_text("cleaned up")
    return 0

cli.COMMANDS["stats"].run = run
sys.exit(cli.main(["stats"]))
"""


def test_sigterm_ends_a_command_through_its_finally_blocks(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    process = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_DURING_A_COMMAND, str(marker)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "running\n"
    process.terminate()
    assert process.wait(timeout=30) == 128 + 15
    assert marker.read_text() == "cleaned up"
