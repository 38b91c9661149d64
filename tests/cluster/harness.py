"""Two embedded CPU engines behind the real vllm-router, as processes this test owns.

Every engine runs the `local-cpu` profile's command plus what the replicas of deploy/ run
behind a router (the scale-out endpoints cache-aware routing needs, the API key); the router
runs with the same policy and health settings as deploy/kubernetes (serving/vllm_router.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from copilot_lsp.engine.metrics import parse_metrics, total
from copilot_lsp.serving import launcher
from copilot_lsp.serving.drafts import install_draft
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.serving.vllm_router import ROUTER_FLAGS
from tests.conftest import free_port

API_KEY = "cluster-test-key"


def router_binary() -> str:
    """vllm-router from this virtualenv, else from PATH; a clear failure when it is missing."""
    beside = Path(sys.executable).parent / "vllm-router"
    found = str(beside) if beside.exists() else shutil.which("vllm-router")
    if found is None:
        raise AssertionError(
            "vllm-router is not installed: `make test-cluster` installs it "
            "(pip install 'vllm-router==0.1.17')"
        )
    return found


def wait_healthy(url: str, timeout_s: float, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{url} exited with {process.returncode}:\n{tail(log)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        time.sleep(0.5)
    raise AssertionError(f"{url} not healthy within {timeout_s:.0f} s:\n{tail(log)}")


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


STOP_GRACE_S = 5.0
"""Seconds the engines and the router get to exit on SIGTERM before SIGKILL: vLLM ignores
SIGTERM for half a minute while it compiles, and an interrupted run must not wait that out
(once per engine, as it did)."""


def stop_groups(processes: list[subprocess.Popen[bytes] | None], grace_s: float) -> None:
    """Stop the processes' groups (each started in a session of its own, workers included)
    together: SIGTERM to all, SIGKILL to every group after `grace_s`. An interruption while
    it waits (a second Ctrl-C, a SIGTERM) kills them all at once and is then raised, so none
    outlives the run (as serving/launcher.py stops an engine)."""
    running = [p for p in processes if p is not None and p.poll() is None]
    try:
        for process in running:
            signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        kill_groups(running)


def kill_groups(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGKILL each process's group (a leader that exited may leave workers in it)."""
    for process in processes:
        signal_group(process, signal.SIGKILL)
    for process in processes:
        with contextlib.suppress(KeyboardInterrupt, subprocess.TimeoutExpired):
            process.wait(timeout=30)  # dying: reap it, a second Ctrl-C does not stop that


def signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


@dataclass
class Replica:
    """One vLLM CPU engine on a fixed port (a restart comes back on the same URL)."""

    name: str
    logs: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    last_start_s: float = 0.0
    """Seconds the latest start took from spawn to /health."""
    spawned_at: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        profile = load_profile("local-cpu")
        model = launcher.model_path_for(profile, lambda message: None)
        draft = install_draft(profile, model)
        return [
            *profile.command(model, self.port, draft),
            "--enable-scale-out",
            "--api-key",
            API_KEY,
        ]

    def spawn(self) -> None:
        profile = load_profile("local-cpu")
        env = launcher.engine_environment(profile)
        env["VLLM_CPU_KVCACHE_SPACE"] = "1"  # GiB each: two engines share a busy host
        self.starts += 1
        self.spawned_at = time.monotonic()
        log = self.logs / f"{self.name}-{self.starts}.log"
        with log.open("wb") as output:
            self.process = subprocess.Popen(
                self.argv(),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def wait(self, timeout_s: float = 1200) -> None:
        assert self.process is not None
        log = self.logs / f"{self.name}-{self.starts}.log"
        wait_healthy(self.url, timeout_s, self.process, log)
        self.last_start_s = time.monotonic() - self.spawned_at

    def kill(self) -> None:
        """SIGKILL the whole engine, as a node failure would."""
        assert self.process is not None
        kill_groups([self.process])

    @property
    def alive(self) -> bool:
        """Its process runs (a killed replica is not read: tests/cluster/attribution.py)."""
        return self.process is not None and self.process.poll() is None

    def metric(self, name: str) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=5).text
        return total(parse_metrics(text), name)


@dataclass
class Router:
    workers: list[str]
    logs: Path
    port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        argv = [
            router_binary(),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--worker-urls",
            *self.workers,
            *ROUTER_FLAGS,
            "--api-key",
            API_KEY,
            "--prometheus-host",
            "127.0.0.1",
            "--prometheus-port",
            str(self.metrics_port),
        ]
        log = self.logs / "router.log"
        with log.open("wb") as output:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_healthy(self.url, 120, self.process, log)


@dataclass
class Cluster:
    replicas: list[Replica]
    router: Router
    startup_s: float
    """Seconds from spawning the engines to the router answering /health."""
