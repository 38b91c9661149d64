"""`copilot-lsp bench index`: the workspace index at scale (files and lines per second,
memory, retrieval per request, keystrokes while it is built)."""
