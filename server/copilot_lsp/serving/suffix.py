"""Suffix decoding needs Arctic Inference's suffix-tree extension; say how to get it.

The registry has only an sdist of `arctic-inference`; `make setup` builds its C++ extension
(nanobind) from it, and a failed build leaves the rest of the setup working. A suffix profile
is then refused before vLLM starts, with the commands that build it, instead of vLLM's own
ImportError deep in a log.
"""

from __future__ import annotations

import importlib

from copilot_lsp.errors import LauncherError

MODULE = "arctic_inference.suffix_decoding"
HOW_TO_GET_IT = (
    "suffix decoding needs the `arctic_inference.suffix_decoding` extension, which is not "
    "installed. Build it from the registry's sdist into this environment:\n"
    "  PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install 'nanobind==2.9.2' cmake ninja\n"
    "  PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install --no-deps --no-build-isolation "
    "arctic-inference==0.3.0\n"
    "(`make setup` tries the same; a C++ compiler is needed). Or choose a profile without "
    "suffix decoding, e.g. local-cpu-ngram."
)


def _import_error() -> ImportError | None:
    try:
        importlib.import_module(MODULE)
    except ImportError as error:
        return error
    return None


def suffix_decoding_installed() -> bool:
    return _import_error() is None


def require_suffix_decoding() -> None:
    """Raise LauncherError with the build commands when the extension cannot be imported."""
    error = _import_error()
    if error is not None:
        raise LauncherError(f"{HOW_TO_GET_IT}\n(import failed: {error})")
