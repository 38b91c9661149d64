"""Training text written by the target itself (self-distillation).

At serving time a draft head reads the target's hidden states over the target's own output,
and this embedded target writes code far more repetitive than the human code of the corpus.
A share of the training sequences therefore keeps its first `keep` corpus tokens as a prompt
and replaces the rest with the target's greedy continuation of it: the text the draft will
actually be asked to predict. Generation is deterministic (greedy) and cached per batch of
sequences, keyed like the feature cache.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from copilot_lsp.draft.features import sequences_key
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError

SHARD = 32


def chosen(count: int, share: float) -> list[int]:
    """Indices of `share` of `count` sequences, spread evenly over them."""
    if not 0.0 <= share <= 1.0:
        raise ConfigError("--generated-share must lie between 0 and 1")
    wanted = round(count * share)
    return sorted({int(i * count / wanted) for i in range(wanted)}) if wanted else []


def with_generated(
    target: Target,
    fingerprint: str,
    sequences: Sequence[Sequence[int]],
    *,
    share: float,
    keep: int,
    cache_dir: Path,
    name: str,
    batch_size: int = 16,
    log: Callable[[str], None] = lambda message: None,
) -> list[list[int]]:
    """`sequences` with `share` of them continued by the target after their first `keep`."""
    result = [list(s) for s in sequences]
    picked = chosen(len(result), share)
    if not picked:
        return result
    length = len(result[0])
    if not 0 < keep < length:
        raise ConfigError(f"--generated-prompt must lie between 1 and {length - 1} tokens")
    prompts = [result[i][:keep] for i in picked]
    folder = cache_dir / "generated" / name
    folder.mkdir(parents=True, exist_ok=True)
    continued: list[list[int]] = []
    bar = tqdm(total=len(prompts), desc=f"generate {name}", unit="seq", leave=False)
    for start in range(0, len(prompts), SHARD):
        shard = prompts[start : start + SHARD]
        path = folder / f"{sequences_key(fingerprint, shard)}-{length}.safetensors"
        if path.exists():
            tokens = load_file(str(path))["tokens"]
        else:
            tokens = torch.cat(
                [
                    _greedy(target, shard[i : i + batch_size], length - keep)
                    for i in range(0, len(shard), batch_size)
                ]
            )
            tmp = path.with_suffix(".tmp")
            save_file({"tokens": tokens.to(torch.int32).contiguous()}, str(tmp))
            os.replace(tmp, path)
        continued += [[int(t) for t in row] for row in tokens]
        bar.update(len(shard))
    bar.close()
    for index, sequence in zip(picked, continued, strict=True):
        result[index] = sequence
    log(f"{name}: {len(picked)} of {len(result)} sequences continued by the target")
    return result


@torch.no_grad()
def _greedy(target: Target, prompts: list[list[int]], new_tokens: int) -> torch.Tensor:
    """Prompt + `new_tokens` greedy tokens (never stopping early), [B, keep + new_tokens]."""
    inputs = torch.tensor(prompts, device=target.device)
    output: torch.Tensor = target.model.generate(
        input_ids=inputs,
        attention_mask=torch.ones_like(inputs),
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=target.tokenizer.eos_token_id,
    )
    return output.cpu()
