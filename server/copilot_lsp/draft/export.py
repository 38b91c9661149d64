"""Draft checkpoints in the format vLLM 0.32 loads (config.json + model.safetensors).

Every draft records the fingerprint of its target in config.json (`copilot_lsp_target_
fingerprint`) and in the sidecar `copilot_lsp_draft.json`, which also keeps how it was trained
and what it measured. `engine up` compares the fingerprint with the target it is about to serve.

Medusa: each head needs an output layer over the full vocabulary. vLLM's `original_lm_head`
lets all heads share one, loaded from `lm_heads.0.weight`; that tensor is the target's own
lm_head (56 MB here), so it is copied from the target when a servable folder is assembled and
never stored with the trained heads.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY, read_json
from copilot_lsp.errors import ConfigError

SIDECAR = "copilot_lsp_draft.json"
WEIGHTS = "model.safetensors"
MEDUSA_HEADS = "medusa_heads.safetensors"
EAGLE3_ARCHITECTURE = "LlamaForCausalLMEagle3"
_TORCH_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def eagle_config(
    target_config: dict[str, Any], fingerprint: str, dtype: str, *, layers: int = 1
) -> dict[str, Any]:
    """The target's config with the head's layers: vLLM builds them from these fields."""
    config = {
        key: value
        for key, value in target_config.items()
        if key not in ("_name_or_path", "quantization_config", "transformers_version")
    }
    config.update(
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        num_hidden_layers=layers,
        dtype=dtype,
    )
    config[FINGERPRINT_KEY] = fingerprint
    return config


def eagle3_config(
    target_config: dict[str, Any],
    fingerprint: str,
    dtype: str,
    *,
    aux_layers: tuple[int, ...],
    draft_vocab: int,
) -> dict[str, Any]:
    """vLLM's Eagle3LlamaForCausalLM: one layer, its own output layer over `draft_vocab` tokens
    (`d2t` in the weights maps them to the target's), reading the target's `aux_layers`."""
    config = eagle_config(target_config, fingerprint, dtype, layers=1)
    config.update(
        architectures=[EAGLE3_ARCHITECTURE],
        draft_vocab_size=draft_vocab,
        # The head's lm_head is its own (over the draft vocabulary), never the embedding.
        tie_word_embeddings=False,
        eagle_config={
            "eagle_aux_hidden_state_layer_ids": list(aux_layers),
            "use_aux_hidden_state": True,
        },
    )
    return config


def medusa_config(
    hidden_size: int, vocab_size: int, num_heads: int, fingerprint: str, dtype: str
) -> dict[str, Any]:
    return {
        "model_type": "medusa",
        "architectures": ["MedusaModel"],
        "hidden_size": hidden_size,
        "vocab_size": vocab_size,
        "num_heads": num_heads,
        "num_hidden_layers": 1,
        "truncated_vocab_size": vocab_size,
        # One shared output layer (the target's) instead of a full copy per head.
        "original_lm_head": True,
        "dtype": dtype,
        FINGERPRINT_KEY: fingerprint,
    }


def write_draft(
    out: Path,
    config: dict[str, Any],
    tensors: dict[str, torch.Tensor],
    sidecar: dict[str, Any],
    *,
    weights_name: str = WEIGHTS,
) -> None:
    """Write config, weights (in config["dtype"]) and sidecar; files are replaced atomically."""
    out.mkdir(parents=True, exist_ok=True)
    dtype = _TORCH_DTYPES[str(config["dtype"])]
    # Index tensors (EAGLE-3's d2t, t2d) keep their integer and boolean types.
    converted = {
        name: (tensor.to(dtype) if tensor.is_floating_point() else tensor).contiguous()
        for name, tensor in tensors.items()
    }
    _atomic(out / weights_name, lambda tmp: save_file(converted, str(tmp)))
    _write_json(out / "config.json", config)
    _write_json(out / SIDECAR, {**sidecar, FINGERPRINT_KEY: config[FINGERPRINT_KEY]})


def assemble_medusa(heads_dir: Path, target_dir: Path, out: Path) -> Path:
    """A servable Medusa folder: the trained heads plus the target's lm_head as lm_heads.0."""
    config = read_json(heads_dir / "config.json")
    heads = load_file(str(heads_dir / MEDUSA_HEADS))
    dtype = _TORCH_DTYPES[str(config.get("dtype", "bfloat16"))]
    lm_head = target_tensor(target_dir, ("lm_head.weight", "model.embed_tokens.weight"))
    tensors = {name: tensor.to(dtype) for name, tensor in heads.items()}
    tensors["lm_heads.0.weight"] = lm_head.to(dtype).contiguous()
    out.mkdir(parents=True, exist_ok=True)
    _atomic(out / WEIGHTS, lambda tmp: save_file(tensors, str(tmp)))
    _write_json(out / "config.json", config)
    if (heads_dir / SIDECAR).exists():
        shutil.copyfile(heads_dir / SIDECAR, out / SIDECAR)
    return out


def target_tensor(target_dir: Path, names: tuple[str, ...]) -> torch.Tensor:
    """The first of `names` found in the target's safetensors files (lm_head, else tied)."""
    for path in sorted(target_dir.glob("*.safetensors")):
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(length))
        for name in names:
            if name in header:
                from safetensors import safe_open

                with safe_open(str(path), framework="pt") as handle:
                    tensor: torch.Tensor = handle.get_tensor(name)
                    return tensor
    raise ConfigError(f"{target_dir} has none of {', '.join(names)}")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _atomic(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2) + "\n", "utf-8"))


def _atomic(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)
