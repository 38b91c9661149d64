"""The one interface every head type implements, so that training and evaluation never ask
which head they hold.

A `HeadRecipe` knows a head type's options, the target streams it reads, how to build a head
for training (fresh or from an export) and how to load an exported one for measuring. What it
builds is a `DraftHead`: the module the training loop optimizes, its loss on a batch, its
held-out acceptance and its export in the folder layout vLLM loads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

import torch
from torch import nn

from copilot_lsp.draft.features import Features
from copilot_lsp.draft.objectives import (
    Acceptance,
    Batch,
    LossWeights,
    OutputLayer,
    frequent_labels,
)
from copilot_lsp.draft.options import TrainOptions
from copilot_lsp.draft.target import Target
from copilot_lsp.errors import ConfigError

Log = Callable[[str], None]


class DraftHead(Protocol):
    """A head built for training or measuring, bound to what its objective needs."""

    @property
    def model(self) -> nn.Module:
        """The trainable module (the training loop's parameters and checkpoint)."""

    def loss(self, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        """The training loss, and its parts by name for the progress bar."""

    def acceptance(self, batches: list[Batch], start: int = 0) -> Acceptance:
        """Teacher-forced greedy acceptance on held-out batches, of the rounds that start at
        slot `start` or later."""

    def report(self) -> dict[str, Any]:
        """What the training report adds for this head type (after the common fields)."""

    def export(
        self, out: Path, target: Target, fingerprint: str, dtype: str, sidecar: dict[str, Any]
    ) -> None:
        """Write the head where vLLM loads it from: `out` (config, weights, sidecar)."""


class HeadRecipe(ABC):
    method: ClassVar[str]
    """The `--method` name."""
    architecture: ClassVar[str]
    """`architectures[0]` of the config.json this recipe's exports carry."""

    def check(self, options: TrainOptions) -> None:
        """Refuse options this head type cannot train with, before any work. Heads have one
        layer unless their recipe says otherwise."""
        if options.layers != 1:
            raise ConfigError(
                "--layers applies to EAGLE heads; vLLM's EAGLE-3 head has one layer and Medusa "
                "heads one block each"
            )

    def feature_layers(self, options: TrainOptions, target: Target, log: Log) -> tuple[int, ...]:
        """The target layers whose residual streams the head reads; () for the target's last
        hidden state (after the final norm), which is what most heads read."""
        return ()

    def wrote(self, config: dict[str, Any]) -> bool:
        """Whether an exported head's config.json is one this recipe writes."""
        return config.get("architectures") == [self.architecture]

    @abstractmethod
    def build(
        self, options: TrainOptions, target: Target, train_set: Features, log: Log
    ) -> tuple[DraftHead, float]:
        """A head to train, on `options.device`, and the share of the training set's greedy
        labels its token loss covers."""

    @abstractmethod
    def load(
        self, folder: Path, config: dict[str, Any], target: Target, data: Features, steps: int
    ) -> DraftHead:
        """The head exported in `folder` (`config`: its config.json), on the CPU, to measure
        over `steps` draft steps on the held-out features `data`."""


def token_output(
    options: TrainOptions, target: Target, train_set: Features, log: Log
) -> tuple[OutputLayer, float]:
    """The target's lm_head as the token loss's output layer, restricted to the
    `options.token_vocab` most frequent greedy labels when that is not 0; and their coverage."""
    vocab, coverage = (None, 1.0)
    if options.token_vocab:
        vocab, coverage = frequent_labels(train_set.argmax, options.token_vocab)
        log(f"token loss over {len(vocab)} labels covering {coverage:.1%} of greedy tokens")
        vocab = vocab.to(torch.device(options.device))
    return OutputLayer(target.lm_head.float(), vocab), coverage


def loss_weights(options: TrainOptions) -> LossWeights:
    return LossWeights(
        options.feature_weight,
        options.token_weight,
        options.step_decay,
        distribution=options.token_loss == "distribution",
    )
