"""`copilot-lsp`: the language server (`--stdio`) and the commands around it."""

from copilot_lsp.cli.main import main

__all__ = ["main"]
