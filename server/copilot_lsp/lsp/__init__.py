"""The LSP layer: the only package that imports pygls."""
