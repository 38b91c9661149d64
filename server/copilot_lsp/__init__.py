"""copilot-lsp: inline code completions from a self-hosted vLLM engine, over LSP."""

__version__ = "0.1.0"
