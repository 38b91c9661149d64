"""A fingerprint of a target model, so a draft trained for one target is never served with another.

A draft head learns the target's hidden states; served beside a different target (another
revision, another fine-tune) it loads fine and silently accepts almost nothing. The fingerprint
hashes the architecture fields of config.json and a few weight tensors read straight from the
safetensors files (numpy, no torch: `engine up` checks it before every start).

Weights are hashed after rounding to bfloat16, so the same model saved in float32 and in
bfloat16 has one fingerprint (a draft trained on one dtype serves the other), while any real
change of the weights changes it.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from pathlib import Path
from typing import Any

from copilot_lsp.errors import ConfigError

FINGERPRINT_KEY = "copilot_lsp_target_fingerprint"
# Bump when what is hashed changes; older fingerprints then read as a mismatch, on purpose.
SCHEME = "v1"

_CONFIG_FIELDS = (
    "model_type",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "rms_norm_eps",
    "rope_theta",
    "rope_parameters",
    "rope_scaling",
    "tie_word_embeddings",
)
# Small tensors that every fine-tune touches, plus the first rows of the embedding table.
_ROWS = 64


def _tensor_names(num_layers: int) -> list[str]:
    last = num_layers - 1
    return [
        "model.norm.weight",
        "model.layers.0.input_layernorm.weight",
        f"model.layers.{last}.post_attention_layernorm.weight",
        f"model.layers.{last}.input_layernorm.weight",
        "model.embed_tokens.weight",
    ]


def target_fingerprint(model_dir: Path) -> str:
    """`v1:<sha256 prefix>` of the target in `model_dir` (config.json + safetensors)."""
    config = read_json(model_dir / "config.json")
    digest = hashlib.sha256()
    fields = {key: config.get(key) for key in _CONFIG_FIELDS if key in config}
    digest.update(json.dumps(fields, sort_keys=True).encode())
    layers = config.get("num_hidden_layers")
    if not isinstance(layers, int) or layers < 1:
        raise ConfigError(f"{model_dir}/config.json has no num_hidden_layers")
    index = _tensor_index(model_dir)
    for name in _tensor_names(layers):
        if name not in index:
            raise ConfigError(f"{model_dir} has no tensor {name}; cannot fingerprint it")
        digest.update(name.encode())
        digest.update(_bf16_bytes(*index[name]))
    return f"{SCHEME}:{digest.hexdigest()[:24]}"


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return data


def _tensor_index(model_dir: Path) -> dict[str, tuple[Path, dict[str, Any], int]]:
    """tensor name -> (file, header entry, data start offset), across shards."""
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise ConfigError(f"{model_dir} holds no *.safetensors weights")
    index: dict[str, tuple[Path, dict[str, Any], int]] = {}
    for path in files:
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(length))
        for name, entry in header.items():
            if name != "__metadata__":
                index[name] = (path, entry, 8 + length)
    return index


def _bf16_bytes(path: Path, entry: dict[str, Any], start: int) -> bytes:
    """The first rows of a tensor, as bfloat16 bit patterns (round to nearest even)."""
    import numpy as np  # here: the LSP server's own install does not need numpy

    dtype = entry["dtype"]
    shape = entry["shape"]
    begin, end = entry["data_offsets"]
    item = {"F32": 4, "BF16": 2, "F16": 2}.get(dtype)
    if item is None:
        raise ConfigError(f"cannot fingerprint a {dtype} tensor in {path}")
    row = math.prod(shape[1:]) if len(shape) > 1 else int(shape[0])
    rows = min(_ROWS, int(shape[0])) if len(shape) > 1 else 1
    count = min(rows * row, (end - begin) // item)
    with path.open("rb") as fh:
        fh.seek(start + begin)
        raw = fh.read(count * item)
    if dtype == "BF16":
        return np.frombuffer(raw, dtype="<u2").tobytes()
    values = np.frombuffer(raw, dtype="<f4" if dtype == "F32" else "<f2").astype("<f4")
    bits = values.view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()
