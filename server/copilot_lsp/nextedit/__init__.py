"""Next-edit suggestions: the edit history, the window, the prompt formats, the diff of the
model's rewrite and the rules that gate it (see nextedit/service.py)."""
