"""`copilot-lsp draft train`: corpus -> target features -> EAGLE or Medusa head -> vLLM folder.

The loop is deterministic for a given seed (batch order comes from a per-epoch permutation),
checkpoints its whole state every `checkpoint_every` steps into OUT/.train/state.pt and resumes
from there when started again with the same options, so a long run on a laptop-class CPU can be
interrupted at any time.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import torch
from tqdm import tqdm

from copilot_lsp import paths
from copilot_lsp.draft import corpus, export, generate
from copilot_lsp.draft.eagle import MAX_LAYERS, EagleHead, EagleShape, exported_layers
from copilot_lsp.draft.eagle3 import Eagle3Head, default_aux_layers
from copilot_lsp.draft.features import Features, extract, load, load_tokens
from copilot_lsp.draft.fingerprint import target_fingerprint
from copilot_lsp.draft.medusa import MedusaHeads
from copilot_lsp.draft.objectives import (
    Acceptance,
    Batch,
    LossWeights,
    OutputLayer,
    eagle3_acceptance,
    eagle3_loss,
    eagle_acceptance,
    eagle_loss,
    frequent_labels,
    medusa_acceptance,
    medusa_loss,
)
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError

Method = Literal["eagle", "eagle3", "medusa"]
STATE = Path(".train") / "state.pt"
REPORT = "training.json"


@dataclass(frozen=True)
class TrainOptions:
    method: Method
    target: Path
    out: Path
    corpus: tuple[str, ...] = ("default",)
    """`default` (stdlib + site-packages), `stdlib`, `site-packages`, or folders."""
    seq_len: int = 256
    train_tokens: int = 400_000
    skip_tokens: int = 0
    """Training windows start after this many corpus tokens: fresh data for another run."""
    heldout_tokens: int = 32_768
    heldout_percent: int = 5
    steps: int = 2000
    batch_size: int = 8
    lr: float = 1e-3
    warmup: int = 100
    draft_steps: int = 3
    """EAGLE: draft steps unrolled in training (training-time test). Medusa: number of heads."""
    layers: int = 1
    """EAGLE: decoder layers of the head (vLLM runs any number; the paper's head has one)."""
    token_vocab: int = 8192
    """Token loss over the N most frequent greedy labels (0: the whole vocabulary). EAGLE-3:
    the draft vocabulary, which its own output layer covers."""
    feature_weight: float = 1.0
    token_weight: float = 0.2
    token_loss: Literal["greedy", "distribution"] = "greedy"
    """Token loss against the target's greedy token, or its whole next-token distribution."""
    step_decay: float = 0.8
    noise: float = 0.0
    seed: int = 0
    checkpoint_every: int = 100
    dtype: str = "bfloat16"
    threads: int | None = None
    device: str = "cpu"
    """`cuda` trains on a GPU (the target then loads in bfloat16; the head trains in float32)."""
    cache_dir: Path | None = None
    generated_share: float = 0.0
    """Share of the sequences whose text after `generated_prompt` tokens is replaced by the
    target's own greedy continuation (draft/generate.py); train and held-out alike."""
    generated_prompt: int = 64
    init: Path | None = None
    """Start from this exported EAGLE head (a folder `draft train` wrote) instead of random
    weights: fine-tuning a shipped head on new data."""
    features: Path | None = None
    """Train on the cached shards in FEATURES/train and FEATURES/heldout (an earlier run's
    --cache-dir) instead of reading the corpus: the same data for two methods even after the
    installed packages, and so the corpus, changed."""
    extra_features: tuple[Path, ...] = ()
    """More cached training shards (EXTRA/train) beside `features`' own; held-out stays
    `features`' own, so heads trained on more data are measured on the same text."""

    def resume_key(self) -> dict[str, Any]:
        """What must match for a checkpoint to be resumed (not `steps`: a run may be extended)."""
        data = asdict(self)
        for key in ("out", "steps", "checkpoint_every", "threads", "cache_dir", "dtype", "device"):
            data.pop(key)
        for key, default in (
            ("generated_share", 0.0),
            ("generated_prompt", 64),
            ("init", None),
            ("token_loss", "greedy"),
            ("skip_tokens", 0),
            ("extra_features", ()),
            ("layers", 1),
        ):
            if data[key] == default:  # older checkpoints did not know these: still resumable
                data.pop(key)
        return json.loads(json.dumps(data, default=str))  # type: ignore[no-any-return]


def run(options: TrainOptions, log: Callable[[str], None]) -> dict[str, Any]:
    """Train, evaluate on the held-out split and export; returns the report (also JSON)."""
    if options.draft_steps < 1 or options.draft_steps > 5:
        raise ConfigError("--draft-steps must be between 1 and 5 (vLLM caps drafts at 5 here)")
    if options.skip_tokens < 0 or options.skip_tokens % options.seq_len:
        raise ConfigError("--skip-tokens must be a non-negative multiple of --seq-len")
    if options.token_loss not in ("greedy", "distribution"):
        raise ConfigError("--token-loss is `greedy` or `distribution`")
    if not 1 <= options.layers <= MAX_LAYERS:
        raise ConfigError(f"--layers must be between 1 and {MAX_LAYERS}")
    if options.layers != 1 and options.method != "eagle":
        raise ConfigError(
            "--layers applies to EAGLE heads; vLLM's EAGLE-3 head has one layer and Medusa heads "
            "one block each"
        )
    if options.init is not None and options.method == "medusa":
        raise ConfigError("--init continues an EAGLE head; Medusa heads train from scratch")
    if options.method == "eagle3" and options.token_vocab <= 0:
        raise ConfigError("EAGLE-3 drafts over its own vocabulary: give --token-vocab N > 0")
    if options.method == "eagle3" and options.token_loss != "greedy":
        raise ConfigError("EAGLE-3 trains on the target's greedy tokens (--token-loss greedy)")
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
    aux_layers: tuple[int, ...] = ()
    if options.method == "eagle3":
        _check_eagle3(options, target.shape.vocab_size)
        aux_layers = default_aux_layers(int(target.shape.config["num_hidden_layers"]))
        log(f"EAGLE-3 reads the target's residual streams after layers {aux_layers}")
    train_set, heldout_set, corpus_report = _features(options, target, fingerprint, log, aux_layers)

    embed = target.embed.detach().float()
    if options.method == "eagle3":
        return _run_eagle3(
            options,
            target,
            fingerprint,
            embed,
            aux_layers,
            train_set,
            heldout_set,
            corpus_report,
            log,
        )
    vocab, coverage = (None, 1.0)
    if options.token_vocab:
        vocab, coverage = frequent_labels(train_set.argmax, options.token_vocab)
        log(f"token loss over {len(vocab)} labels covering {coverage:.1%} of greedy tokens")
        vocab = vocab.to(device)
    out = OutputLayer(target.lm_head.float(), vocab)
    weights = LossWeights(
        options.feature_weight,
        options.token_weight,
        options.step_decay,
        distribution=options.token_loss == "distribution",
    )
    model: torch.nn.Module
    if options.method == "eagle":
        model = EagleHead(EagleShape.of(target.shape, options.layers))
        if options.init is not None:
            grown = model.load_export(options.init)
            log(f"starting from the EAGLE head in {options.init}")
            if grown:
                log(f"layers {', '.join(map(str, grown))} added, starting as the identity")
    else:
        model = MedusaHeads(target.shape.hidden_size, options.draft_steps)
    model.to(device)

    def loss_of(batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        if isinstance(model, EagleHead):
            return eagle_loss(model, embed, out, batch, options.draft_steps, weights, options.noise)
        assert isinstance(model, MedusaHeads)
        return medusa_loss(model, out, batch, weights)

    seconds = _loop(options, model, train_set, loss_of, log)
    acceptance = _evaluate(options, model, embed, out, heldout_set)
    report = _report(options, fingerprint, corpus_report, coverage, seconds, acceptance)
    _export(options, model, target, fingerprint, report)
    (options.out / REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _check_eagle3(options: TrainOptions, vocab_size: int) -> None:
    if options.token_vocab >= vocab_size:
        raise ConfigError(
            f"EAGLE-3 drafts over a smaller vocabulary than the target's {vocab_size} tokens: "
            "give a smaller --token-vocab"
        )


def _run_eagle3(
    options: TrainOptions,
    target: Target,
    fingerprint: str,
    embed: torch.Tensor,
    aux_layers: tuple[int, ...],
    train_set: Features,
    heldout_set: Features,
    corpus_report: dict[str, Any],
    log: Callable[[str], None],
) -> dict[str, Any]:
    device = torch.device(options.device)
    shape = EagleShape.of(target.shape)
    if options.init is not None:
        model = Eagle3Head.from_export(shape, aux_layers, options.init)
        vocab = model.vocab
        coverage = float(torch.isin(train_set.argmax, vocab).float().mean())
        log(f"starting from the EAGLE-3 head in {options.init}")
    else:
        vocab, coverage = frequent_labels(train_set.argmax, options.token_vocab)
        model = Eagle3Head(shape, aux_layers, vocab)
        model.init_output(target.lm_head.detach().float())
    log(f"draft vocabulary of {len(vocab)} tokens covering {coverage:.1%} of greedy tokens")
    model.to(device)
    labels_index = model.draft_labels(target.shape.vocab_size)

    def loss_of(batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        return eagle3_loss(
            model, embed, labels_index, batch, options.draft_steps, options.step_decay
        )

    seconds = _loop(options, model, train_set, loss_of, log)
    acceptance = eagle3_acceptance(model, embed, _batches(heldout_set, device), options.draft_steps)
    report = _report(options, fingerprint, corpus_report, coverage, seconds, acceptance)
    report["aux_layers"] = list(aux_layers)
    _export(options, model, target, fingerprint, report)
    (options.out / REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


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


def _features(
    options: TrainOptions,
    target: Target,
    fingerprint: str,
    log: Callable[[str], None],
    aux_layers: tuple[int, ...] = (),
) -> tuple[Features, Features, dict[str, Any]]:
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
        sets.append(read([shard for source in folders for shard in _shards(source, name)], name))
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


def _shards(folder: Path, name: str) -> list[Path]:
    """The cached feature shards of split `name` in an earlier run's cache folder."""
    found = sorted((folder / name).glob("*.safetensors"))
    if not found:
        raise ConfigError(f"no cached {name} features in {folder / name}")
    return found


def _batch(data: Features, index: torch.Tensor, device: torch.device) -> Batch:
    return Batch(
        data.tokens[index].to(device),
        data.hidden[index].to(device).float(),
        data.argmax[index].to(device),
    )


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
    model: torch.nn.Module,
    data: Features,
    loss_of: Callable[[Batch], tuple[torch.Tensor, dict[str, float]]],
    log: Callable[[str], None],
) -> float:
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
        loss, parts = loss_of(_batch(data, index, torch.device(options.device)))
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


def evaluate_head(
    target_dir: Path, head: Path, features: Path, draft_steps: int = 3
) -> dict[str, Any]:
    """Held-out metrics of an exported EAGLE head on cached features (FEATURES/heldout):
    compare heads without serving them. The features must come from the same target."""
    data = load(_shards(features, "heldout"))
    target = Target(target_dir, threads=None, device="cpu", dtype=torch.float32)
    config = json.loads((head / "config.json").read_text(encoding="utf-8"))
    if config.get("architectures") == [export.EAGLE3_ARCHITECTURE]:
        return _evaluate_eagle3(target, head, config, data, draft_steps)
    model = EagleHead(EagleShape.of(target.shape, exported_layers(head)))
    model.load_export(head)
    options = TrainOptions(method="eagle", target=target_dir, out=head, draft_steps=draft_steps)
    out = OutputLayer(target.lm_head.float())
    acceptance = _evaluate(options, model, target.embed.detach().float(), out, data)
    return {"head": str(head), "heldout_tokens": int(data.tokens.numel()), **acceptance.as_dict()}


def _evaluate_eagle3(
    target: Target, head: Path, config: dict[str, Any], data: Features, draft_steps: int
) -> dict[str, Any]:
    aux_layers = tuple(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
    width = len(aux_layers) * target.shape.hidden_size
    if int(data.hidden.shape[-1]) != width:
        raise ConfigError(
            f"these held-out features are {data.hidden.shape[-1]} wide; an EAGLE-3 head reads "
            f"{width} (the --cache-dir of a `draft train --method eagle3` run)"
        )
    model = Eagle3Head.from_export(EagleShape.of(target.shape), aux_layers, head)
    batches = _batches(data, torch.device("cpu"))
    acceptance = eagle3_acceptance(model, target.embed.detach().float(), batches, draft_steps)
    return {"head": str(head), "heldout_tokens": int(data.tokens.numel()), **acceptance.as_dict()}


def _evaluate(
    options: TrainOptions,
    model: torch.nn.Module,
    embed: torch.Tensor,
    out: OutputLayer,
    data: Features,
) -> Acceptance:
    batches = _batches(data, torch.device(options.device))
    if isinstance(model, EagleHead):
        return eagle_acceptance(model, embed, out, batches, options.draft_steps)
    assert isinstance(model, MedusaHeads)
    return medusa_acceptance(model, out, batches)


def _batches(data: Features, device: torch.device) -> list[Batch]:
    return [
        _batch(data, torch.arange(i, min(i + 8, len(data))), device) for i in range(0, len(data), 8)
    ]


def _export(
    options: TrainOptions,
    model: torch.nn.Module,
    target: Target,
    fingerprint: str,
    report: dict[str, Any],
) -> None:
    sidecar = {"method": options.method, "training": report}
    if isinstance(model, EagleHead):
        config = export.eagle_config(
            target.shape.config, fingerprint, options.dtype, layers=model.shape.num_layers
        )
        export.write_draft(options.out, config, model.export_state(), sidecar)
        return
    if isinstance(model, Eagle3Head):
        config = export.eagle3_config(
            target.shape.config,
            fingerprint,
            options.dtype,
            aux_layers=model.aux_layers,
            draft_vocab=len(model.vocab),
        )
        export.write_draft(
            options.out, config, model.export_state(target.shape.vocab_size), sidecar
        )
        return
    assert isinstance(model, MedusaHeads)
    shape = target.shape
    config = export.medusa_config(
        shape.hidden_size, shape.vocab_size, options.draft_steps, fingerprint, options.dtype
    )
    heads = options.out / "heads"
    export.write_draft(
        heads, config, model.export_state(), sidecar, weights_name=export.MEDUSA_HEADS
    )
    export.assemble_medusa(heads, options.target, options.out)


def with_overrides(options: TrainOptions, **changes: Any) -> TrainOptions:
    return replace(options, **{k: v for k, v in changes.items() if v is not None})
