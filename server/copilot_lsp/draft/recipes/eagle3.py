"""EAGLE-3: the head of draft/eagle3.py on the target's residual streams after three layers,
trained on its token loss alone over its own draft vocabulary (the target's most frequent
greedy tokens), with EAGLE's unrolled draft steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from copilot_lsp.draft import export
from copilot_lsp.draft.eagle import EagleShape
from copilot_lsp.draft.eagle3 import Eagle3Head, default_aux_layers
from copilot_lsp.draft.features import Features
from copilot_lsp.draft.objectives import Acceptance, Batch, acceptance, frequent_labels
from copilot_lsp.draft.options import TrainOptions
from copilot_lsp.draft.recipes.base import HeadRecipe, Log
from copilot_lsp.draft.recipes.eagle import chained_hits
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError


def eagle3_loss(
    head: Eagle3Head,
    embed: torch.Tensor,
    labels_index: torch.Tensor,
    batch: Batch,
    steps: int,
    step_decay: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """EAGLE-3's objective: cross-entropy to the target's greedy token at every draft step (no
    feature regression). `labels_index` maps target ids to draft ids (-100: not draftable)."""
    outputs = head(F.embedding(batch.tokens[:, 1:], embed), batch.hidden[:, :-1], steps)
    labels = labels_index[batch.argmax[:, 1:]]
    total = torch.zeros((), device=batch.hidden.device)
    parts: dict[str, float] = {}
    for s, output in enumerate(outputs, start=1):
        logits = head.logits(output[:, s - 1 :])
        targets = labels[:, s - 1 :].reshape(-1)
        # Mean over draftable labels; a batch without any adds nothing (instead of NaN).
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets, ignore_index=-100, reduction="sum"
        ) / (targets != -100).sum().clamp(min=1)
        total = total + step_decay ** (s - 1) * loss
        parts[f"tok{s}"] = float(loss.detach())
    return total, parts


def eagle3_acceptance(
    head: Eagle3Head, embed: torch.Tensor, batches: list[Batch], steps: int, start: int = 0
) -> Acceptance:
    """EAGLE's chained acceptance; `batch.hidden` holds the target's auxiliary streams and the
    head predicts through its own output layer."""
    return acceptance(chained_hits(head, embed, head.predict, steps), batches, steps, start)


class Eagle3Draft:
    def __init__(
        self, model: Eagle3Head, target: Target, steps: int, step_decay: float = 0.8
    ) -> None:
        self.model = model
        self.embed = target.embed.detach().float()
        self.steps = steps
        self.step_decay = step_decay
        self.labels_index = model.draft_labels(target.shape.vocab_size)

    def loss(self, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        return eagle3_loss(
            self.model, self.embed, self.labels_index, batch, self.steps, self.step_decay
        )

    def acceptance(self, batches: list[Batch], start: int = 0) -> Acceptance:
        return eagle3_acceptance(self.model, self.embed, batches, self.steps, start)

    def report(self) -> dict[str, Any]:
        return {"aux_layers": list(self.model.aux_layers)}

    def export(
        self, out: Path, target: Target, fingerprint: str, dtype: str, sidecar: dict[str, Any]
    ) -> None:
        config = export.eagle3_config(
            target.shape.config,
            fingerprint,
            dtype,
            aux_layers=self.model.aux_layers,
            draft_vocab=len(self.model.vocab),
        )
        state = self.model.export_state(target.shape.vocab_size)
        export.write_draft(out, config, state, sidecar)


class Eagle3Recipe(HeadRecipe):
    method = "eagle3"
    architecture = export.EAGLE3_ARCHITECTURE

    def check(self, options: TrainOptions) -> None:
        super().check(options)
        if options.token_vocab <= 0:
            raise ConfigError("EAGLE-3 drafts over its own vocabulary: give --token-vocab N > 0")
        if options.token_loss != "greedy":
            raise ConfigError("EAGLE-3 trains on the target's greedy tokens (--token-loss greedy)")

    def feature_layers(self, options: TrainOptions, target: Target, log: Log) -> tuple[int, ...]:
        vocab_size = target.shape.vocab_size
        if options.token_vocab >= vocab_size:
            raise ConfigError(
                f"EAGLE-3 drafts over a smaller vocabulary than the target's {vocab_size} "
                "tokens: give a smaller --token-vocab"
            )
        layers = _aux_layers(target)
        log(f"EAGLE-3 reads the target's residual streams after layers {layers}")
        return layers

    def build(
        self, options: TrainOptions, target: Target, train_set: Features, log: Log
    ) -> tuple[Eagle3Draft, float]:
        shape, aux_layers = EagleShape.of(target.shape), _aux_layers(target)
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
        model.to(torch.device(options.device))
        return Eagle3Draft(model, target, options.draft_steps, options.step_decay), coverage

    def load(
        self, folder: Path, config: dict[str, Any], target: Target, data: Features, steps: int
    ) -> Eagle3Draft:
        aux_layers = tuple(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
        width = len(aux_layers) * target.shape.hidden_size
        if int(data.hidden.shape[-1]) != width:
            raise ConfigError(
                f"these held-out features are {data.hidden.shape[-1]} wide; an EAGLE-3 head "
                f"reads {width} (the --cache-dir of a `draft train --method eagle3` run)"
            )
        model = Eagle3Head.from_export(EagleShape.of(target.shape), aux_layers, folder)
        return Eagle3Draft(model, target, steps)


def _aux_layers(target: Target) -> tuple[int, ...]:
    return default_aux_layers(int(target.shape.config["num_hidden_layers"]))
