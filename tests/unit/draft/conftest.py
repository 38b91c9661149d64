"""What the draft tests share: the shape of a tiny EAGLE head (CPU-fast, vLLM's layout)."""

from __future__ import annotations

from copilot_lsp.draft.eagle import EagleShape

SHAPE = EagleShape(
    hidden_size=16,
    intermediate_size=32,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=4,
    rms_norm_eps=1e-6,
    rope_theta=10000.0,
)
