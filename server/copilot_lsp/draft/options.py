"""The options of `copilot-lsp draft train`, and the checks every head type shares.

A head type's own checks live in its recipe (draft/recipes/); both run before any work.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from copilot_lsp.draft.eagle import MAX_LAYERS
from copilot_lsp.errors import ConfigError

Method = Literal["eagle", "eagle3", "medusa"]


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
    prompts: Path | None = None
    """Train on the server's own prompts (`draft prompts` JSON lines) instead of the corpus:
    each sequence is a prompt's last `generated_prompt` tokens and the target's continuation
    (draft/prompt_sequences.py)."""

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
            ("prompts", None),
        ):
            if data[key] == default:  # older checkpoints did not know these: still resumable
                data.pop(key)
        return json.loads(json.dumps(data, default=str))  # type: ignore[no-any-return]


def check_options(options: TrainOptions) -> None:
    """Refuse options no head type can train with."""
    if options.draft_steps < 1 or options.draft_steps > 5:
        raise ConfigError("--draft-steps must be between 1 and 5 (vLLM caps drafts at 5 here)")
    if options.skip_tokens < 0 or options.skip_tokens % options.seq_len:
        raise ConfigError("--skip-tokens must be a non-negative multiple of --seq-len")
    if options.token_loss not in ("greedy", "distribution"):
        raise ConfigError("--token-loss is `greedy` or `distribution`")
    if not 1 <= options.layers <= MAX_LAYERS:
        raise ConfigError(f"--layers must be between 1 and {MAX_LAYERS}")
    if options.prompts is not None and options.features is not None:
        raise ConfigError("--prompts and --features are two sources of text: give one")
    if options.prompts is not None and options.generated_share not in (0.0, 1.0):
        raise ConfigError("with --prompts every sequence is continued by the target (share 1)")


def with_overrides(options: TrainOptions, **changes: Any) -> TrainOptions:
    return replace(options, **{k: v for k, v in changes.items() if v is not None})
