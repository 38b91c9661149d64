"""Medusa: the residual blocks of draft/medusa.py on the target's last hidden state, head k
trained to predict the target's greedy token k+2 places ahead through the target's lm_head.

The export is two folders: the trained blocks alone (OUT/heads) and the servable folder that
adds the target's lm_head (draft/export.py says why).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from copilot_lsp.draft import export
from copilot_lsp.draft.features import Features
from copilot_lsp.draft.medusa import MedusaHeads
from copilot_lsp.draft.objectives import Acceptance, Batch, LossWeights, OutputLayer, acceptance
from copilot_lsp.draft.options import TrainOptions
from copilot_lsp.draft.recipes.base import HeadRecipe, Log, loss_weights, token_output
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError


def medusa_loss(
    heads: MedusaHeads, out: OutputLayer, batch: Batch, weights: LossWeights
) -> tuple[torch.Tensor, dict[str, float]]:
    outputs = heads(batch.hidden)
    t = batch.hidden.shape[1]
    total = torch.zeros((), device=batch.hidden.device)
    parts: dict[str, float] = {}
    for k, output in enumerate(outputs):
        shift = k + 1
        teacher = batch.hidden[:, shift:] if weights.distribution else None
        loss = out.loss(output[:, : t - shift], batch.argmax[:, shift:], teacher)
        total = total + weights.step_decay**k * loss
        parts[f"tok{k + 1}"] = float(loss.detach())
    return total, parts


class MedusaDraft:
    def __init__(self, model: MedusaHeads, out: OutputLayer, weights: LossWeights) -> None:
        self.model = model
        self.out = out
        self.weights = weights

    def loss(self, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        return medusa_loss(self.model, self.out, batch, self.weights)

    def acceptance(self, batches: list[Batch], start: int = 0) -> Acceptance:
        return acceptance(self._hits, batches, len(self.model.blocks), start)

    def _hits(self, batch: Batch) -> list[torch.Tensor]:
        """Head j at slot i drafts token i+j+2, the round's draft j+1; rounds start where every
        head has a label."""
        n = batch.hidden.shape[1] - len(self.model.blocks)
        return [
            self.out.predict(output[:, :n]) == batch.argmax[:, j + 1 : j + 1 + n]
            for j, output in enumerate(self.model(batch.hidden))
        ]

    def report(self) -> dict[str, Any]:
        return {}

    def export(
        self, out: Path, target: Target, fingerprint: str, dtype: str, sidecar: dict[str, Any]
    ) -> None:
        shape = target.shape
        config = export.medusa_config(
            shape.hidden_size, shape.vocab_size, len(self.model.blocks), fingerprint, dtype
        )
        heads = out / "heads"
        export.write_draft(
            heads, config, self.model.export_state(), sidecar, weights_name=export.MEDUSA_HEADS
        )
        export.assemble_medusa(heads, target.model_dir, out)


class MedusaRecipe(HeadRecipe):
    method = "medusa"
    architecture = "MedusaModel"

    def check(self, options: TrainOptions) -> None:
        super().check(options)
        if options.init is not None:
            raise ConfigError("--init continues an EAGLE head; Medusa heads train from scratch")

    def build(
        self, options: TrainOptions, target: Target, train_set: Features, log: Log
    ) -> tuple[MedusaDraft, float]:
        out, coverage = token_output(options, target, train_set, log)
        model = MedusaHeads(target.shape.hidden_size, options.draft_steps)
        model.to(torch.device(options.device))
        return MedusaDraft(model, out, loss_weights(options)), coverage

    def load(
        self, folder: Path, config: dict[str, Any], target: Target, data: Features, steps: int
    ) -> MedusaDraft:
        raise ConfigError(
            f"{folder} holds Medusa heads; `draft evaluate` measures EAGLE and EAGLE-3 heads "
            "(a Medusa run's held-out acceptance is in its copilot_lsp_draft.json)"
        )
