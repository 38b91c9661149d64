"""Offline serving, never on the keystroke path: engine profiles, `engine up/down/status`,
the embedded model's preparation, draft installation, the `vllm serve` command line and the
deploy/ manifests generated from the profiles."""
