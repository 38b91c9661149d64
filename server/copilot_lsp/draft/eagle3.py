"""The EAGLE-3 draft head exactly as vLLM 0.32 runs it (`llama_eagle3.py`), with training-time test.

EAGLE-3 reads more of the target than EAGLE: the residual streams after three of its layers
(low, middle, high; for a 30-layer target vLLM's default is 2, 15 and 27), where token identity
and local context still sit, instead of only the last hidden state. One draft step:

    x = fc([a_low; a_mid; a_high])        step 1; step s > 1 reads the head's own output instead
    s = x + attn([input_layernorm(embed(next token)); hidden_norm(x)])
    s = s + mlp(post_attention_layernorm(s))
    logits = lm_head(norm(s))             over the draft vocabulary; `d2t` maps it to the target's

and `s` (before the final norm) is the next step's x. The head trains on its token loss alone (no
feature regression) and has its own output layer over the target's most frequent greedy tokens,
which makes each draft step's output layer several times cheaper than the target's.

The slots, steps and draft KV cache of training-time test are those of `eagle.py`.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from copilot_lsp.draft.eagle import Cache, EagleLayer, EagleShape, RMSNorm
from copilot_lsp.errors import ConfigError


def default_aux_layers(target_layers: int) -> tuple[int, int, int]:
    """vLLM's choice for Llama targets: early, middle and late residual streams."""
    if target_layers < 6:
        raise ConfigError(f"EAGLE-3 needs a target of at least 6 layers, not {target_layers}")
    return (2, target_layers // 2, target_layers - 3)


class Eagle3Layer(EagleLayer):
    """vLLM's first (and only) EAGLE-3 decoder layer: q/k/v read embedding and feature."""

    def __init__(self, shape: EagleShape) -> None:
        super().__init__(shape, input_norm=True, attention_input=2 * shape.hidden_size)
        self.hidden_norm = RMSNorm(shape.hidden_size, shape.rms_norm_eps)

    def step(
        self,
        embeds: torch.Tensor,
        hidden: torch.Tensor,
        positions: torch.Tensor,
        cache: Cache,
        step: int,
    ) -> torch.Tensor:
        assert self.input_layernorm is not None
        x = torch.cat((self.input_layernorm(embeds), self.hidden_norm(hidden)), dim=-1)
        stream = hidden + self.attention(x, positions, cache, step)
        return stream + self.mlp(stream)

    def export_names(self, prefix: str) -> dict[str, torch.Tensor]:
        names = super().export_names(prefix)
        names[f"{prefix}.hidden_norm.weight"] = self.hidden_norm.weight
        return names


class Eagle3Head(nn.Module):
    """Parameter names match the checkpoint vLLM's Eagle3LlamaForCausalLM loads."""

    def __init__(self, shape: EagleShape, aux_layers: tuple[int, ...], vocab: torch.Tensor) -> None:
        """`vocab`: the target token ids of the draft vocabulary, ascending."""
        super().__init__()
        if vocab.ndim != 1 or len(vocab) == 0 or bool((vocab[1:] <= vocab[:-1]).any()):
            raise ConfigError("the EAGLE-3 draft vocabulary must be ascending, unique token ids")
        self.shape = shape
        self.aux_layers = tuple(aux_layers)
        h = shape.hidden_size
        self.fc = nn.Linear(len(self.aux_layers) * h, h, bias=False)
        self.midlayer = Eagle3Layer(shape)
        self.norm = RMSNorm(h, shape.rms_norm_eps)
        self.lm_head = nn.Linear(h, len(vocab), bias=False)
        self.vocab: torch.Tensor
        self.register_buffer("vocab", vocab.long().clone())
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)

    def init_output(self, target_lm_head: torch.Tensor) -> None:
        """Start the output layer from the target's rows for the draft vocabulary: the final
        norm then only has to learn the target's own scale."""
        with torch.no_grad():
            self.lm_head.weight.copy_(target_lm_head[self.vocab.to(target_lm_head.device)])

    def forward(
        self, embeds: torch.Tensor, aux: torch.Tensor, steps: int = 1
    ) -> list[torch.Tensor]:
        """Pre-norm outputs [B, T, H] of draft steps 1..steps.

        `embeds[:, i]` is the embedding of token t[i+1]; `aux[:, i]` the target's auxiliary
        streams at slot i, concatenated.
        """
        t = embeds.shape[1]
        positions = torch.arange(t, device=embeds.device)
        outputs: list[torch.Tensor] = []
        cache: Cache = []
        hidden = self.fc(aux)
        for step in range(1, steps + 1):
            if step > 1:
                # Step s at slot i continues from step s-1 at slot i-1.
                hidden = F.pad(outputs[-1][:, :-1], (0, 0, 1, 0))
            outputs.append(self.midlayer.step(embeds, hidden, positions, cache, step))
        return outputs

    def logits(self, output: torch.Tensor) -> torch.Tensor:
        """Logits over the draft vocabulary."""
        out: torch.Tensor = self.lm_head(self.norm(output))
        return out

    @torch.no_grad()
    def predict(self, output: torch.Tensor) -> torch.Tensor:
        """The greedy draft token, as a target token id."""
        return self.vocab[self.logits(output).argmax(dim=-1)]

    def draft_labels(self, target_vocab_size: int) -> torch.Tensor:
        """Target id -> draft id, -100 where the draft vocabulary lacks it (ignored in the loss)."""
        index = torch.full((target_vocab_size,), -100, dtype=torch.long, device=self.vocab.device)
        index[self.vocab] = torch.arange(len(self.vocab), device=self.vocab.device)
        return index

    def export_state(self, target_vocab_size: int) -> dict[str, torch.Tensor]:
        """Tensors under the names vLLM loads; `d2t` holds target id minus draft id (vLLM adds
        it to the draft id), `t2d` marks the target ids the draft can emit."""
        names = self._export_names()
        state = {name: tensor.detach().cpu().clone() for name, tensor in names.items()}
        draft_ids = torch.arange(len(self.vocab))
        state["d2t"] = self.vocab.cpu() - draft_ids
        t2d = torch.zeros(target_vocab_size, dtype=torch.bool)
        t2d[self.vocab.cpu()] = True
        state["t2d"] = t2d
        return state

    @classmethod
    def from_export(
        cls, shape: EagleShape, aux_layers: tuple[int, ...], folder: Path
    ) -> Eagle3Head:
        """The EAGLE-3 head exported in `folder`, with the draft vocabulary its `d2t` records
        (the weights file is read once)."""
        path, saved = _read_export(folder)
        head = cls(shape, aux_layers, _vocabulary(saved))
        head._copy(saved, path)
        return head

    def load_export(self, folder: Path) -> None:
        """Load an exported EAGLE-3 head of this shape and draft vocabulary."""
        path, saved = _read_export(folder)
        if not torch.equal(_vocabulary(saved), self.vocab.cpu()):
            raise ConfigError(f"{path} has another draft vocabulary than this head")
        self._copy(saved, path)

    def _copy(self, saved: dict[str, torch.Tensor], path: Path) -> None:
        names = self._export_names()
        if set(names) - set(saved):
            raise ConfigError(f"{path} is not an EAGLE-3 head of this shape")
        with torch.no_grad():
            for name, tensor in names.items():
                if saved[name].shape != tensor.shape:
                    raise ConfigError(
                        f"{path}: {name} is {tuple(saved[name].shape)}, this target needs "
                        f"{tuple(tensor.shape)} (a head for another target?)"
                    )
                tensor.copy_(saved[name].to(tensor.dtype))

    def _export_names(self) -> dict[str, torch.Tensor]:
        return {
            "fc.weight": self.fc.weight,
            **self.midlayer.export_names("midlayer"),
            "norm.weight": self.norm.weight,
            "lm_head.weight": self.lm_head.weight,
        }


def _read_export(folder: Path) -> tuple[Path, dict[str, torch.Tensor]]:
    from safetensors.torch import load_file

    from copilot_lsp.draft.export import WEIGHTS

    path = folder / WEIGHTS
    if not path.is_file():
        raise ConfigError(f"no EAGLE-3 weights at {path}")
    saved = load_file(str(path))
    if "d2t" not in saved:
        raise ConfigError(f"{path} has no d2t: not an EAGLE-3 head with a draft vocabulary")
    return path, saved


def _vocabulary(saved: dict[str, torch.Tensor]) -> torch.Tensor:
    """The draft vocabulary (target ids): vLLM maps draft id i to i + d2t[i]."""
    d2t = saved["d2t"].long()
    return d2t + torch.arange(len(d2t))
