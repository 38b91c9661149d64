"""Run the engine benchmark: each profile's engine in turn (or one already running), the
same cells on each, everything into one JSON document."""

from __future__ import annotations

import asyncio
import os
import platform
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import httpx
from tqdm import tqdm

from copilot_lsp.bench.engine.prompts import Prompt
from copilot_lsp.bench.engine.runner import Cell, Plan, run_profile_cells
from copilot_lsp.engine import launcher
from copilot_lsp.engine.profiles import Profile, load_profile


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


@contextmanager
def _own_state_dir() -> Iterator[None]:
    """Engines started here keep their state apart from the user's `engine up`."""
    previous = os.environ.get("COPILOT_LSP_STATE_DIR")
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-bench-") as state:
        os.environ["COPILOT_LSP_STATE_DIR"] = state
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("COPILOT_LSP_STATE_DIR", None)
            else:
                os.environ["COPILOT_LSP_STATE_DIR"] = previous


def _served_model(root: str) -> str:
    models = httpx.get(f"{root}/v1/models", timeout=10.0).json()
    return str(models["data"][0]["id"])


def run_benchmark(
    profile_names: Sequence[str],
    plan: Plan,
    prompts: Sequence[Prompt],
    *,
    endpoints: dict[str, str],
    port: int,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    cells = plan.cells(prompts)
    total_requests = sum(spec.requests for spec in cells)
    profiles_info: dict[str, Any] = {}
    results: list[Cell] = []
    started = time.time()
    for name in profile_names:
        info: dict[str, Any] = {"name": name}
        with tqdm(total=total_requests, desc=name, unit="req", leave=True) as bar:
            if name in endpoints:
                root = endpoints[name].removesuffix("/").removesuffix("/v1")
                model = _served_model(root)
                info["endpoint"] = root
                results += asyncio.run(
                    run_profile_cells(
                        root, model, name, cells, prompts, plan.max_tokens, lambda: bar.update()
                    )
                )
            else:
                profile = with_capacity(load_profile(name), max(plan.concurrency))
                info["speculative"] = profile.speculative_config()
                info["dtype"] = profile.model.dtype
                with _own_state_dir():
                    began = time.perf_counter()
                    state = launcher.engine_up(profile, port=port, log=log)
                    info["start_s"] = round(time.perf_counter() - began, 1)
                    try:
                        results += asyncio.run(
                            run_profile_cells(
                                state.url.removesuffix("/v1"),
                                profile.model.served_name,
                                name,
                                cells,
                                prompts,
                                plan.max_tokens,
                                lambda: bar.update(),
                            )
                        )
                    finally:
                        launcher.engine_down()
        profiles_info[name] = info
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
