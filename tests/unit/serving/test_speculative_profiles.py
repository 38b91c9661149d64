"""The shipped speculative profiles and the monitoring configs that watch them."""

from __future__ import annotations

import json

import pytest
import yaml

from copilot_lsp.serving.profiles import available_profiles, load_profile
from copilot_lsp.settings import ACCEPTANCE_THRESHOLD, ACCEPTED_LENGTH_THRESHOLD
from tests.conftest import REPO

MONITORING = REPO / "configs" / "monitoring"
PRODUCTION = [
    f"{kind}-qwen2.5-coder-32b-2xa100" for kind in ("eagle", "eagle3", "medusa", "baseline")
]


pytestmark = pytest.mark.usefixtures("repo_configs")


def test_local_profiles_cover_every_method() -> None:
    names = set(available_profiles())
    assert {"local-cpu", "local-cpu-baseline", "local-cpu-medusa", "local-cpu-ngram"} <= names
    eagle3 = load_profile("local-cpu-eagle3").speculative
    assert eagle3 is not None and eagle3.model == "embedded-draft:eagle3"
    assert eagle3.method == "eagle3"
    assert load_profile("local-cpu-baseline").speculative is None
    medusa = load_profile("local-cpu-medusa").speculative
    assert medusa is not None and medusa.model == "embedded-draft:medusa"
    ngram = load_profile("local-cpu-ngram").speculative_config()
    assert ngram == {
        "method": "ngram",
        "num_speculative_tokens": 3,
        "prompt_lookup_min": 2,
        "prompt_lookup_max": 5,
    }


@pytest.mark.parametrize("name", PRODUCTION)
def test_production_profiles_give_the_two_a100_command(name: str) -> None:
    profile = load_profile(name)
    argv = profile.command(profile.model.source)
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--tensor-parallel-size"] == "2"
    assert flags["--max-model-len"] == "8192"
    assert flags["--gpu-memory-utilization"] == "0.9"
    assert flags["--max-num-seqs"] == "64"
    assert "--speculative-model" not in argv and "--num-speculative-tokens" not in argv
    if name.startswith("baseline"):
        assert "--speculative-config" not in argv
        return
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["method"] == name.split("-")[0]
    assert config["num_speculative_tokens"] == 5
    assert config["model"].startswith("/models/drafts/")


def test_a_resolved_draft_path_replaces_the_symbolic_one() -> None:
    profile = load_profile("local-cpu-medusa")
    argv = profile.command("/m", draft_path="/cache/drafts/medusa")
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["model"] == "/cache/drafts/medusa"


def test_alert_rules_use_real_vllm_counters_and_the_client_threshold() -> None:
    rules = yaml.safe_load((MONITORING / "prometheus-rules.yml").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    text = "\n".join(exprs)
    # The gauge vllm:spec_decode_draft_acceptance_rate no longer exists: counters only.
    assert "draft_acceptance_rate" not in text
    assert "vllm:spec_decode_num_accepted_tokens_total" in text
    assert "vllm:spec_decode_num_accepted_tokens_per_pos_total" in text
    alerts = {
        rule["alert"]: rule
        for group in rules["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }
    # The client's built-in rules: learned drafts by acceptance rate, n-gram and suffix
    # decoding by mean accepted length (engine/health.py).
    assert (
        f"acceptance_rate:5m < {ACCEPTANCE_THRESHOLD}\n"
        in alerts["SpeculativeAcceptanceLow"]["expr"]
    )
    length = alerts["SpeculativeAcceptedLengthLow"]["expr"]
    assert f"mean_accepted_length:5m < {ACCEPTED_LENGTH_THRESHOLD:g}\n" in length


def test_dashboard_panels_have_distinct_ids_and_queries() -> None:
    # Which metrics exist is checked against the real engine's /metrics in tests/engine.
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    assert all(t["expr"].strip() for panel in dashboard["panels"] for t in panel["targets"])


@pytest.mark.parametrize("method", ["baseline", "eagle", "eagle3", "medusa", "ngram"])
def test_gpu_benchmark_profiles_match_the_cpu_ones_on_one_gpu(method: str) -> None:
    gpu = load_profile(f"gpu-smollm2-{method}")
    cpu = load_profile("local-cpu" if method == "eagle" else f"local-cpu-{method}")
    # Same target and same draft, so the GPU report compares with the CPU one; the CPU
    # profile's precision follows the machine (serving/host.py), the GPU's is bfloat16.
    assert gpu.embedded_dtype == "bfloat16" and cpu.embedded_dtype is not None
    assert gpu.model == cpu.with_embedded_dtype("bfloat16").model
    assert gpu.speculative_config() == cpu.speculative_config()
    argv = gpu.command(gpu.model.source)
    assert "--enforce-eager" not in argv and "--tensor-parallel-size" not in argv
    assert argv[argv.index("--max-num-seqs") + 1] == "64"
    assert argv[argv.index("--gpu-memory-utilization") + 1] == "0.25"
