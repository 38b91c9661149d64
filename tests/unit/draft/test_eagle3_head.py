"""The EAGLE-3 head's training-time test computes what vLLM's chained EAGLE-3 drafting computes.

The reference drafts one round at a time with an explicit KV cache, the way vLLM's proposer runs
`llama_eagle3.py`: the target's auxiliary streams go through `fc` for the verified positions,
and each further draft step feeds the head's own pre-norm output back in, bypassing `fc`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from copilot_lsp.draft import export
from copilot_lsp.draft.eagle3 import Eagle3Head, default_aux_layers
from copilot_lsp.draft.objectives import Batch
from copilot_lsp.draft.recipes.eagle3 import eagle3_acceptance, eagle3_loss
from copilot_lsp.errors import ConfigError
from tests.unit.draft.conftest import SHAPE

AUX = (2, 3, 5)
VOCAB = torch.tensor([0, 3, 4, 7, 9, 12, 20, 31])
TARGET_VOCAB = 40


def decode(
    head: Eagle3Head,
    cache: tuple[list[torch.Tensor], list[torch.Tensor]],
    embed: torch.Tensor,
    hidden: torch.Tensor,
    position: int,
) -> torch.Tensor:
    """One token through vLLM's EAGLE-3 layer with an explicit KV cache; the pre-norm output."""
    layer = head.midlayer
    assert layer.input_layernorm is not None
    x = torch.cat((layer.input_layernorm(embed), layer.hidden_norm(hidden))).view(1, 1, -1)
    q, k, v = layer.qkv(x, torch.tensor([position]))
    cache[0].append(k)
    cache[1].append(v)
    keys, values = torch.cat(cache[0], dim=2), torch.cat(cache[1], dim=2)
    scores = (q @ keys.transpose(-1, -2)) / SHAPE.head_dim**0.5
    attn = torch.softmax(scores, dim=-1) @ values
    stream = hidden + layer.o_proj(attn.transpose(1, 2).reshape(-1))
    return stream + layer.mlp(stream)


def test_unrolled_steps_match_round_by_round_drafting() -> None:
    torch.manual_seed(0)
    head = Eagle3Head(SHAPE, AUX, VOCAB).eval()
    t, steps = 9, 3
    embeds = torch.randn(1, t, 16)
    aux = torch.randn(1, t, 48)
    with torch.no_grad():
        unrolled = head(embeds, aux, steps)
        for p in range(t - steps + 1):  # verified position p; drafts at p, p+1, p+2
            cache: tuple[list[torch.Tensor], list[torch.Tensor]] = ([], [])
            for j in range(p + 1):  # the target's streams, through fc
                out = decode(head, cache, embeds[0, j], head.fc(aux[0, j]), j)
            for s in range(1, steps + 1):
                slot = p + s - 1
                if s > 1:  # the head's own pre-norm output, not through fc
                    out = decode(head, cache, embeds[0, slot], out, slot)
                torch.testing.assert_close(out, unrolled[s - 1][0, slot], atol=1e-5, rtol=1e-4)


def test_predictions_are_target_ids_and_the_loss_skips_undraftable_labels() -> None:
    torch.manual_seed(0)
    head = Eagle3Head(SHAPE, AUX, VOCAB)
    out = head(torch.randn(2, 6, 16), torch.randn(2, 6, 48), 2)
    assert set(head.predict(out[0]).unique().tolist()) <= set(VOCAB.tolist())
    index = head.draft_labels(TARGET_VOCAB)
    assert index[31] == 7 and index[1] == -100
    embed = torch.randn(TARGET_VOCAB, 16)
    tokens = torch.randint(0, TARGET_VOCAB, (2, 6))
    undraftable = Batch(tokens, torch.randn(2, 6, 48), torch.full((2, 6), 1))
    loss, parts = eagle3_loss(head, embed, index, undraftable, 2, 0.8)
    assert float(loss.detach()) == 0.0, (
        "every label is outside the draft vocabulary: nothing to learn"
    )
    draftable = Batch(tokens, undraftable.hidden, torch.full((2, 6), 9))
    loss, parts = eagle3_loss(head, embed, index, draftable, 2, 0.8)
    assert torch.isfinite(loss) and set(parts) == {"tok1", "tok2"}


def test_training_raises_held_out_agreement_on_a_learnable_target() -> None:
    """The label is a fixed function of the next token: the head must learn to copy it."""
    torch.manual_seed(0)
    head = Eagle3Head(SHAPE, AUX, VOCAB)
    embed = torch.randn(TARGET_VOCAB, 16)
    tokens = VOCAB[torch.randint(0, len(VOCAB), (16, 12))]
    batch = Batch(tokens, torch.randn(16, 12, 48), tokens)  # argmax[i] = the token at i
    index = head.draft_labels(TARGET_VOCAB)
    before = eagle3_acceptance(head, embed, [batch], 2).step_accuracy[0]
    optimizer = torch.optim.AdamW(head.parameters(), lr=3e-3)
    for _ in range(150):
        loss, _ = eagle3_loss(head, embed, index, batch, 2, 0.8)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    after = eagle3_acceptance(head, embed, [batch], 2)
    assert after.step_accuracy[0] > max(0.9, before + 0.3)


def test_export_has_vllm_names_and_an_offset_d2t_and_loads_back(tmp_path: Path) -> None:
    torch.manual_seed(0)
    head = Eagle3Head(SHAPE, AUX, VOCAB)
    config = export.eagle3_config(
        {"model_type": "llama", "vocab_size": TARGET_VOCAB, "tie_word_embeddings": True},
        "v1:abc",
        "bfloat16",
        aux_layers=AUX,
        draft_vocab=len(VOCAB),
    )
    export.write_draft(tmp_path, config, head.export_state(TARGET_VOCAB), {"method": "eagle3"})
    saved = load_file(str(tmp_path / export.WEIGHTS))
    assert saved["midlayer.self_attn.q_proj.weight"].shape == (16, 32), "q reads 2H"
    assert saved["fc.weight"].shape == (16, 48) and saved["lm_head.weight"].shape == (8, 16)
    assert {"midlayer.hidden_norm.weight", "midlayer.input_layernorm.weight", "norm.weight"} <= set(
        saved
    )
    assert saved["midlayer.mlp.up_proj.weight"].dtype == torch.bfloat16
    # vLLM maps draft id i to target id i + d2t[i].
    assert saved["d2t"].dtype == torch.int64
    assert torch.equal(saved["d2t"] + torch.arange(len(VOCAB)), VOCAB)
    assert saved["t2d"].dtype == torch.bool and int(saved["t2d"].sum()) == len(VOCAB)
    assert config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert config["draft_vocab_size"] == 8 and config["tie_word_embeddings"] is False
    assert config["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [2, 3, 5]
    assert torch.equal(Eagle3Head.from_export(SHAPE, AUX, tmp_path).vocab, VOCAB)
    again = Eagle3Head(SHAPE, AUX, VOCAB)
    again.load_export(tmp_path)
    torch.testing.assert_close(again.fc.weight, head.fc.weight.to(torch.bfloat16).float())
    with pytest.raises(ConfigError, match="another draft vocabulary"):
        Eagle3Head(SHAPE, AUX, VOCAB[:-1]).load_export(tmp_path)


def test_bad_vocabularies_and_targets_are_refused() -> None:
    with pytest.raises(ConfigError, match="ascending"):
        Eagle3Head(SHAPE, AUX, torch.tensor([3, 1]))
    with pytest.raises(ConfigError, match="at least 6 layers"):
        default_aux_layers(4)
    assert default_aux_layers(30) == (2, 15, 27)
