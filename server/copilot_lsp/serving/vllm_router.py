"""How vllm-router (PyPI `vllm-router`, Rust core) fronts the vLLM replicas: one set of flags
for deploy/kubernetes and for `make test-cluster`, which runs the same router for real.

Measured with vllm-router 0.1.17 (docs/serving.md, `make test-cluster`):
- `cache_aware` keeps a developer's keystrokes on the replica that holds their prompt prefix in
  its KV cache. It asks each replica for token ids (`POST /v1/completions/render`), which vLLM
  answers only when started with `--enable-scale-out`; without it routing silently falls back
  to one replica. Every GPU profile's `vllm serve` line has the flag (serving/vllm_command.py).
  In `make test-cluster` it spread concurrent requests over both replicas, but with idle
  replicas it did not reliably send a prompt back to the replica that prefilled it.
- The default health check (every 60 s, 3 failures) noticed a dead replica after ~2.5 min, and
  the circuit breaker kept a restarted one out for its 60 s timeout: both are shortened here.
- The router forwards the client's `Authorization` header to the replica, which checks it
  (vLLM `--api-key`); `--api-key` on the router is the key of its own calls to the replicas
  (render, tokenize), so it must be the replicas' key.
"""

from __future__ import annotations

ROUTER_PORT = 8080
METRICS_PORT = 29000

ROUTER_FLAGS: tuple[str, ...] = (
    "--policy",
    "cache_aware",
    "--health-check-interval-secs",
    "2",
    "--health-failure-threshold",
    "2",
    "--health-success-threshold",
    "1",
    "--cb-timeout-duration-secs",
    "10",
)
"""Routing policy, health checks and circuit breaker (the rest stays at vllm-router's defaults)."""


def discovery_args(
    engine_port: int, selector: dict[str, str], namespace_ref: str, api_key_ref: str
) -> list[str]:
    """vllm-router in Kubernetes: replicas found by label in the router's own namespace."""
    return [
        "--host",
        "0.0.0.0",
        "--port",
        str(ROUTER_PORT),
        "--service-discovery",
        "--selector",
        *(f"{key}={value}" for key, value in sorted(selector.items())),
        "--service-discovery-port",
        str(engine_port),
        "--service-discovery-namespace",
        namespace_ref,
        *ROUTER_FLAGS,
        "--api-key",
        api_key_ref,
        "--prometheus-host",
        "0.0.0.0",
        "--prometheus-port",
        str(METRICS_PORT),
    ]
