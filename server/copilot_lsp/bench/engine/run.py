"""Run the engine benchmark: each profile's engine in turn (or one already running), the
same cells on each, everything into one JSON document."""

from __future__ import annotations

import asyncio
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from copilot_lsp.bench.engine.prompts import Prompt
from copilot_lsp.bench.engine.runner import Cell, Plan, run_profile_cells
from copilot_lsp.bench.harness import started_engine
from copilot_lsp.serving.profiles import Profile, load_profile, profile_labels


def with_capacity(profile: Profile, sequences: int) -> Profile:
    """The profile with room for `sequences` requests at once: a concurrency of 64 against
    an engine capped at 8 would measure the engine's queue, not its batching."""
    args = list(profile.server.args)
    if "--max-num-seqs" in args:
        at = args.index("--max-num-seqs") + 1
        args[at] = str(max(int(args[at]), sequences))
    most = profile.server.max_num_seqs
    server = profile.server.model_copy(
        update={"args": args, "max_num_seqs": None if most is None else max(most, sequences)}
    )
    return profile.model_copy(update={"server": server})


def _served_model(root: str) -> str:
    models = httpx.get(f"{root}/v1/models", timeout=10.0).json()
    return str(models["data"][0]["id"])


@contextmanager
def _engine(
    name: str,
    plan: Plan,
    info: dict[str, Any],
    endpoints: dict[str, str],
    port: int,
    dtype: str | None,
    log: Callable[[str], None],
    state_dir: Path,
) -> Iterator[tuple[str, str]]:
    """(root URL, served model) of profile `name`: its running endpoint, or an engine started
    for the block and stopped after it."""
    if name in endpoints:
        root = endpoints[name].removesuffix("/").removesuffix("/v1")
        info["endpoint"] = root
        yield root, _served_model(root)
        return
    profile = with_capacity(load_profile(name), max(plan.concurrency))
    if dtype is not None:
        profile = profile.with_embedded_dtype(dtype)
    info["speculative"] = profile.speculative_config()
    info["dtype"] = profile.model.dtype
    began = time.perf_counter()
    with started_engine(profile, state_dir=state_dir, port=port, log=log) as state:
        info.setdefault("start_s", []).append(round(time.perf_counter() - began, 1))
        yield state.url.removesuffix("/v1"), profile.model.served_name


def run_benchmark(
    profile_names: Sequence[str],
    plan: Plan,
    prompts: Sequence[Prompt],
    *,
    endpoints: dict[str, str],
    port: int,
    state_dir: Path,
    dtype: str | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every profile's cells, repeat by repeat; the engines started (for the profiles not in
    `endpoints`) record their state in `state_dir`."""
    cells = plan.cells(prompts)
    # Results, report and plots name a profile given as a TOML file by its name, not its path.
    labels = profile_labels(profile_names)
    profiles_info: dict[str, Any] = {labels[name]: {"name": labels[name]} for name in labels}
    results: list[Cell] = []
    started = time.time()
    # Repeat-major: every profile runs repeat 0, then every profile repeat 1, … A shared
    # machine's load drifts over minutes; this way the drift lands in the spread between
    # repeats instead of in the differences between profiles.
    with tqdm(total=sum(spec.requests for spec in cells) * len(labels), unit="req") as bar:
        for repeat in range(plan.repeats):
            todo = [spec for spec in cells if spec.repeat == repeat]
            for name, label in labels.items():
                bar.set_description(f"{label} (repeat {repeat + 1}/{plan.repeats})")
                info = profiles_info[label]
                with _engine(name, plan, info, endpoints, port, dtype, log, state_dir) as (
                    root,
                    model,
                ):
                    results += asyncio.run(
                        run_profile_cells(
                            root, model, label, todo, prompts, plan.max_tokens, bar.update
                        )
                    )
    return {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "plan": {**asdict(plan), "sets": list(plan.sets)},
        "profiles": profiles_info,
        "prompts": [{"set": p.set, "name": p.name, "chars": len(p.text)} for p in prompts],
        "cells": [cell.as_dict() for cell in results],
    }
