"""Target fingerprints and the draft/target desync check that `engine up` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY, target_fingerprint
from copilot_lsp.errors import ConfigError, LauncherError
from copilot_lsp.serving import launcher
from copilot_lsp.serving.drafts import check_draft, draft_path_for, recorded_fingerprint
from copilot_lsp.serving.profiles import Profile

CONFIG = {
    "model_type": "llama",
    "hidden_size": 8,
    "intermediate_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 32,
    "tie_word_embeddings": True,
}


def weights(seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    names = {
        "model.embed_tokens.weight": (32, 8),
        "model.norm.weight": (8,),
        "model.layers.0.input_layernorm.weight": (8,),
        "model.layers.1.input_layernorm.weight": (8,),
        "model.layers.1.post_attention_layernorm.weight": (8,),
    }
    return {name: torch.randn(shape, generator=generator) for name, shape in names.items()}


def make_target(folder: Path, tensors: dict[str, torch.Tensor], dtype: torch.dtype) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({**CONFIG, "dtype": str(dtype)}))
    save_file({k: v.to(dtype) for k, v in tensors.items()}, str(folder / "model.safetensors"))
    return folder


def make_draft(folder: Path, fingerprint: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(
        json.dumps({**CONFIG, "num_hidden_layers": 1, FINGERPRINT_KEY: fingerprint})
    )
    return folder


def test_fingerprint_is_the_same_in_float32_and_bfloat16(tmp_path: Path) -> None:
    tensors = weights()
    f32 = target_fingerprint(make_target(tmp_path / "f32", tensors, torch.float32))
    bf16 = target_fingerprint(make_target(tmp_path / "bf16", tensors, torch.bfloat16))
    assert f32 == bf16
    assert f32.startswith("v1:")


def test_fingerprint_changes_with_the_weights_or_the_config(tmp_path: Path) -> None:
    base = target_fingerprint(make_target(tmp_path / "a", weights(0), torch.float32))
    tuned = weights(0)
    tuned["model.norm.weight"] = tuned["model.norm.weight"] * 1.5
    assert target_fingerprint(make_target(tmp_path / "b", tuned, torch.float32)) != base
    other = make_target(tmp_path / "c", weights(0), torch.float32)
    (other / "config.json").write_text(json.dumps({**CONFIG, "vocab_size": 33}))
    assert target_fingerprint(other) != base


def test_fingerprint_of_a_folder_without_weights_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(ConfigError, match="safetensors"):
        target_fingerprint(tmp_path)


def test_matching_draft_passes_and_mismatch_is_refused(tmp_path: Path) -> None:
    target = make_target(tmp_path / "target", weights(0), torch.bfloat16)
    good = make_draft(tmp_path / "good", target_fingerprint(target))
    check_draft(target, good)
    stale = make_draft(tmp_path / "stale", "v1:000000000000000000000000")
    assert recorded_fingerprint(stale) == "v1:000000000000000000000000"
    with pytest.raises(LauncherError, match="--allow-draft-mismatch") as raised:
        check_draft(target, stale)
    assert "v1:000000000000000000000000" in str(raised.value)
    said: list[str] = []
    check_draft(target, stale, allow_mismatch=True, log=said.append)
    assert said and said[0].startswith("WARNING")


def test_drafts_without_a_fingerprint_are_served_with_a_note(tmp_path: Path) -> None:
    target = make_target(tmp_path / "target", weights(0), torch.float32)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "config.json").write_text(json.dumps(CONFIG))
    said: list[str] = []
    check_draft(target, foreign, log=said.append)
    assert "no target fingerprint" in said[0]


def profile(target: Path, draft: str) -> Profile:
    return Profile.model_validate(
        {
            "name": "t",
            "model": {"source": str(target), "served_name": "m"},
            "server": {"port": 8291},
            "speculative": {"method": "eagle", "model": draft, "num_speculative_tokens": 3},
        }
    )


def test_engine_up_refuses_a_mismatched_draft_before_starting_anything(tmp_path: Path) -> None:
    target = make_target(tmp_path / "target", weights(0), torch.float32)
    stale = make_draft(tmp_path / "stale", "v1:ffffffffffffffffffffffff")
    with pytest.raises(LauncherError, match="trained for a target with fingerprint"):
        launcher.engine_up(profile(target, str(stale)), state_dir=tmp_path / "state")
    assert not (tmp_path / "state" / "engine.json").exists()
    assert not list((tmp_path / "state").glob("engine-*.log"))


def test_embedded_draft_names_resolve_for_the_command_line(tmp_path: Path) -> None:
    target = tmp_path / "smollm2"
    eagle = draft_path_for(profile(target, "embedded-draft:eagle"), str(target))
    assert eagle is not None and eagle.endswith("weights/smollm2-eagle")
    with pytest.raises(ConfigError, match="unknown embedded draft"):
        draft_path_for(profile(target, "embedded-draft:nope"), str(target))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"skip_tokens": 100}, "--skip-tokens"),
        ({"skip_tokens": -256}, "--skip-tokens"),
        ({"token_loss": "soft"}, "--token-loss"),
        ({"draft_steps": 6}, "--draft-steps"),
        ({"layers": 0}, "--layers"),
        ({"layers": 2, "method": "medusa"}, "--layers applies to EAGLE"),
        ({"layers": 2, "method": "eagle3"}, "EAGLE-3 head has one layer"),
        ({"token_vocab": 0, "method": "eagle3"}, "its own vocabulary"),
        ({"token_loss": "distribution", "method": "eagle3"}, "greedy tokens"),
        ({"init": Path("/nowhere"), "method": "medusa"}, "Medusa heads train from scratch"),
    ],
)
def test_bad_training_options_are_refused_before_any_work(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    from dataclasses import replace

    from copilot_lsp.draft.train import TrainOptions, run

    options = replace(
        TrainOptions(method="eagle", target=tmp_path / "no-model", out=tmp_path / "out"),
        **change,  # type: ignore[arg-type]
    )
    with pytest.raises(ConfigError, match=message):
        run(options, log=lambda _: None)
    assert not (tmp_path / "out").exists()


def test_training_report_renders_positions_serving_order_and_layers() -> None:
    from copilot_lsp.draft.render import render_report

    report = {
        "method": "eagle",
        "target": "/models/t",
        "target_fingerprint": "v1:abc",
        "options": {"layers": 2},
        "corpus": {"train_tokens": 100, "heldout_tokens": 10, "features": "/cache"},
        "train_seconds": 12.0,
        "heldout": {
            "acceptance_rate": 0.5,
            "mean_accepted_length": 2.5,
            "per_position": [0.7, 0.5, 0.3],
            "step_accuracy": [0.7, 0.6, 0.6],
            "serving": {
                "acceptance_rate": 0.4,
                "mean_accepted_length": 2.2,
                "per_position": [0.6, 0.4, 0.2],
            },
        },
    }
    text = render_report(report)
    assert text.startswith("eagle draft (2 layers) for /models/t")
    assert "        2       0.600        0.500       0.400" in text
    assert "in serving order (rounds as the engine runs them): acceptance rate 0.400" in text
    one_layer = render_report({**report, "options": {}})
    assert one_layer.startswith("eagle draft for")
    eagle3 = render_report(
        {**report, "method": "eagle3", "aux_layers": [2, 15, 27], "options": {"token_vocab": 8192}}
    )
    assert eagle3.startswith(
        "eagle3 draft (reads target layers 2, 15, 27; 8192-token draft vocabulary) for /models/t"
    )
