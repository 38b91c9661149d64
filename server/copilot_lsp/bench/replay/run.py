"""Run the replay: every arm (engine profile x server settings) on the same sessions.

Repeat-major, like `bench engine`: repeat 0 of every arm, then repeat 1 of every arm, so the
drift of a shared machine lands in the spread between repeats rather than between arms.
Every arm in every repeat gets its own engine start (empty prefix cache, empty suffix tree),
also arms that differ only in server settings: a shared engine would serve the later arm from
a cache warmed by the same sessions. Each arm gets a fresh server process over stdio, its own
per-completion log and the engine's counters read before and after its sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.bench.harness import started_engine
from copilot_lsp.client.replay.editor import Pace, ScriptedEditor, on_schedule
from copilot_lsp.client.replay.schedule import TypingModel, draw
from copilot_lsp.client.replay.session import Session
from copilot_lsp.client.replay.wire import index_ready, server_stats, start_server
from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics, total
from copilot_lsp.errors import ConfigError
from copilot_lsp.serving.profiles import Profile, load_profile, profile_label
from copilot_lsp.telemetry.log import read_log
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

SCRIPTED = "scripted"
"""The in-process scripted engine instead of a profile (tests, smoke runs)."""
TODAY: dict[str, Any] = {"editor": {"streaming": True}}
"""What our VS Code and Neovim extensions send: the server's defaults plus streaming."""


@dataclass(frozen=True, slots=True)
class Arm:
    label: str
    profile: str
    """A profile name or TOML path, or `scripted`."""
    settings: dict[str, Any] = field(default_factory=dict)
    """initializationOptions on top of TODAY (camelCase, as an editor sends them)."""
    speculative: dict[str, Any] = field(default_factory=dict)
    """Changes to the profile's [speculative] table (a tuning sweep)."""
    checkout: str | None = None
    """Another checkout whose server runs this arm (the server before a change); None: this
    one's."""

    def resolved_profile(self) -> Profile:
        profile = load_profile(self.profile)
        if not self.speculative:
            return profile
        if profile.speculative is None:
            raise ConfigError(f"arm {self.label}: profile {self.profile} has no [speculative]")
        data = profile.model_dump()
        speculative = dict(data["speculative"])
        options = {**speculative.get("options", {}), **self.speculative.get("options", {})}
        speculative.update({k: v for k, v in self.speculative.items() if k != "options"})
        speculative["options"] = options
        data["speculative"] = speculative
        try:
            return Profile.model_validate(data)
        except ValueError as error:
            raise ConfigError(f"arm {self.label}: {error}") from None


@dataclass(frozen=True, slots=True)
class Plan:
    sessions: Sequence[Session]
    repeats: int = 2
    seed: int = 17
    typing: TypingModel = field(default_factory=TypingModel)
    pace: Pace = on_schedule
    """When each key comes (client/replay/editor.py): the drawn schedule; a test may pass one
    that waits for the server's answers instead."""
    workspace: bool = False
    """Copy the sessions' packages into the workspace, indexed before the sessions start, so
    that prompts carry code from the package's other files (`--workspace package`)."""


@dataclass(slots=True)
class _Engine:
    url: str
    root: str
    info: dict[str, Any]
    scripted: FakeEngine | None = None


def run_replay(
    arms: Sequence[Arm],
    plan: Plan,
    *,
    state_dir: Path,
    endpoints: dict[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every arm, every repeat; returns the JSON document `report` renders. The engines
    started record their state in `state_dir`."""
    if not arms:
        raise ConfigError("no arms to replay")
    labels = [arm.label for arm in arms]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"arm labels must differ: {labels}")
    started = time.time()
    runs: list[dict[str, Any]] = []
    engines: dict[str, Any] = {}
    for repeat in range(plan.repeats):
        for arm in arms:
            with _engine(arm, endpoints or {}, log, state_dir) as engine:
                engines.setdefault(arm.label, engine.info if engine else {})
                log(f"repeat {repeat + 1}/{plan.repeats}: {arm.label}")
                run = asyncio.run(_run_arm(arm, engine, plan))
                run["repeat"] = repeat
                runs.append(run)
    return {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "host": platform.node(),
        },
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "plan": {
            "repeats": plan.repeats,
            "seed": plan.seed,
            "typing": plan.typing.as_dict(),
            "workspace": "package" if plan.workspace else "none",
            "today_settings": TODAY,
        },
        "sessions": [session.summary() for session in plan.sessions],
        "arms": [
            {
                **asdict(arm),
                "profile": profile_label(arm.profile),
                # The commit, not the folder: a report names no path outside the repository.
                "checkout": _commit(arm.checkout) if arm.checkout else None,
                "engine": engines.get(arm.label, {}),
            }
            for arm in arms
        ],
        "reference": arms[0].label,
        "runs": runs,
    }


def _commit(checkout: str) -> str:
    """The checkout's commit (short hash), or its folder's name outside git."""
    try:
        found = subprocess.run(
            ["git", "-C", checkout, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return Path(checkout).name
    return found.stdout.strip()


@contextmanager
def _engine(
    arm: Arm, endpoints: dict[str, str], log: Callable[[str], None], state_dir: Path
) -> Iterator[_Engine | None]:
    """The arm's engine: None for the scripted one (started inside the arm's event loop), a
    running endpoint, or the profile's engine started here on a free port and stopped after."""
    if arm.profile == SCRIPTED:
        yield None
        return
    if arm.profile in endpoints:
        root = endpoints[arm.profile].rstrip("/").removesuffix("/v1")
        yield _Engine(f"{root}/v1", root, {"endpoint": root})
        return
    profile = arm.resolved_profile()
    info: dict[str, Any] = {
        "speculative": profile.speculative_config(),
        "dtype": profile.model.dtype,
    }
    began = time.perf_counter()
    with started_engine(profile, state_dir=state_dir, log=log) as state:
        info["start_s"] = round(time.perf_counter() - began, 1)
        yield _Engine(state.url, state.url.removesuffix("/v1"), info)


def scripted_engine() -> FakeEngine:
    """Answers every request with two short lines, 20 ms a chunk: enough to exercise ghost
    text, first lines, accepts and cancels without a model. It starts with a line break, as a
    model does when the prompt ends at a line end (the server holds the cursor's line start
    back from the prompt), so it fits a cursor at the start of a top-level line; mid-line
    its first line is empty and nothing is shown."""
    engine = FakeEngine()
    engine.models = [SCRIPTED]
    engine.keep_bodies = False
    engine.default = Reply(
        chunks=["\n", "value", " = ", "compute", "(x)", "\n", "print", "(value)", "\n"],
        first_delay_s=0.02,
        delay_s=0.02,
    )
    return engine


@contextlib.asynccontextmanager
async def _scripted_or(engine: _Engine | None) -> AsyncIterator[_Engine]:
    if engine is not None:
        yield engine
        return
    fake = await scripted_engine().start()
    try:
        yield _Engine(fake.url, fake.url.removesuffix("/v1"), {"scripted": True}, fake)
    finally:
        await fake.stop()


async def _run_arm(arm: Arm, engine: _Engine | None, plan: Plan) -> dict[str, Any]:
    async with _scripted_or(engine) as live:
        with tempfile.TemporaryDirectory(prefix="copilot-lsp-replay-arm-") as scratch:
            completions_log = Path(scratch) / "completions.jsonl"
            options = _merge(
                _merge({"engine": {"url": live.url}}, TODAY),
                _merge(arm.settings, {"telemetry": {"logPath": str(completions_log)}}),
            )
            checkout = Path(arm.checkout) if arm.checkout else None
            if plan.workspace:
                fill_workspace(Path(scratch) / "workspace", plan.sessions)
            connection = await start_server(Path(scratch), options, checkout)
            editor = ScriptedEditor(connection.client, Path(scratch) / "workspace")
            index: dict[str, Any] = {}
            warm_ups: dict[str, int] | None = None
            try:
                await editor.warm_up()
                if plan.workspace:
                    index = await index_ready(connection.client)
                warm = {str(c.get("id")) for c in read_log(completions_log)}
                before = await _scrape(live.root)
                began = time.perf_counter()
                for session in plan.sessions:
                    typing = draw(session.target, plan.seed, session.id, plan.typing)
                    await editor.replay(session, typing, plan.pace)
                await editor.drain()
                stats = await server_stats(connection.client)
                warm_ups = stats.get("engine", {}).get("prefix_warm_ups")
            finally:
                await connection.close()
            wall = time.perf_counter() - began
            after = await _scrape(live.root)
            completions = [c for c in read_log(completions_log) if c.get("id") not in warm]
        scripted_requests = len(live.scripted.requests) if live.scripted is not None else None
    return {
        "arm": arm.label,
        "wall_s": round(wall, 1),
        "records": [record.as_dict() for record in editor.records],
        "completions": [
            {
                key: c.get(key)
                for key in ("id", "outcome", "tokens", "mode", "ms", "displayed", "feedback")
            }
            for c in completions
        ],
        "typed_chars": editor.typed_chars,
        "accepted_chars": editor.accepted_chars,
        "engine": _engine_delta(before, after, scripted_requests),
        "index_files": index.get("files"),
        "prefix_warm_ups": warm_ups,
    }


def fill_workspace(root: Path, sessions: Sequence[Session]) -> None:
    """Each session's package, copied under `root` where the session's path says."""
    for session in sessions:
        if session.package is None:
            continue
        package = Path(session.package)
        target = root / package.name
        if not target.exists():
            shutil.copytree(package, target, ignore=shutil.ignore_patterns("__pycache__"))


async def _scrape(root: str) -> dict[str, Any] | None:
    try:
        async with httpx.AsyncClient(timeout=10.0) as http:
            answer = await http.get(f"{root}/metrics")
    except httpx.HTTPError:
        return None
    if answer.status_code != 200:
        return None
    samples = parse_metrics(answer.text)
    if not any(s.name == "vllm:generation_tokens_total" for s in samples):
        return None
    return {
        "generation_tokens": total(samples, "vllm:generation_tokens_total"),
        # Prefill: vLLM counts the prompt tokens it computed and, apart, those its prefix
        # cache held, both when a prefill completes. (`prefix_cache_hits` is counted at
        # admission, also for requests aborted before their prefill: more than was prefilled.)
        "prompt_tokens": total(samples, "vllm:prompt_tokens_total"),
        "prompt_tokens_cached": total(samples, _cached_metric(samples)),
        "spec": SpecDecodeCounters.from_samples(samples),
    }


def _cached_metric(samples: list[Any]) -> str:
    """vLLM 0.32's cached prompt tokens; older builds have only the admission-time hits."""
    if any(sample.name == "vllm:prompt_tokens_cached_total" for sample in samples):
        return "vllm:prompt_tokens_cached_total"
    return "vllm:prefix_cache_hits_total"


def _engine_delta(
    before: dict[str, Any] | None, after: dict[str, Any] | None, scripted_requests: int | None
) -> dict[str, Any]:
    if before is None or after is None:
        return {
            "generation_tokens": None,
            "prompt_tokens": None,
            "prompt_tokens_cached": None,
            "spec_decode": None,
            "requests": scripted_requests,
        }
    old, new = before["spec"], after["spec"]
    delta = SpecDecodeCounters(
        drafts=new.drafts - old.drafts,
        draft_tokens=new.draft_tokens - old.draft_tokens,
        accepted_tokens=new.accepted_tokens - old.accepted_tokens,
        accepted_per_position={
            k: v - old.accepted_per_position.get(k, 0.0)
            for k, v in new.accepted_per_position.items()
        },
    )
    return {
        "generation_tokens": int(after["generation_tokens"] - before["generation_tokens"]),
        "prompt_tokens": int(after["prompt_tokens"] - before["prompt_tokens"]),
        "prompt_tokens_cached": int(after["prompt_tokens_cached"] - before["prompt_tokens_cached"]),
        "spec_decode": delta.summary() if delta.drafts else None,
    }


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
