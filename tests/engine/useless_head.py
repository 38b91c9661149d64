"""An EAGLE or EAGLE-3 head that proposes nothing the target accepts: the shipped one, its
input layer's columns shuffled, as a head trained for another target reads the hidden states
in a basis it does not know. Its recorded fingerprint is changed too, so `engine up` refuses
it unless told `--allow-draft-mismatch` (the way such a head gets served). Measured on
held-out editing traffic: acceptance 0.000 over 138 drafts (EAGLE), where the shipped head
reads 0.29."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from copilot_lsp.draft.embedded import shipped_dir
from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY


def useless_eagle_head(out: Path, head: str = "eagle") -> Path:
    """The shipped `head` (eagle, eagle3) made useless, written to `out`."""
    shutil.copytree(shipped_dir(f"embedded-draft:{head}"), out)
    tensors = load_file(str(out / "model.safetensors"))
    # [hidden, 2 x hidden] for EAGLE (the token embedding and the hidden state), [hidden,
    # 3 x hidden] for EAGLE-3 (three of the target's layers).
    fc = tensors["fc.weight"]
    order = torch.randperm(fc.shape[1], generator=torch.Generator().manual_seed(0))
    tensors["fc.weight"] = fc[:, order].contiguous()
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    config[FINGERPRINT_KEY] = "v1:another-target0000000"
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return out
