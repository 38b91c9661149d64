"""EAGLE: the head of draft/eagle.py on the target's last hidden state, trained to regress the
target's next feature and to predict its greedy token through the target's own lm_head.

The unrolled draft steps (training-time test) and their chained hits serve EAGLE-3 too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from copilot_lsp.draft import export
from copilot_lsp.draft.eagle import EagleHead, EagleShape, exported_layers
from copilot_lsp.draft.features import Features
from copilot_lsp.draft.objectives import (
    Acceptance,
    Batch,
    Hits,
    LossWeights,
    OutputLayer,
    acceptance,
)
from copilot_lsp.draft.options import TrainOptions
from copilot_lsp.draft.recipes.base import HeadRecipe, Log, loss_weights, token_output
from copilot_lsp.draft.target import Target

Unrolled = Callable[[torch.Tensor, torch.Tensor, int], list[torch.Tensor]]
"""A head's forward: (embeds, features, steps) -> outputs of draft steps 1..steps."""


def eagle_loss(
    head: EagleHead,
    embed: torch.Tensor,
    out: OutputLayer,
    batch: Batch,
    steps: int,
    weights: LossWeights,
    noise: float = 0.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    embeds = F.embedding(batch.tokens[:, 1:], embed)
    features = batch.hidden[:, :-1]
    if noise:
        features = features + noise * torch.randn_like(features)
    outputs = head(embeds, features, steps)
    target_hidden, labels = batch.hidden[:, 1:], batch.argmax[:, 1:]
    total = torch.zeros((), device=features.device)
    parts: dict[str, float] = {}
    for s, output in enumerate(outputs, start=1):
        pred = output[:, s - 1 :]
        feature_loss = F.smooth_l1_loss(pred, target_hidden[:, s - 1 :])
        teacher = target_hidden[:, s - 1 :] if weights.distribution else None
        token_loss = out.loss(pred, labels[:, s - 1 :], teacher)
        weight = weights.step_decay ** (s - 1)
        total = total + weight * (weights.feature * feature_loss + weights.token * token_loss)
        parts[f"feat{s}"] = float(feature_loss.detach())
        parts[f"tok{s}"] = float(token_loss.detach())
    return total, parts


def chained_hits(
    head: Unrolled,
    embed: torch.Tensor,
    predict: Callable[[torch.Tensor], torch.Tensor],
    steps: int,
) -> Hits:
    """Each draft step's greedy token against the target's at every slot: step s at slot i
    drafts token i+1 for the round that started at slot i-s+1."""

    def hits(batch: Batch) -> list[torch.Tensor]:
        outputs = head(F.embedding(batch.tokens[:, 1:], embed), batch.hidden[:, :-1], steps)
        labels = batch.argmax[:, 1:]
        return [(predict(output) == labels)[:, s:] for s, output in enumerate(outputs)]

    return hits


@dataclass
class EagleDraft:
    model: EagleHead
    embed: torch.Tensor
    out: OutputLayer
    steps: int
    weights: LossWeights
    noise: float = 0.0

    def loss(self, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        return eagle_loss(
            self.model, self.embed, self.out, batch, self.steps, self.weights, self.noise
        )

    def acceptance(self, batches: list[Batch], start: int = 0) -> Acceptance:
        hits = chained_hits(self.model, self.embed, self.out.predict, self.steps)
        return acceptance(hits, batches, self.steps, start)

    def report(self) -> dict[str, Any]:
        return {}

    def export(
        self, out: Path, target: Target, fingerprint: str, dtype: str, sidecar: dict[str, Any]
    ) -> None:
        config = export.eagle_config(
            target.shape.config, fingerprint, dtype, layers=self.model.shape.num_layers
        )
        export.write_draft(out, config, self.model.export_state(), sidecar)


class EagleRecipe(HeadRecipe):
    method = "eagle"
    architecture = "LlamaForCausalLM"

    def check(self, options: TrainOptions) -> None:
        """Any number of layers (check_options bounds it); --init continues an EAGLE head."""

    def build(
        self, options: TrainOptions, target: Target, train_set: Features, log: Log
    ) -> tuple[EagleDraft, float]:
        embed = target.embed.detach().float()
        out, coverage = token_output(options, target, train_set, log)
        model = EagleHead(EagleShape.of(target.shape, options.layers))
        if options.init is not None:
            grown = model.load_export(options.init)
            log(f"starting from the EAGLE head in {options.init}")
            if grown:
                log(f"layers {', '.join(map(str, grown))} added, starting as the identity")
        model.to(torch.device(options.device))
        draft = EagleDraft(
            model, embed, out, options.draft_steps, loss_weights(options), options.noise
        )
        return draft, coverage

    def load(
        self, folder: Path, config: dict[str, Any], target: Target, data: Features, steps: int
    ) -> EagleDraft:
        model = EagleHead(EagleShape.of(target.shape, exported_layers(folder)))
        model.load_export(folder)
        out = OutputLayer(target.lm_head.float())
        return EagleDraft(model, target.embed.detach().float(), out, steps, LossWeights())
