"""The Grafana dashboard and the Prometheus rules query metrics the real engine exports.

Checked against the /metrics of the real vLLM CPU engine (the embedded EAGLE profile), after
it has served a completion, rather than against a list typed into a test.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest
import yaml

from tests.conftest import REPO
from tests.engine.conftest import RealEngine

pytestmark = pytest.mark.engine

MONITORING = REPO / "configs" / "monitoring"
NAME = re.compile(r"vllm:[A-Za-z0-9_:]+")


def exported_names(real_engine: RealEngine) -> set[str]:
    # One completion first, so that the counters of speculative decoding have samples.
    response = httpx.post(
        f"{real_engine.url}/completions",
        json={"prompt": "def add(a, b):\n", "max_tokens": 8, "temperature": 0},
        timeout=120,
    )
    response.raise_for_status()
    exposition = httpx.get(f"{real_engine.root}/metrics", timeout=10).text
    return {
        match.group(0)
        for line in exposition.splitlines()
        if not line.startswith("#") and (match := NAME.match(line))
    }


def dashboard_names() -> set[str]:
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    return set(NAME.findall("\n".join(exprs)))


def rule_names() -> set[str]:
    rules = yaml.safe_load((MONITORING / "prometheus-rules.yml").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    return set(NAME.findall("\n".join(exprs)))


def test_dashboard_and_alert_rules_query_only_what_the_real_engine_exports(
    real_engine: RealEngine,
) -> None:
    exported = exported_names(real_engine)
    assert "vllm:spec_decode_num_draft_tokens_total" in exported  # the EAGLE profile drafts
    dashboard, rules = dashboard_names(), rule_names()
    assert len(dashboard) >= 8 and len(rules) >= 4  # the files were read, not found empty
    assert dashboard - exported == set(), "dashboard queries metrics vLLM does not export"
    assert rules - exported == set(), "alert rules query metrics vLLM does not export"
