"""The training and held-out sets of a `draft train` run, and their batches.

Either from the corpus (split by file, tokenized, optionally continued by the target itself,
then the target's features extracted and cached: draft/features.py), or from an earlier run's
cached shards. A head that reads other target streams (`aux_layers`, EAGLE-3) gets them for the
same text, computed once into the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from copilot_lsp import paths
from copilot_lsp.draft import corpus, generate
from copilot_lsp.draft.features import Features, extract, load, load_tokens
from copilot_lsp.draft.objectives import Batch
from copilot_lsp.draft.options import TrainOptions
from copilot_lsp.draft.prompt_sequences import prompt_sequences
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError

HELDOUT_BATCH = 8
"""Sequences per held-out batch (the metrics do not depend on it)."""


def training_sets(
    options: TrainOptions,
    target: Target,
    fingerprint: str,
    log: Callable[[str], None],
    aux_layers: tuple[int, ...] = (),
) -> tuple[Features, Features, dict[str, Any]]:
    """(train set, held-out set, the report's `corpus` section)."""
    if options.extra_features and options.features is None:
        raise ConfigError("--extra-features adds to --features")
    cache = options.cache_dir or paths.cache_dir() / "draft-features"
    if options.features is not None:
        if options.generated_share:
            raise ConfigError("--generated-share needs the corpus, not cached --features")
        if not aux_layers:
            return _cached_features(options.features, options.extra_features, log)

        def streams(shards: list[Path], name: str) -> Features:
            # The text of the cached EAGLE features; the streams are computed once into `cache`.
            sequences = load_tokens(shards)
            return extract(
                target, fingerprint, sequences, cache, name=name, aux_layers=aux_layers, log=log
            )

        train_set, heldout_set, report = _cached_features(
            options.features, options.extra_features, log, streams
        )
        return train_set, heldout_set, report | {"aux_cache": str(cache)}
    if options.prompts is not None:
        return _from_prompts(options, target, fingerprint, cache, log, aux_layers)
    roots = corpus.resolve_roots(list(options.corpus))
    files = corpus.collect(roots)
    train_files = [f for f in files if f.split(options.heldout_percent) == "train"]
    heldout_files = [f for f in files if f.split(options.heldout_percent) == "heldout"]
    chunking = corpus.Chunking(seq_len=options.seq_len)
    train_seqs = [
        s
        for _, s in corpus.token_sequences(
            train_files, target.encode, chunking, options.skip_tokens + options.train_tokens
        )
    ][options.skip_tokens // options.seq_len :]
    heldout_seqs = [
        s
        for _, s in corpus.token_sequences(
            heldout_files, target.encode, chunking, options.heldout_tokens
        )
    ]
    log(
        f"corpus: {len(files)} unique files under {', '.join(map(str, roots))}; "
        f"{len(train_seqs)} train and {len(heldout_seqs)} held-out sequences of {options.seq_len}"
    )
    if options.generated_share:
        train_seqs, heldout_seqs = (
            generate.with_generated(
                target,
                fingerprint,
                seqs,
                share=options.generated_share,
                keep=options.generated_prompt,
                cache_dir=cache,
                name=name,
                log=log,
            )
            for seqs, name in ((train_seqs, "train"), (heldout_seqs, "heldout"))
        )
    train_set = extract(
        target, fingerprint, train_seqs, cache, name="train", aux_layers=aux_layers, log=log
    )
    heldout_set = extract(
        target, fingerprint, heldout_seqs, cache, name="heldout", aux_layers=aux_layers, log=log
    )
    report = {
        "roots": [str(r) for r in roots],
        "files": len(files),
        "train_files": len(train_files),
        "heldout_files": len(heldout_files),
        "train_tokens": len(train_seqs) * options.seq_len,
        "heldout_tokens": len(heldout_seqs) * options.seq_len,
        "generated_share": options.generated_share,
    }
    return train_set, heldout_set, report


def _from_prompts(
    options: TrainOptions,
    target: Target,
    fingerprint: str,
    cache: Path,
    log: Callable[[str], None],
    aux_layers: tuple[int, ...],
) -> tuple[Features, Features, dict[str, Any]]:
    assert options.prompts is not None
    sequences, counts = prompt_sequences(
        options.prompts,
        target.encode,
        keep=options.generated_prompt,
        seq_len=options.seq_len,
        limits={
            "train": options.train_tokens // options.seq_len,
            "heldout": options.heldout_tokens // options.seq_len,
        },
    )
    log(
        f"prompts from {options.prompts}: {counts['train_prompts']} train and "
        f"{counts['heldout_prompts']} held-out tails of {options.generated_prompt} tokens "
        f"({counts['prompts_too_short']} shorter prompts left out)"
    )
    continued = {
        name: generate.with_generated(
            target,
            fingerprint,
            sequences[name],
            share=1.0,
            keep=options.generated_prompt,
            cache_dir=cache,
            name=f"prompts-{name}",
            log=log,
        )
        for name in ("train", "heldout")
    }
    train_set, heldout_set = (
        extract(
            target, fingerprint, continued[name], cache, name=name, aux_layers=aux_layers, log=log
        )
        for name in ("train", "heldout")
    )
    report = {
        "prompts": str(options.prompts),
        **counts,
        "train_tokens": len(train_set) * options.seq_len,
        "heldout_tokens": len(heldout_set) * options.seq_len,
        "generated_share": 1.0,
        "generated_prompt": options.generated_prompt,
    }
    return train_set, heldout_set, report


def _cached_features(
    folder: Path,
    extra: tuple[Path, ...],
    log: Callable[[str], None],
    read: Callable[[list[Path], str], Features] = lambda shards, name: load(shards),
) -> tuple[Features, Features, dict[str, Any]]:
    """Train shards of `folder` and `extra`, held-out shards of `folder`, each split through
    `read` (default: the cached features themselves)."""
    sets = []
    for name, folders in (("train", (folder, *extra)), ("heldout", (folder,))):
        sets.append(read([shard for source in folders for shard in shards(source, name)], name))
    train_set, heldout_set = sets
    log(
        f"features from {', '.join(map(str, (folder, *extra)))}: {len(train_set)} train, "
        f"{len(heldout_set)} held-out sequences"
    )
    seq_len = int(train_set.tokens.shape[1])
    report = {
        "features": str(folder),
        "extra_features": [str(source) for source in extra],
        "train_tokens": len(train_set) * seq_len,
        "heldout_tokens": len(heldout_set) * seq_len,
    }
    return train_set, heldout_set, report


def shards(folder: Path, name: str) -> list[Path]:
    """The cached feature shards of split `name` in an earlier run's cache folder."""
    found = sorted((folder / name).glob("*.safetensors"))
    if not found:
        raise ConfigError(f"no cached {name} features in {folder / name}")
    return found


def batch(data: Features, index: torch.Tensor, device: torch.device) -> Batch:
    """Sequences `index` of `data` on `device`, features upcast to float32."""
    return Batch(
        data.tokens[index].to(device),
        data.hidden[index].to(device).float(),
        data.argmax[index].to(device),
    )


def heldout_batches(data: Features, device: torch.device) -> list[Batch]:
    """All of `data` in order, in batches of HELDOUT_BATCH sequences."""
    return [
        batch(data, torch.arange(i, min(i + HELDOUT_BATCH, len(data))), device)
        for i in range(0, len(data), HELDOUT_BATCH)
    ]
