"""The frozen target model, loaded with transformers on the CPU in float32."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from copilot_lsp.errors import ConfigError
from copilot_lsp.models import without_media_backends


@dataclass(frozen=True)
class TargetShape:
    """What a draft must agree with: read from the target's config.json."""

    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    rms_norm_eps: float
    rope_theta: float
    config: dict[str, Any]

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TargetShape:
        if config.get("model_type") not in ("llama", "qwen2", "mistral"):
            raise ConfigError(
                f"draft training supports Llama-style targets; got {config.get('model_type')}"
            )
        rope = config.get("rope_parameters") or {}
        theta = rope.get("rope_theta", config.get("rope_theta", 10000.0))
        heads = int(config["num_attention_heads"])
        hidden = int(config["hidden_size"])
        return cls(
            hidden_size=hidden,
            intermediate_size=int(config["intermediate_size"]),
            num_attention_heads=heads,
            num_key_value_heads=int(config.get("num_key_value_heads", heads)),
            head_dim=int(config.get("head_dim") or hidden // heads),
            vocab_size=int(config["vocab_size"]),
            rms_norm_eps=float(config.get("rms_norm_eps", 1e-6)),
            rope_theta=float(theta),
            config=config,
        )


class Target:
    """Post-norm last hidden states and greedy next tokens of the target, in float32."""

    def __init__(
        self,
        model_dir: Path,
        threads: int | None = None,
        device: str = "cpu",
        dtype: torch.dtype = torch.float32,
    ) -> None:
        import json

        if threads:
            torch.set_num_threads(threads)
        self.device = torch.device(device)
        self.model_dir = model_dir
        self.shape = TargetShape.from_config(
            json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        )
        with without_media_backends():
            # By name, so that transformers' partial type hints stay out of this module.
            transformers: Any = importlib.import_module("transformers")
            self.tokenizer: Any = transformers.AutoTokenizer.from_pretrained(str(model_dir))
            # float32 on the CPU; on a GPU a 32B target only fits in bfloat16.
            self.model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                str(model_dir), dtype=dtype, device_map=str(self.device)
            )
        self.model.eval()
        self.model.requires_grad_(False)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @property
    def embed(self) -> torch.Tensor:
        """The input embedding table [V, H] (frozen)."""
        weight: torch.Tensor = self.model.get_input_embeddings().weight
        return weight

    @property
    def lm_head(self) -> torch.Tensor:
        """The output layer [V, H] (frozen; the same tensor as `embed` when tied)."""
        weight: torch.Tensor = self.model.get_output_embeddings().weight
        return weight

    @torch.no_grad()
    def features(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(hidden [B, T, H] after the final norm, greedy next token [B, T]).

        The final norm is part of the feature because vLLM hands the EAGLE head and the Medusa
        heads exactly that tensor (the one the target's lm_head reads).
        """
        hidden: torch.Tensor = self.model.model(input_ids=tokens.to(self.device)).last_hidden_state
        argmax = (hidden @ self.lm_head.T).argmax(dim=-1)
        return hidden.float().cpu(), argmax.cpu()

    @torch.no_grad()
    def aux_features(
        self, tokens: torch.Tensor, layers: tuple[int, ...]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the residual streams after each of `layers` layers, concatenated [B, T, H*n],
        greedy next token [B, T]): what vLLM hands an EAGLE-3 head. Stream k is transformers'
        `hidden_states[k]` (0 is the embedding output), as vLLM's `aux_hidden_state_layers`."""
        total = int(self.shape.config["num_hidden_layers"])
        if any(not 0 <= k < total for k in layers):
            raise ConfigError(f"auxiliary layers {layers} outside 0..{total - 1}")
        out = self.model.model(input_ids=tokens.to(self.device), output_hidden_states=True)
        aux = torch.cat([out.hidden_states[k] for k in layers], dim=-1)
        argmax = (out.last_hidden_state @ self.lm_head.T).argmax(dim=-1)
        return aux.float().cpu(), argmax.cpu()
