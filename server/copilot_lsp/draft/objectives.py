"""What every head's loss and held-out metrics share, over cached target features.

Labels are the target's greedy tokens (`argmax`), not the corpus text: a greedy-verified draft
is accepted when it agrees with the target, whatever the file actually said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Batch:
    tokens: torch.Tensor  # [B, T] int64
    hidden: torch.Tensor  # [B, T, H] float32
    argmax: torch.Tensor  # [B, T] int64


class OutputLayer:
    """The target's frozen lm_head, optionally restricted to the most frequent labels.

    The restriction only shortens the token loss's softmax (the lm_head matmul dominates a
    training step on a CPU); labels outside it are left to the feature loss. Metrics always use
    the full vocabulary, as vLLM does.
    """

    def __init__(self, weight: torch.Tensor, vocab: torch.Tensor | None = None) -> None:
        self.full = weight.detach()
        self.vocab = vocab
        if vocab is None:
            self.weight = self.full
            self.index: torch.Tensor | None = None
        else:
            self.weight = self.full[vocab].contiguous()
            index = torch.full((weight.shape[0],), -100, dtype=torch.long, device=vocab.device)
            index[vocab] = torch.arange(len(vocab), device=vocab.device)
            self.index = index

    def loss(
        self, hidden: torch.Tensor, labels: torch.Tensor, teacher: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Cross-entropy against the greedy `labels`, or, given the target's hidden states
        `teacher` at the same positions, against the target's whole next-token distribution
        (EAGLE's classification loss): ties and near-ties then teach the head too."""
        logits = hidden.reshape(-1, hidden.shape[-1]) @ self.weight.T
        if teacher is not None:
            with torch.no_grad():
                expected = F.softmax(teacher.reshape(-1, teacher.shape[-1]) @ self.weight.T, -1)
            return F.cross_entropy(logits, expected)
        mapped = labels if self.index is None else self.index[labels]
        return F.cross_entropy(logits, mapped.reshape(-1), ignore_index=-100)

    @torch.no_grad()
    def predict(self, hidden: torch.Tensor) -> torch.Tensor:
        return (hidden @ self.full.T).argmax(dim=-1)


def frequent_labels(argmax: torch.Tensor, size: int) -> tuple[torch.Tensor, float]:
    """The `size` most frequent greedy tokens and the share of labels they cover."""
    counts = torch.bincount(argmax.reshape(-1))
    top = counts.argsort(descending=True)[:size]
    return top.sort().values, float(counts[top].sum() / counts.sum())


@dataclass(frozen=True)
class LossWeights:
    feature: float = 1.0
    token: float = 0.1
    step_decay: float = 0.8
    """Weight of draft step s (or Medusa head s) is step_decay**(s-1)."""
    distribution: bool = False
    """Token loss against the target's distribution instead of its greedy token."""


@dataclass(frozen=True)
class Acceptance:
    """Teacher-forced estimate of greedy chain acceptance on held-out features."""

    per_position: list[float]
    """P(draft k accepted) for k = 1..K: drafts 1..k all match the target, averaged over
    every start position."""
    step_accuracy: list[float]
    """Top-1 agreement of each draft step on its own (inputs from the head's earlier steps)."""
    serving_per_position: list[float]
    """The same, averaged over the rounds an engine would run: each round starts one token
    after the last accepted draft. Easy stretches are crossed in few rounds and hard ones in
    many, so this is lower than `per_position`, and it is what the engine's counters show."""

    @property
    def mean_accepted_length(self) -> float:
        return 1.0 + sum(self.per_position)

    @property
    def acceptance_rate(self) -> float:
        return sum(self.per_position) / len(self.per_position)

    def as_dict(self) -> dict[str, object]:
        serving = self.serving_per_position
        return {
            "acceptance_rate": round(self.acceptance_rate, 4),
            "mean_accepted_length": round(self.mean_accepted_length, 3),
            "per_position": [round(x, 4) for x in self.per_position],
            "step_accuracy": [round(x, 4) for x in self.step_accuracy],
            "serving": {
                "acceptance_rate": round(sum(serving) / len(serving), 4),
                "mean_accepted_length": round(1.0 + sum(serving), 3),
                "per_position": [round(x, 4) for x in serving],
            },
        }


def serving_rounds(chain_lengths: torch.Tensor) -> list[int]:
    """Accepted drafts per round when rounds run in sequence over one sequence.

    `chain_lengths[r]` is how many drafts in a row are right for a round starting at r; the
    next round starts after the accepted drafts and the target's own (bonus) token."""
    lengths = chain_lengths.tolist()
    accepted: list[int] = []
    start = 0
    while start < len(lengths):
        accepted.append(int(lengths[start]))
        start += accepted[-1] + 1
    return accepted


def _serving_per_position(chains: list[torch.Tensor], steps: int) -> list[float]:
    """From per-start chain lengths [B, n] (one tensor per batch) to P(draft k accepted)."""
    counts = [0] * steps
    rounds = 0
    for lengths in chains:
        for row in lengths:
            for accepted in serving_rounds(row):
                rounds += 1
                for k in range(accepted):
                    counts[k] += 1
    return [c / max(rounds, 1) for c in counts]


Hits = Callable[[Batch], list[torch.Tensor]]
"""Per draft step s = 1..steps of a batch, whether the head's greedy token is the target's:
[B, n_s], by the slot where the round starts (column j: the round that starts at slot j)."""


@torch.no_grad()
def acceptance(hits: Hits, batches: list[Batch], steps: int, start: int = 0) -> Acceptance:
    """Each draft step's hits on every batch, chained into acceptance: draft k of a round is
    accepted when steps 1..k all hit. Rounds count where every step has a column (the
    narrowest step's width); a step's own accuracy is over all its columns. Only rounds that
    start at slot `start` or later count: after a prompt of P tokens, the engine's first
    round starts at slot P - 1 (the target's own token P is its first input)."""
    chains = [0.0] * steps
    accuracy = [0.0] * steps
    rounds = 0
    lengths: list[torch.Tensor] = []
    for batch in batches:
        correct = [hit[:, start:] for hit in hits(batch)]
        n = min(int(hit.shape[1]) for hit in correct)
        chain = torch.ones_like(correct[0][:, :n])
        length = torch.zeros(chain.shape, dtype=torch.long, device=chain.device)
        for s, hit in enumerate(correct):
            accuracy[s] += float(hit.float().mean())
            chain = chain & hit[:, :n]
            chains[s] += float(chain.float().sum())
            length += chain.long()
        rounds += chain.numel()
        lengths.append(length.cpu())
    return Acceptance(
        [c / rounds for c in chains],
        [a / len(batches) for a in accuracy],
        _serving_per_position(lengths, steps),
    )
