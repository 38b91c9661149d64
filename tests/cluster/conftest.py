"""The cluster tier: real engines behind the real vllm-router (`make test-cluster`).

Deselected from `make test` by the `cluster` marker (pyproject's addopts: `-m "not cluster"`);
every test module here sets `pytestmark = pytest.mark.cluster`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.harness import STOP_GRACE_S, Cluster, Replica, Router, stop_groups


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # $COPILOT_LSP_CLUSTER_LOGS keeps the engines' and the router's logs for a post-mortem.
    kept = os.environ.get("COPILOT_LSP_CLUSTER_LOGS")
    logs = Path(kept) if kept else tmp_path_factory.mktemp("cluster-logs")
    logs.mkdir(parents=True, exist_ok=True)
    replicas = [Replica("replica-a", logs), Replica("replica-b", logs)]
    router: Router | None = None
    started = time.monotonic()
    try:
        for replica in replicas:  # both load at once: the start-up is mostly waiting
            replica.spawn()
        for replica in replicas:
            replica.wait()
        router = Router([replica.url for replica in replicas], logs)
        router.start()
        yield Cluster(replicas, router, time.monotonic() - started)
    finally:
        # All at once and briefly, also when interrupted while the engines start (Ctrl-C;
        # SIGTERM, which tests/conftest.py turns into one): tests/engine/test_interrupts.py.
        engines = [replica.process for replica in replicas]
        stop_groups([router.process if router else None, *engines], STOP_GRACE_S)
