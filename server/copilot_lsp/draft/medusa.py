"""Medusa heads as vLLM 0.32 runs them (`medusa.py`): residual blocks over the target feature.

Head k reads the target's feature h[i] and predicts the token k+2 places ahead (the target
itself supplies the token at i+1): its label is the target's greedy token argmax[i+k+1]. Every
head shares the target's lm_head (vLLM's `original_lm_head`), which stays frozen; only the blocks
x + SiLU(W x) are trained, starting from W = 0 (the identity), as the Medusa paper does.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn


class MedusaHeads(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Linear(hidden_size, hidden_size, bias=False) for _ in range(num_heads)
        )
        for block in self.blocks:
            assert isinstance(block, nn.Linear)
            nn.init.zeros_(block.weight)

    def forward(self, features: torch.Tensor) -> list[torch.Tensor]:
        return [features + F.silu(block(features)) for block in self.blocks]

    def export_state(self) -> dict[str, torch.Tensor]:
        """Block weights under vLLM's names; the lm_head is added at set-up from the target."""
        return {
            f"blocks.{k}.layers.0.weight": cast(nn.Linear, block).weight.detach().cpu().clone()
            for k, block in enumerate(self.blocks)
        }
