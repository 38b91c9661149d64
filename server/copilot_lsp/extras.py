"""Which optional extra provides a heavy dependency, for a clear message when one is missing.

The language server itself needs none of these; `engine`, `draft` and `bench` commands do.
Without them a command used to end in a bare ModuleNotFoundError traceback.
"""

from __future__ import annotations

from copilot_lsp.errors import CopilotLspError

EXTRA_OF = {
    "torch": "engine-cpu",
    "transformers": "engine-cpu",
    "vllm": "engine-cpu",
    "gguf": "engine-cpu",
    "accelerate": "engine-cpu",
    "safetensors": "engine-cpu",
    "numpy": "engine-cpu",
    "tqdm": "engine-cpu",
    "matplotlib": "bench",
}
"""Top-level module -> the extra of pyproject.toml that installs it."""


class MissingExtra(CopilotLspError):
    """A command needs a package of an optional extra that is not installed."""


def missing_extra(error: ModuleNotFoundError, command: str) -> MissingExtra | None:
    """The message for `error` raised while running `command`, if an extra provides it."""
    module = (error.name or "").split(".")[0]
    extra = EXTRA_OF.get(module)
    if extra is None:
        return None
    return MissingExtra(f"{command} needs {module}: pip install 'copilot-lsp[{extra}]'")
