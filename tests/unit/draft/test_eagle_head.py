"""The EAGLE head's training-time test computes what vLLM's chained drafting computes.

The reference below drafts the way vLLM's proposer does, one round at a time with an explicit
KV cache: target features fill the cache up to the verified position p, then each draft step
appends one entry computed from the previous step's output. Training unrolls the same thing
for every position at once with masks; the two must agree.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from copilot_lsp.draft.eagle import EagleHead, EagleLayer, exported_layers
from copilot_lsp.draft.export import WEIGHTS
from copilot_lsp.draft.medusa import MedusaHeads
from copilot_lsp.errors import ConfigError
from tests.unit.draft.conftest import SHAPE


def decode(
    head: EagleHead,
    caches: list[tuple[list[torch.Tensor], list[torch.Tensor]]],
    embed: torch.Tensor,
    feature: torch.Tensor,
    position: int,
) -> torch.Tensor:
    """One token through the head with explicit per-layer KV caches, as vLLM's proposer runs."""
    stream = head.fc(torch.cat((embed, feature), dim=-1)).view(1, 1, -1)
    for layer, (cache_k, cache_v) in zip(head.layers, caches, strict=True):
        assert isinstance(layer, EagleLayer)
        q, k, v = layer.qkv(layer.attention_input(stream), torch.tensor([position]))
        cache_k.append(k)
        cache_v.append(v)
        keys, values = torch.cat(cache_k, dim=2), torch.cat(cache_v, dim=2)
        scores = (q @ keys.transpose(-1, -2)) / SHAPE.head_dim**0.5  # [1, heads, 1, n]
        attn = torch.softmax(scores, dim=-1) @ values
        stream = stream + layer.o_proj(attn.transpose(1, 2).reshape(1, 1, -1))
        stream = stream + layer.mlp(stream)
    return stream[0, 0]


@pytest.mark.parametrize("layers", [1, 2])
def test_unrolled_steps_match_round_by_round_drafting(layers: int) -> None:
    torch.manual_seed(0)
    head = EagleHead(replace(SHAPE, num_layers=layers)).eval()
    t, steps = 9, 3
    embeds = torch.randn(1, t, 16)
    features = torch.randn(1, t, 16)
    with torch.no_grad():
        unrolled = head(embeds, features, steps)
        for p in range(t - steps + 1):  # verified position p; drafts at p, p+1, p+2
            caches: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = [
                ([], []) for _ in range(layers)
            ]
            for j in range(p + 1):  # the prefill/verification pass: target features
                out = decode(head, caches, embeds[0, j], features[0, j], j)
            for s in range(1, steps + 1):
                slot = p + s - 1
                if s > 1:
                    out = decode(head, caches, embeds[0, slot], out, slot)
                torch.testing.assert_close(out, unrolled[s - 1][0, slot], atol=1e-5, rtol=1e-4)


def test_a_head_grows_a_layer_that_starts_as_the_identity_and_never_shrinks(
    tmp_path: Path,
) -> None:
    torch.manual_seed(0)
    one = EagleHead(SHAPE)
    save_file(one.export_state(), str(tmp_path / WEIGHTS))
    assert exported_layers(tmp_path) == 1
    two = EagleHead(replace(SHAPE, num_layers=2))
    assert two.load_export(tmp_path) == [1]
    embeds, features = torch.randn(2, 7, 16), torch.randn(2, 7, 16)
    with torch.no_grad():
        for a, b in zip(one(embeds, features, 3), two(embeds, features, 3), strict=True):
            torch.testing.assert_close(a, b)
    names = set(two.export_state())
    assert "layers.1.input_layernorm.weight" in names
    assert "layers.0.input_layernorm.weight" not in names, "vLLM's first layer has no input norm"
    save_file(two.export_state(), str(tmp_path / WEIGHTS))
    assert exported_layers(tmp_path) == 2
    with pytest.raises(ConfigError, match="grow, not shrink"):
        EagleHead(SHAPE).load_export(tmp_path)


def test_export_names_are_the_ones_vllm_loads() -> None:
    names = set(EagleHead(SHAPE).export_state())
    assert "fc.weight" in names
    assert "layers.0.self_attn.q_proj.weight" in names
    assert "layers.0.post_attention_layernorm.weight" in names
    assert not any("input_layernorm" in n or "embed_tokens" in n or "lm_head" in n for n in names)
    assert EagleHead(SHAPE).export_state()["fc.weight"].shape == (16, 32)


def test_medusa_heads_start_as_the_identity_and_export_blocks_only() -> None:
    heads = MedusaHeads(16, 3)
    x = torch.randn(2, 5, 16)
    assert all(torch.equal(out, x) for out in heads(x))
    assert set(heads.export_state()) == {f"blocks.{k}.layers.0.weight" for k in range(3)}


def test_distribution_loss_is_lowest_when_the_head_matches_the_target() -> None:
    from copilot_lsp.draft.objectives import OutputLayer

    torch.manual_seed(0)
    out = OutputLayer(torch.randn(50, 16), vocab=torch.arange(0, 50, 2))
    teacher = torch.randn(3, 5, 16)
    labels = (teacher @ out.full.T).argmax(-1)
    exact = out.loss(teacher, labels, teacher)
    for scale in (0.0, 0.5, 2.0):
        assert out.loss(teacher * scale, labels, teacher) > exact
    assert out.loss(torch.randn(3, 5, 16), labels, teacher) > exact
    # Without a teacher it is the greedy cross-entropy: labels outside the vocabulary are skipped.
    assert torch.isfinite(out.loss(teacher, labels))


def test_serving_rounds_start_after_the_accepted_drafts_and_the_bonus_token() -> None:
    from copilot_lsp.draft.objectives import serving_rounds

    # Easy start (3 right from slots 0-3), then hard: the engine crosses the easy stretch in
    # one round and spends a round on each hard slot.
    assert serving_rounds(torch.tensor([3, 3, 3, 3, 0, 1, 0, 0])) == [3, 0, 1, 0]
    assert serving_rounds(torch.tensor([0, 0, 0])) == [0, 0, 0]
    assert serving_rounds(torch.tensor([], dtype=torch.long)) == []


def test_a_checkpoint_of_another_model_layout_is_refused_clearly(tmp_path: Path) -> None:
    from copilot_lsp.draft.train import STATE, TrainOptions, _resume, _save

    options = TrainOptions(method="eagle", target=tmp_path / "t", out=tmp_path / "out")
    one = EagleHead(SHAPE)
    optimizer = torch.optim.AdamW(one.parameters())
    _save(options.out / STATE, options, one, optimizer, 5, 1.0)
    assert _resume(options, EagleHead(SHAPE), optimizer, options.out / STATE, print)[0] == 5
    # Same options, another layout (as a checkpoint from before heads had a layer list).
    two = EagleHead(replace(SHAPE, num_layers=2))
    with pytest.raises(ConfigError, match="another layout"):
        _resume(options, two, torch.optim.AdamW(two.parameters()), options.out / STATE, print)
