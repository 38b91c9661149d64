"""Offline serving, never on the keystroke path: engine profiles, `engine up/down/status`,
the embedded model's preparation, draft installation and the `vllm serve` command line."""
