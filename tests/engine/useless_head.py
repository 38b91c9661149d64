"""An EAGLE head that proposes nothing the target accepts: the shipped one, its input layer's
columns shuffled, as a head trained for another target reads the hidden states in a basis it
does not know. Its recorded fingerprint is changed too, so `engine up` refuses it unless told
`--allow-draft-mismatch` (the way such a head gets served). Measured on held-out editing
traffic: acceptance 0.000 over 138 drafts, where the shipped head reads 0.29."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from copilot_lsp.draft.embedded import shipped_dir
from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY


def useless_eagle_head(out: Path) -> Path:
    shutil.copytree(shipped_dir("embedded-draft:eagle"), out)
    tensors = load_file(str(out / "model.safetensors"))
    fc = tensors["fc.weight"]  # [hidden, 2 x hidden]: the token embedding and the hidden state
    order = torch.randperm(fc.shape[1], generator=torch.Generator().manual_seed(0))
    tensors["fc.weight"] = fc[:, order].contiguous()
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    config[FINGERPRINT_KEY] = "v1:another-target0000000"
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return out
