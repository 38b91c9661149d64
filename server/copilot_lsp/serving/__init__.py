"""The offline side of serving: the commands and manifests that run vLLM, never on the
keystroke path."""
