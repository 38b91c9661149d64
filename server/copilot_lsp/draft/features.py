"""Target features on the corpus, computed once and cached on disk in shards.

A shard holds `tokens` [n, T] int32, `hidden` [n, T, H] float16 (post-norm last hidden state of
the target) and `argmax` [n, T] int32 (the target's greedy next token at each position: the label
a greedy-verified draft must hit). Shards are written one by one and atomically, so an
interrupted extraction resumes where it stopped. A shard is named after the hash of the target
fingerprint and its own token sequences, so a different target or corpus never reuses stale
features, while a run over a prefix of an earlier corpus (fewer --train-tokens) reuses its shards.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError


@dataclass(frozen=True)
class Features:
    tokens: torch.Tensor
    """[N, T] int64"""
    hidden: torch.Tensor
    """[N, T, H] float16 (upcast per batch for training)"""
    argmax: torch.Tensor
    """[N, T] int64"""

    def __len__(self) -> int:
        return int(self.tokens.shape[0])


def sequences_key(fingerprint: str, sequences: Sequence[Sequence[int]]) -> str:
    digest = hashlib.sha256(fingerprint.encode())
    for sequence in sequences:
        digest.update(torch.tensor(list(sequence), dtype=torch.int32).numpy().tobytes())
    return digest.hexdigest()[:20]


def extract(
    target: Target,
    fingerprint: str,
    sequences: Sequence[Sequence[int]],
    cache_dir: Path,
    *,
    name: str,
    shard_size: int = 64,
    batch_size: int = 8,
    aux_layers: tuple[int, ...] = (),
    log: Callable[[str], None] = lambda message: None,
) -> Features:
    """Features for `sequences` (all the same length), from the cache where present.

    With `aux_layers` (EAGLE-3) `hidden` holds the target's residual streams after those layers,
    concatenated, instead of its last hidden state; such shards are keyed apart."""
    if not sequences:
        raise ConfigError(
            f"the corpus gave no {name} sequences; give it more files or shorter --seq-len"
        )
    folder = cache_dir / name
    key = fingerprint if not aux_layers else f"{fingerprint}/aux:{','.join(map(str, aux_layers))}"
    folder.mkdir(parents=True, exist_ok=True)
    shards = [
        (
            start,
            folder / f"{sequences_key(key, sequences[start : start + shard_size])}.safetensors",
        )
        for start in range(0, len(sequences), shard_size)
    ]
    pending = [(start, path) for start, path in shards if not path.exists()]
    if pending:
        log(f"{name}: target features for {len(pending) * shard_size} sequences into {folder}")
    bar = tqdm(total=len(pending) * shard_size, desc=f"features {name}", unit="seq", leave=False)
    for start, path in pending:
        chunk = torch.tensor([list(s) for s in sequences[start : start + shard_size]])
        hidden_parts, argmax_parts = [], []
        for offset in range(0, len(chunk), batch_size):
            batch = chunk[offset : offset + batch_size]
            hidden, argmax = (
                target.aux_features(batch, aux_layers) if aux_layers else target.features(batch)
            )
            hidden_parts.append(hidden.to(torch.float16))
            argmax_parts.append(argmax.to(torch.int32))
            bar.update(len(hidden))
        tmp = path.with_suffix(".tmp")
        save_file(
            {
                "tokens": chunk.to(torch.int32),
                "hidden": torch.cat(hidden_parts),
                "argmax": torch.cat(argmax_parts),
            },
            str(tmp),
        )
        os.replace(tmp, path)
    bar.close()
    return load([path for _, path in shards])


def load_tokens(paths: Sequence[Path]) -> list[list[int]]:
    """The token sequences of cached shards, without reading their features."""
    from safetensors import safe_open

    sequences: list[list[int]] = []
    for path in paths:
        with safe_open(str(path), framework="pt") as handle:
            sequences.extend(handle.get_tensor("tokens").tolist())
    return sequences


def load(paths: Sequence[Path]) -> Features:
    parts = [load_file(str(path)) for path in paths]
    return Features(
        tokens=torch.cat([p["tokens"] for p in parts]).long(),
        hidden=torch.cat([p["hidden"] for p in parts]),
        argmax=torch.cat([p["argmax"] for p in parts]).long(),
    )
