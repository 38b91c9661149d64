"""The EAGLE draft head exactly as vLLM 0.32 runs it (`llama_eagle.py`), with training-time test.

vLLM's draft step: x = fc([embed(next token); feature]); one Llama decoder layer without an
input norm (r = x + attn(x); out = r + mlp(post_attention_layernorm(r))); no final norm; the
target's lm_head reads `out`, and `out` is also the feature of the next draft step.

At draft step s (1-based) and slot i the head sees token t[i+1] and, for s = 1, the target's
feature h[i]; for s > 1 its own output of step s-1 at slot i-1 (that is what vLLM feeds it when
it drafts s tokens ahead). It must produce h[i+1], whose greedy token is argmax[i+1]. Its
attention reads what vLLM's draft KV cache holds at that moment: keys written from the target's
features up to slot i-s+1, then one key per earlier draft step on the diagonal (slot i-s+u from
step u), then its own.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from copilot_lsp.draft.target import TargetShape
from copilot_lsp.errors import ConfigError


@dataclass(frozen=True)
class EagleShape:
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float

    @classmethod
    def of(cls, target: TargetShape) -> EagleShape:
        return cls(
            hidden_size=target.hidden_size,
            intermediate_size=target.intermediate_size,
            num_attention_heads=target.num_attention_heads,
            num_key_value_heads=target.num_key_value_heads,
            head_dim=target.head_dim,
            rms_norm_eps=target.rms_norm_eps,
            rope_theta=target.rope_theta,
        )

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


class _RMSNorm(nn.Module):
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


class EagleHead(nn.Module):
    """Parameter names match the checkpoint vLLM loads (see export.py)."""

    def __init__(self, shape: EagleShape) -> None:
        super().__init__()
        self.shape = shape
        h, d = shape.hidden_size, shape.head_dim
        self.fc = nn.Linear(2 * h, h, bias=False)
        self.q_proj = nn.Linear(h, shape.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(h, shape.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(h, shape.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(shape.num_attention_heads * d, h, bias=False)
        self.post_attention_layernorm = _RMSNorm(h, shape.rms_norm_eps)
        self.gate_proj = nn.Linear(h, shape.intermediate_size, bias=False)
        self.up_proj = nn.Linear(h, shape.intermediate_size, bias=False)
        self.down_proj = nn.Linear(shape.intermediate_size, h, bias=False)
        inv_freq = 1.0 / (shape.rope_theta ** (torch.arange(0, d, 2).float() / d))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)

    def _rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        freqs = positions[:, None].float() * self.inv_freq[None, :]  # type: ignore[index]
        emb = torch.cat((freqs, freqs), dim=-1)
        return x * emb.cos() + _rotate_half(x) * emb.sin()

    def _qkv(
        self, x: torch.Tensor, positions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, t, _ = x.shape
        s = self.shape
        q = self.q_proj(x).view(b, t, s.num_attention_heads, s.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, s.num_key_value_heads, s.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, s.num_key_value_heads, s.head_dim).transpose(1, 2)
        repeat = s.num_attention_heads // s.num_key_value_heads
        k = self._rope(k, positions).repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        return self._rope(q, positions), k, v

    def forward(
        self, embeds: torch.Tensor, features: torch.Tensor, steps: int = 1
    ) -> list[torch.Tensor]:
        """Outputs [B, T, H] of draft steps 1..steps (see the module docstring).

        `embeds[:, i]` is the embedding of token t[i+1]; `features[:, i]` is h[i].
        """
        t = embeds.shape[1]
        positions = torch.arange(t, device=embeds.device)
        outputs: list[torch.Tensor] = []
        keys: list[tuple[torch.Tensor, torch.Tensor]] = []
        feature = features
        for step in range(1, steps + 1):
            if step > 1:
                # Step s at slot i continues from step s-1 at slot i-1.
                feature = F.pad(outputs[-1][:, :-1], (0, 0, 1, 0))
            x = self.fc(torch.cat((embeds, feature), dim=-1))
            q, k, v = self._qkv(x, positions)
            keys.append((k, v))
            attn = self._attend(q, keys, step)
            b = x.shape[0]
            attn = attn.transpose(1, 2).reshape(b, t, -1)
            r = x + self.o_proj(attn)
            n = self.post_attention_layernorm(r)
            out = r + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))
            outputs.append(out)
        return outputs

    def _attend(
        self, q: torch.Tensor, keys: list[tuple[torch.Tensor, torch.Tensor]], step: int
    ) -> torch.Tensor:
        scale = 1.0 / math.sqrt(self.shape.head_dim)
        k1, v1 = keys[0]
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
            ku, vu = keys[u - 1]
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

    def load_export(self, folder: Path) -> None:
        """Load the weights of an exported head (the inverse of `export_state`)."""
        from safetensors.torch import load_file

        from copilot_lsp.draft.export import WEIGHTS

        path = folder / WEIGHTS
        if not path.is_file():
            raise ConfigError(f"no EAGLE weights at {path}")
        saved = load_file(str(path))
        names = self._export_names()
        if set(saved) != set(names):
            raise ConfigError(f"{path} is not an EAGLE head of this project's shape")
        with torch.no_grad():
            for name, tensor in names.items():
                if saved[name].shape != tensor.shape:
                    raise ConfigError(
                        f"{path}: {name} is {tuple(saved[name].shape)}, this target needs "
                        f"{tuple(tensor.shape)} (a head for another target?)"
                    )
                tensor.copy_(saved[name].to(tensor.dtype))

    def export_state(self) -> dict[str, torch.Tensor]:
        """Tensors under the names vLLM's EagleLlamaForCausalLM loads."""
        names = self._export_names()
        return {name: tensor.detach().cpu().clone() for name, tensor in names.items()}

    def _export_names(self) -> dict[str, torch.Tensor]:
        layer = "layers.0"
        return {
            "fc.weight": self.fc.weight,
            f"{layer}.self_attn.q_proj.weight": self.q_proj.weight,
            f"{layer}.self_attn.k_proj.weight": self.k_proj.weight,
            f"{layer}.self_attn.v_proj.weight": self.v_proj.weight,
            f"{layer}.self_attn.o_proj.weight": self.o_proj.weight,
            f"{layer}.post_attention_layernorm.weight": self.post_attention_layernorm.weight,
            f"{layer}.mlp.gate_proj.weight": self.gate_proj.weight,
            f"{layer}.mlp.up_proj.weight": self.up_proj.weight,
            f"{layer}.mlp.down_proj.weight": self.down_proj.weight,
        }
