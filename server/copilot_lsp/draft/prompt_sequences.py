"""Training sequences from the server's own prompts (`copilot-lsp draft prompts`).

A draft head is asked, at serving time, to continue the target right after a completion
prompt: snippets as comments, the code before the cursor, cut wherever the user stopped
typing. Each sequence here is the last `keep` tokens of one such prompt, exactly as the
server sent it, followed by the target's own greedy continuation (draft/generate.py), so the
head learns the text it will be asked to draft, at the place it will be asked. Prompts of
the same place a few keystrokes apart share most of their tails: identical tails are kept
once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from copilot_lsp.draft.generate import chosen
from copilot_lsp.errors import ConfigError

SPLITS = ("train", "heldout")
PAD = 0
"""Stands for the continuation until the target writes it (every sequence is continued)."""


def prompt_sequences(
    path: Path,
    encode: Callable[[str], list[int]],
    *,
    keep: int,
    seq_len: int,
    limits: dict[str, int],
) -> tuple[dict[str, list[list[int]]], dict[str, int]]:
    """({split: sequences}, counts for the report). At most `limits[split]` sequences per
    split, spread evenly over the file's order (its sessions) when there are more."""
    if not 0 < keep < seq_len:
        raise ConfigError(f"--generated-prompt must lie between 1 and {seq_len - 1} tokens")
    tails: dict[str, dict[tuple[int, ...], None]] = {split: {} for split in SPLITS}
    short = 0
    for number, record in _records(path):
        split = record.get("split")
        prompt = record.get("prompt")
        if split not in SPLITS or not isinstance(prompt, str):
            raise ConfigError(
                f"{path}:{number}: each line needs `split` (train or heldout) and `prompt`"
            )
        tokens = encode(prompt)
        if len(tokens) < keep:
            short += 1
            continue
        tails[split][tuple(tokens[-keep:])] = None
    sequences: dict[str, list[list[int]]] = {}
    for split in SPLITS:
        unique = [list(tail) + [PAD] * (seq_len - keep) for tail in tails[split]]
        if len(unique) > limits[split]:
            unique = [unique[i] for i in chosen(len(unique), limits[split] / len(unique))]
        sequences[split] = unique
    if not sequences["train"] or not sequences["heldout"]:
        raise ConfigError(
            f"{path} gave {len(sequences['train'])} train and {len(sequences['heldout'])} "
            f"held-out prompts of at least {keep} tokens; record more sessions "
            "(`draft prompts`) or lower --generated-prompt"
        )
    counts = {
        "train_prompts": len(sequences["train"]),
        "heldout_prompts": len(sequences["heldout"]),
        "prompts_too_short": short,
    }
    return sequences, counts


def _records(path: Path) -> list[tuple[int, dict[str, object]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{number}: not JSON ({error})") from None
        if not isinstance(record, dict):
            raise ConfigError(f"{path}:{number}: not a JSON object")
        records.append((number, record))
    return records
