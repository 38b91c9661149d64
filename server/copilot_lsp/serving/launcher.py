"""Starts, stops and inspects the embedded vLLM engine for a profile.

The engine runs in its own session (process group) so that `engine down` can stop it and
every worker it spawned, and so that it outlives the `engine up` command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics, total
from copilot_lsp.engine.monitor import Scrape, window_between
from copilot_lsp.engine.state import (
    EngineState,
    clear_state,
    pid_alive,
    read_state,
    state_path,
    write_state,
)
from copilot_lsp.errors import LauncherError
from copilot_lsp.serving.drafts import install_draft
from copilot_lsp.serving.host import native_bfloat16, reserved_cores, this_cpu_flags, usable_cores
from copilot_lsp.serving.profiles import Profile, check_port
from copilot_lsp.serving.startup import Progress, StartupLog

_TCMALLOC = Path("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")
STOP_GRACE_S = 30.0
"""How long `engine down` lets the engine stop on its own before killing it."""
INTERRUPTED_GRACE_S = 5.0
"""The same when the command that started the engine is interrupted: the user wants out."""
KILL_WAIT_S = 5.0


def model_path_for(profile: Profile, log: Callable[[str], None]) -> str:
    """The folder or id vLLM loads; the embedded model is prepared first if needed."""
    dtype = profile.embedded_dtype
    if dtype is None:
        return profile.model.source
    from copilot_lsp.serving.prepare import prepare_embedded_model

    if dtype not in ("bfloat16", "float32"):
        raise LauncherError(f"profile {profile.name}: embedded models come in bfloat16 or float32")
    log(f"embedded model in {dtype} ({_precision_reason(dtype)})")
    return str(prepare_embedded_model(dtype, log=log))  # type: ignore[arg-type]


def _precision_reason(dtype: str) -> str:
    native = native_bfloat16(this_cpu_flags())
    if dtype == "float32" and not native:
        return "this CPU has no bfloat16 instructions: float32 prefills several times faster"
    if dtype == "bfloat16" and not native:
        return "as the profile asks, though this CPU has no bfloat16 instructions: slow prefill"
    return "as the profile asks"


def engine_environment(profile: Profile) -> dict[str, str]:
    env = dict(os.environ)
    env.update(profile.env)
    if profile.server.build == "cpu" and "VLLM_CPU_NUM_OF_RESERVED_CPU" not in env:
        reserved = reserved_cores(usable_cores())
        if reserved is not None:
            env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = reserved
    preload = [str(_TCMALLOC)] if _TCMALLOC.exists() else []
    iomp = Path(sys.prefix) / "lib" / "libiomp5.so"
    if iomp.exists():
        preload.append(str(iomp))
    if preload and "LD_PRELOAD" not in profile.env:
        env["LD_PRELOAD"] = ":".join([*preload, env.get("LD_PRELOAD", "")]).rstrip(":")
    return env


def samples_exactly(profile: Profile) -> bool:
    """Whether the profile's engine samples (temperature > 0) correctly. vLLM 0.32's CPU build
    does not with speculative decoding: measured here with EAGLE, suffix and n-gram, n=3 at
    temperature 0.4 gave word salad ("PreventionDictionarybrand solic stings…") where plain
    decoding gave code, and the same tokens at 0.4 and 1.0; greedy outputs match plain."""
    return not (profile.server.build == "cpu" and profile.speculative is not None)


def health(url_root: str, timeout: float = 2.0) -> bool:
    try:
        return httpx.get(f"{url_root}/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def state_file(state_dir: Path | None) -> Path:
    """The engine state file in `state_dir`; None: the user's (`$COPILOT_LSP_STATE_DIR` or the
    platform's state folder), the one the server and `engine status` read."""
    return state_path() if state_dir is None else state_dir / state_path().name


def engine_up(
    profile: Profile,
    *,
    port: int | None = None,
    log: Callable[[str], None] = lambda message: None,
    allow_draft_mismatch: bool = False,
    state_dir: Path | None = None,
) -> EngineState:
    """Start the profile's engine and wait until /health answers; reuse a healthy one.

    A draft trained for another target is refused (see serving/drafts.py) unless
    `allow_draft_mismatch`. The state file and the engine's log go to `state_dir` (None: the
    user's state folder): a benchmark or a test passes its own, so that its engines never
    meet the one the user started with `engine up`.
    """
    port = profile.server.port if port is None else check_port(port)  # 0 is not "default"
    root = f"http://{profile.server.host}:{port}"
    recorded = state_file(state_dir)
    current = read_state(recorded)
    if current is not None and pid_alive(current.pid) and health(_root(current.url)):
        if current.port == port and current.profile == profile.name:
            log(f"engine already running (pid {current.pid}) at {current.url}")
            return current
        raise LauncherError(
            f"an engine for profile {current.profile} already runs at {current.url} "
            f"(pid {current.pid}); stop it first with `copilot-lsp engine down`"
        )
    if health(root, timeout=1.0):
        raise LauncherError(f"port {port} is already serving another engine; use --port N")
    model_path = model_path_for(profile, log)
    draft_path = install_draft(profile, model_path, allow_mismatch=allow_draft_mismatch, log=log)
    log_path = recorded.parent / f"engine-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = profile.command(model_path, port, draft_path)
    log(f"starting vLLM ({profile.name}) on {root}; log: {log_path}")
    with log_path.open("w", encoding="utf-8") as output:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=engine_environment(profile),
            start_new_session=True,
        )
    state = EngineState(
        pid=process.pid,
        port=port,
        url=f"{root}/v1",
        profile=profile.name,
        model=profile.model.served_name,
        log_path=str(log_path),
        started_at=time.time(),
        samples_exactly=samples_exactly(profile),
        # What the server judges this engine's speculation by (engine/health.py).
        speculative_method=profile.speculative.method if profile.speculative else "none",
        health=profile.speculative.health_rule().as_dict() if profile.speculative else None,
    )
    write_state(state, recorded)
    try:
        healthy = wait_until_healthy(
            process, root, log_path, profile.server.startup_timeout_s, log, state=recorded
        )
    except BaseException:
        # Ctrl-C or SIGTERM while it starts: the engine runs in its own session and would
        # outlive this process, holding the port and the memory.
        try:
            _stop_group(process.pid, INTERRUPTED_GRACE_S)
        finally:
            clear_state(recorded)
        raise
    if healthy:
        return state
    _stop_group(process.pid)
    clear_state(recorded)
    raise LauncherError(
        f"the engine did not become healthy within {profile.server.startup_timeout_s:.0f} s:\n"
        + _tail(log_path)
    )


def wait_until_healthy(
    process: subprocess.Popen[Any] | Any,
    root: str,
    log_path: Path,
    timeout_s: float,
    log: Callable[[str], None],
    *,
    healthy: Callable[[str], bool] = lambda root: health(root, timeout=1.0),
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    state: Path | None = None,
) -> bool:
    """Poll /health until it answers (True) or `timeout_s` passes (False), saying the phase
    and the seconds waited every few seconds; LauncherError when the engine exits (its
    `state` file, None: the user's, is cleared then)."""
    progress = Progress(log, StartupLog(log_path), clock=clock)
    deadline = clock() + timeout_s
    while clock() < deadline:
        if process.poll() is not None:
            clear_state(state)
            raise LauncherError(
                f"the engine exited with code {process.returncode} while starting:\n"
                + _tail(log_path)
            )
        if healthy(root):
            return True
        progress.tick()
        sleep(0.5)
    return False


def engine_down(
    grace_s: float = STOP_GRACE_S, *, state_dir: Path | None = None
) -> EngineState | None:
    """Stop the engine recorded in `state_dir` (None: the user's), killing it after `grace_s`
    (at once if this is interrupted); returns what was stopped (None when nothing ran)."""
    recorded = state_file(state_dir)
    state = read_state(recorded)
    if state is None:
        return None
    try:
        if pid_alive(state.pid):
            _stop_group(state.pid, grace_s)
    finally:
        clear_state(recorded)
    return state


def engine_metrics(url: str, timeout: float = 2.0, window_s: float = 0.0) -> dict[str, Any]:
    """Running requests, generated tokens and speculative-decoding counters from the
    engine's /metrics (`url` is its OpenAI base URL); empty when it has none.

    With `window_s` > 0 the metrics are scraped twice that far apart, and `window` holds the
    acceptance of the drafts made in between (what the client's failover monitor computes).
    """
    root = _root(url)
    try:
        answer = httpx.get(f"{root}/metrics", timeout=timeout)
    except httpx.HTTPError:
        return {}
    if answer.status_code != 200:
        return {}
    samples = parse_metrics(answer.text)
    counters = SpecDecodeCounters.from_samples(samples)
    report: dict[str, Any] = {
        "requests_running": int(total(samples, "vllm:num_requests_running")),
        "generation_tokens": int(total(samples, "vllm:generation_tokens_total")),
        "spec_decode": counters.summary(),
    }
    if window_s > 0:
        report["window"] = _window(root, counters, window_s, timeout)
    return report


def _window(
    root: str, first: SpecDecodeCounters, window_s: float, timeout: float
) -> dict[str, object] | None:
    started = time.monotonic()
    time.sleep(window_s)
    try:
        samples = parse_metrics(httpx.get(f"{root}/metrics", timeout=timeout).text)
    except httpx.HTTPError:
        return None
    older = Scrape(started, first)
    newer = Scrape(time.monotonic(), SpecDecodeCounters.from_samples(samples))
    return window_between(older, newer).as_dict()


def _root(url: str) -> str:
    return url.rstrip("/").removesuffix("/v1")


def _stop_group(pid: int, grace_s: float = STOP_GRACE_S) -> None:
    """Stop the engine's process group: SIGTERM, SIGKILL after `grace_s`. It cannot be cut
    short: an interruption while it waits (a second Ctrl-C, a supervisor's SIGTERM after its
    own grace) kills the group at once and is then raised, so the engine never outlives the
    command that started it. vLLM may ignore SIGTERM for half a minute while it compiles."""
    try:
        if _signal_group(pid, signal.SIGTERM) and _gone_within(pid, grace_s):
            return
    except BaseException:
        _kill_group(pid)
        raise
    _kill_group(pid)


def _kill_group(pid: int) -> None:
    if _signal_group(pid, signal.SIGKILL):
        with contextlib.suppress(KeyboardInterrupt, SystemExit):  # it is dying: let it finish
            _gone_within(pid, KILL_WAIT_S)


def _signal_group(pid: int, sig: int) -> bool:
    """Send `sig` to the group; False when there is no such group any more."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    return True


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when we are its parent
        time.sleep(0.2)
    return not pid_alive(pid)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no engine log)"
