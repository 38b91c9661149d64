"""`copilot-lsp draft train`: corpus -> target features -> draft head -> vLLM folder.

What is particular to a head type (its options, the target streams it reads, building it, its
loss, acceptance and export) is its recipe's (draft/recipes/); this module is the run around
it. The loop is deterministic for a given seed (batch order comes from a per-epoch
permutation), checkpoints its whole state every `checkpoint_every` steps into
OUT/.train/state.pt and resumes from there when started again with the same options, so a long
run on a laptop-class CPU can be interrupted at any time.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from copilot_lsp.draft.datasets import batch, heldout_batches, shards, training_sets
from copilot_lsp.draft.features import Features, load
from copilot_lsp.draft.fingerprint import read_json, target_fingerprint
from copilot_lsp.draft.objectives import Acceptance
from copilot_lsp.draft.options import TrainOptions, check_options, with_overrides
from copilot_lsp.draft.recipes import DraftHead, recipe_for, recipe_for_export
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError

__all__ = ["REPORT", "STATE", "TrainOptions", "evaluate_head", "run", "with_overrides"]

STATE = Path(".train") / "state.pt"
REPORT = "training.json"


def run(options: TrainOptions, log: Callable[[str], None]) -> dict[str, Any]:
    """Train, evaluate on the held-out split and export; returns the report (also JSON)."""
    recipe = recipe_for(options.method)
    check_options(options)
    recipe.check(options)
    torch.manual_seed(options.seed)
    device = torch.device(options.device)
    target = Target(
        options.target,
        threads=options.threads,
        device=options.device,
        dtype=torch.float32 if device.type == "cpu" else torch.bfloat16,
    )
    fingerprint = target_fingerprint(options.target)
    log(f"target {options.target} fingerprint {fingerprint}")
    aux_layers = recipe.feature_layers(options, target, log)
    train_set, heldout_set, corpus_report = training_sets(
        options, target, fingerprint, log, aux_layers
    )
    head, coverage = recipe.build(options, target, train_set, log)
    seconds = _loop(options, head, train_set, log)
    heldout = heldout_batches(heldout_set, device)
    acceptance = head.acceptance(heldout)
    report = _report(options, fingerprint, corpus_report, coverage, seconds, acceptance)
    if options.prompts is not None:
        # The rounds a completion drafts: from the prompt's last token on.
        after = head.acceptance(heldout, start=options.generated_prompt - 1)
        report["heldout_after_prompt"] = after.as_dict()
    report |= head.report()
    sidecar = {"method": options.method, "training": report}
    head.export(options.out, target, fingerprint, options.dtype, sidecar)
    (options.out / REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def evaluate_head(
    target_dir: Path, head: Path, features: Path, draft_steps: int = 3, rounds_from: int = 0
) -> dict[str, Any]:
    """Held-out metrics of an exported head on cached features (FEATURES/heldout): compare
    heads without serving them. The features must come from the same target. `rounds_from`:
    count only draft rounds that start at that slot or later (on `--prompts` features,
    --generated-prompt - 1: what a completion drafts)."""
    config = read_json(head / "config.json")
    recipe = recipe_for_export(config)
    data = load(shards(features, "heldout"))
    target = Target(target_dir, threads=None, device="cpu", dtype=torch.float32)
    draft = recipe.load(head, config, target, data, draft_steps)
    acceptance = draft.acceptance(heldout_batches(data, torch.device("cpu")), start=rounds_from)
    return {
        "head": str(head),
        "heldout_tokens": int(data.tokens.numel()),
        "rounds_from": rounds_from,
        **acceptance.as_dict(),
    }


def _report(
    options: TrainOptions,
    fingerprint: str,
    corpus_report: dict[str, Any],
    coverage: float,
    seconds: float,
    acceptance: Acceptance,
) -> dict[str, Any]:
    return {
        "method": options.method,
        "target": str(options.target),
        "target_fingerprint": fingerprint,
        "options": options.resume_key() | {"steps": options.steps},
        "corpus": corpus_report,
        "token_vocab_coverage": round(coverage, 4),
        "train_seconds": round(seconds, 1),
        "heldout": acceptance.as_dict(),
    }


def _order(step: int, batch_size: int, size: int, seed: int) -> torch.Tensor:
    """Sequence indices of optimizer step `step`: epoch-wise permutations, seeded."""
    per_epoch = max(1, size // batch_size)
    epoch, slot = divmod(step, per_epoch)
    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    permutation = torch.randperm(size, generator=generator)
    return permutation[slot * batch_size : (slot + 1) * batch_size]


def _lr(options: TrainOptions, step: int) -> float:
    if step < options.warmup:
        return options.lr * (step + 1) / options.warmup
    progress = (step - options.warmup) / max(1, options.steps - options.warmup)
    return options.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def _loop(
    options: TrainOptions,
    head: DraftHead,
    data: Features,
    log: Callable[[str], None],
) -> float:
    model = head.model
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=options.lr, betas=(0.9, 0.95), weight_decay=0.0
    )
    state_path = options.out / STATE
    start, seconds = _resume(options, model, optimizer, state_path, log)
    bar = tqdm(total=options.steps, initial=start, desc=f"train {options.method}", unit="step")
    began = time.monotonic()
    model.train()
    for step in range(start, options.steps):
        for group in optimizer.param_groups:
            group["lr"] = _lr(options, step)
        index = _order(step, options.batch_size, len(data), options.seed)
        loss, parts = head.loss(batch(data, index, torch.device(options.device)))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        bar.update(1)
        bar.set_postfix({k: f"{v:.3f}" for k, v in list(parts.items())[:4]}, refresh=False)
        done = step + 1
        if done % options.checkpoint_every == 0 or done == options.steps:
            _save(state_path, options, model, optimizer, done, seconds + time.monotonic() - began)
    bar.close()
    model.eval()
    return seconds + time.monotonic() - began


def _resume(
    options: TrainOptions,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    path: Path,
    log: Callable[[str], None],
) -> tuple[int, float]:
    if not path.exists():
        return 0, 0.0
    state = torch.load(path, weights_only=False, map_location=options.device)
    if state["key"] != options.resume_key():
        raise ConfigError(
            f"{path} was written by a run with other options; use another --out, or delete it "
            "to start over"
        )
    try:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    except (RuntimeError, ValueError) as error:
        raise ConfigError(
            f"{path} holds a model of another layout (an older version of this project?); "
            "use another --out, or delete it to start over"
        ) from error
    log(f"resuming from step {state['step']} ({path})")
    return int(state["step"]), float(state["seconds"])


def _save(
    path: Path,
    options: TrainOptions,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    seconds: float,
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "key": options.resume_key(),
            "step": step,
            "seconds": seconds,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
        },
        tmp,
    )
    os.replace(tmp, path)
