"""The EAGLE draft head exactly as vLLM 0.32 runs it (`llama_eagle.py`), with training-time test.

vLLM's draft step: x = fc([embed(next token); feature]); then `num_hidden_layers` Llama decoder
layers on a residual stream s (s = x; per layer s += attn(norm(s)); s += mlp(norm(s))), where
the first layer has no input norm and there is no final norm; the target's lm_head reads s,
and s is also the feature of the next draft step. The paper's head and this project's shipped
one have one layer; a second adds capacity at little cost next to the target's 30.

At draft step s (1-based) and slot i the head sees token t[i+1] and, for s = 1, the target's
feature h[i]; for s > 1 its own output of step s-1 at slot i-1 (that is what vLLM feeds it when
it drafts s tokens ahead). It must produce h[i+1], whose greedy token is argmax[i+1]. Each
layer's attention reads what its draft KV cache holds at that moment: keys written from the
target's features up to slot i-s+1, then one key per earlier draft step on the diagonal (slot
i-s+u from step u), then its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from copilot_lsp.draft.target import TargetShape
from copilot_lsp.errors import ConfigError

MAX_LAYERS = 4


@dataclass(frozen=True)
class EagleShape:
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    num_layers: int = 1

    @classmethod
    def of(cls, target: TargetShape, num_layers: int = 1) -> EagleShape:
        if not 1 <= num_layers <= MAX_LAYERS:
            raise ConfigError(f"an EAGLE head has 1 to {MAX_LAYERS} layers, not {num_layers}")
        return cls(
            hidden_size=target.hidden_size,
            intermediate_size=target.intermediate_size,
            num_attention_heads=target.num_attention_heads,
            num_key_value_heads=target.num_key_value_heads,
            head_dim=target.head_dim,
            rms_norm_eps=target.rms_norm_eps,
            rope_theta=target.rope_theta,
            num_layers=num_layers,
        )

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def exported_layers(folder: Path) -> int:
    """How many decoder layers the exported head in `folder` has (its weights' names)."""
    from safetensors import safe_open

    from copilot_lsp.draft.export import WEIGHTS

    path = folder / WEIGHTS
    if not path.is_file():
        raise ConfigError(f"no EAGLE weights at {path}")
    with safe_open(str(path), framework="pt") as handle:
        names = list(handle.keys())
    return _layer_count(names, path)


def _layer_count(names: Iterable[str], path: Path) -> int:
    found = {int(m.group(1)) for name in names if (m := re.match(r"layers\.(\d+)\.", name))}
    if not found:
        raise ConfigError(f"{path} has no decoder layer: not an EAGLE head")
    return max(found) + 1


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * (x * scale)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


Cache = list[tuple[torch.Tensor, torch.Tensor]]
"""One layer's keys and values, one entry per draft step so far."""


class EagleLayer(nn.Module):
    """One Llama decoder layer; the first of a head has no input norm (vLLM drops it)."""

    def __init__(self, shape: EagleShape, *, input_norm: bool, attention_input: int = 0) -> None:
        """`attention_input`: the width q/k/v read (default the hidden size; EAGLE-3's layer
        reads token embedding and feature side by side, twice that)."""
        super().__init__()
        self.shape = shape
        h, d = shape.hidden_size, shape.head_dim
        width = attention_input or h
        self.input_layernorm = RMSNorm(h, shape.rms_norm_eps) if input_norm else None
        self.q_proj = nn.Linear(width, shape.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(width, shape.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(width, shape.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(shape.num_attention_heads * d, h, bias=False)
        self.post_attention_layernorm = RMSNorm(h, shape.rms_norm_eps)
        self.gate_proj = nn.Linear(h, shape.intermediate_size, bias=False)
        self.up_proj = nn.Linear(h, shape.intermediate_size, bias=False)
        self.down_proj = nn.Linear(shape.intermediate_size, h, bias=False)
        inv_freq = 1.0 / (shape.rope_theta ** (torch.arange(0, d, 2).float() / d))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def attention_input(self, stream: torch.Tensor) -> torch.Tensor:
        return stream if self.input_layernorm is None else self.input_layernorm(stream)

    def mlp(self, stream: torch.Tensor) -> torch.Tensor:
        n = self.post_attention_layernorm(stream)
        out: torch.Tensor = self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))
        return out

    def rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        freqs = positions[:, None].float() * self.inv_freq[None, :]  # type: ignore[index]
        emb = torch.cat((freqs, freqs), dim=-1)
        return x * emb.cos() + _rotate_half(x) * emb.sin()

    def qkv(
        self, x: torch.Tensor, positions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, t, _ = x.shape
        s = self.shape
        q = self.q_proj(x).view(b, t, s.num_attention_heads, s.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, s.num_key_value_heads, s.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, s.num_key_value_heads, s.head_dim).transpose(1, 2)
        repeat = s.num_attention_heads // s.num_key_value_heads
        k = self.rope(k, positions).repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        return self.rope(q, positions), k, v

    def forward(
        self, stream: torch.Tensor, positions: torch.Tensor, cache: Cache, step: int
    ) -> torch.Tensor:
        """The residual stream after this layer at draft step `step`; appends to `cache`."""
        stream = stream + self.attention(self.attention_input(stream), positions, cache, step)
        return stream + self.mlp(stream)

    def attention(
        self, x: torch.Tensor, positions: torch.Tensor, cache: Cache, step: int
    ) -> torch.Tensor:
        """Self-attention output for input `x` at draft step `step`; appends to `cache`."""
        q, k, v = self.qkv(x, positions)
        cache.append((k, v))
        b, t, _ = x.shape
        attn = self._attend(q, cache, step).transpose(1, 2).reshape(b, t, -1)
        out: torch.Tensor = self.o_proj(attn)
        return out

    def _attend(self, q: torch.Tensor, cache: Cache, step: int) -> torch.Tensor:
        scale = 1.0 / math.sqrt(self.shape.head_dim)
        k1, v1 = cache[0]
        if step == 1:
            return F.scaled_dot_product_attention(q, k1, v1, is_causal=True)
        t = q.shape[2]
        idx = torch.arange(t, device=q.device)
        # Keys from the target's features: slots j <= i - step + 1.
        main = (q @ k1.transpose(-1, -2)) * scale
        allowed = idx[None, :] <= (idx[:, None] - step + 1)
        main = main.masked_fill(~allowed, float("-inf"))
        diag_scores, diag_values = [], []
        for u in range(2, step + 1):
            ku, vu = cache[u - 1]
            shift = step - u  # step u's key at slot i - shift
            ks = F.pad(ku[:, :, : t - shift], (0, 0, shift, 0)) if shift else ku
            vs = F.pad(vu[:, :, : t - shift], (0, 0, shift, 0)) if shift else vu
            score = (q * ks).sum(-1, keepdim=True) * scale
            if shift:
                score = score.masked_fill((idx < shift)[None, None, :, None], float("-inf"))
            diag_scores.append(score)
            diag_values.append(vs)
        weights = torch.softmax(torch.cat([main, *diag_scores], dim=-1), dim=-1)
        out = weights[..., :t] @ v1
        for n, values in enumerate(diag_values):
            out = out + weights[..., t + n : t + n + 1] * values
        return out

    def export_names(self, prefix: str) -> dict[str, torch.Tensor]:
        names = {
            f"{prefix}.self_attn.q_proj.weight": self.q_proj.weight,
            f"{prefix}.self_attn.k_proj.weight": self.k_proj.weight,
            f"{prefix}.self_attn.v_proj.weight": self.v_proj.weight,
            f"{prefix}.self_attn.o_proj.weight": self.o_proj.weight,
            f"{prefix}.post_attention_layernorm.weight": self.post_attention_layernorm.weight,
            f"{prefix}.mlp.gate_proj.weight": self.gate_proj.weight,
            f"{prefix}.mlp.up_proj.weight": self.up_proj.weight,
            f"{prefix}.mlp.down_proj.weight": self.down_proj.weight,
        }
        if self.input_layernorm is not None:
            names[f"{prefix}.input_layernorm.weight"] = self.input_layernorm.weight
        return names


class EagleHead(nn.Module):
    """Parameter names match the checkpoint vLLM loads (see export.py)."""

    def __init__(self, shape: EagleShape) -> None:
        super().__init__()
        self.shape = shape
        h = shape.hidden_size
        self.fc = nn.Linear(2 * h, h, bias=False)
        self.layers = nn.ModuleList(
            EagleLayer(shape, input_norm=i > 0) for i in range(shape.num_layers)
        )
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)

    def forward(
        self, embeds: torch.Tensor, features: torch.Tensor, steps: int = 1
    ) -> list[torch.Tensor]:
        """Outputs [B, T, H] of draft steps 1..steps (see the module docstring).

        `embeds[:, i]` is the embedding of token t[i+1]; `features[:, i]` is h[i].
        """
        t = embeds.shape[1]
        positions = torch.arange(t, device=embeds.device)
        outputs: list[torch.Tensor] = []
        caches: list[Cache] = [[] for _ in self.layers]
        feature = features
        for step in range(1, steps + 1):
            if step > 1:
                # Step s at slot i continues from step s-1 at slot i-1.
                feature = F.pad(outputs[-1][:, :-1], (0, 0, 1, 0))
            stream = self.fc(torch.cat((embeds, feature), dim=-1))
            for layer, cache in zip(self.layers, caches, strict=True):
                stream = layer(stream, positions, cache, step)
            outputs.append(stream)
        return outputs

    def load_export(self, folder: Path) -> list[int]:
        """Load an exported head (the inverse of `export_state`); returns the layers it lacked.

        A head with fewer layers than this one fills the first ones; each further layer starts
        as the identity (its attention and MLP outputs zero), so the grown head drafts exactly
        like the loaded one until training moves it.
        """
        from safetensors.torch import load_file

        from copilot_lsp.draft.export import WEIGHTS

        path = folder / WEIGHTS
        if not path.is_file():
            raise ConfigError(f"no EAGLE weights at {path}")
        saved = load_file(str(path))
        names = self._export_names()
        missing = set(names) - set(saved)
        loaded = _layer_count(saved, path)
        grown = list(range(loaded, self.shape.num_layers))
        grown_names = {n for i in grown for n in self._layer(i).export_names(f"layers.{i}")}
        if set(saved) - set(names) or missing != grown_names:
            raise ConfigError(
                f"{path} is an EAGLE head of {loaded} layers or another shape; this one has "
                f"{self.shape.num_layers} (a head can grow, not shrink)"
            )
        with torch.no_grad():
            for name, tensor in names.items():
                if name in missing:
                    continue
                if saved[name].shape != tensor.shape:
                    raise ConfigError(
                        f"{path}: {name} is {tuple(saved[name].shape)}, this target needs "
                        f"{tuple(tensor.shape)} (a head for another target?)"
                    )
                tensor.copy_(saved[name].to(tensor.dtype))
            for i in grown:
                layer = self._layer(i)
                layer.o_proj.weight.zero_()
                layer.down_proj.weight.zero_()
        return grown

    def export_state(self) -> dict[str, torch.Tensor]:
        """Tensors under the names vLLM's EagleLlamaForCausalLM loads."""
        names = self._export_names()
        return {name: tensor.detach().cpu().clone() for name, tensor in names.items()}

    def _export_names(self) -> dict[str, torch.Tensor]:
        names = {"fc.weight": self.fc.weight}
        for i in range(len(self.layers)):
            names |= self._layer(i).export_names(f"layers.{i}")
        return names

    def _layer(self, index: int) -> EagleLayer:
        layer = self.layers[index]
        assert isinstance(layer, EagleLayer)
        return layer
