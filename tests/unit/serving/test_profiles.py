"""Unit tests for copilot_lsp.serving.profiles: profile validation and the vLLM command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from copilot_lsp.errors import ConfigError
from copilot_lsp.serving.host import this_machine_embedded_dtype
from copilot_lsp.serving.profiles import Profile, available_profiles, load_profile

pytestmark = pytest.mark.usefixtures("repo_configs")


BASE_TOML = """\
name = "test"
description = "a test profile"

[model]
source = "/models/qwen"
served_name = "qwen-coder"
dtype = "float16"
max_model_len = 4096

[server]
host = "0.0.0.0"
port = 8123
gpu_memory_utilization = 0.5
max_num_seqs = 4
tensor_parallel_size = 2
args = ["--enable-prefix-caching", "--seed", "1"]
"""

SPEC_TOML = """
[speculative]
method = "eagle3"
model = "/models/eagle3-head"
num_speculative_tokens = 4

[speculative.options]
draft_tensor_parallel_size = 1
"""


def write(tmp_path: Path, text: str, name: str = "profile.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def flag_value(argv: list[str], flag: str) -> str:
    assert argv.count(flag) == 1, f"{flag} in {argv}"
    return argv[argv.index(flag) + 1]


def test_local_cpu_profile_validates() -> None:
    profile = load_profile("local-cpu")
    assert profile.name == "local-cpu"
    # `embedded:auto`, resolved for this machine when the profile is loaded.
    assert profile.embedded_dtype == this_machine_embedded_dtype()
    assert profile.model.dtype == profile.embedded_dtype
    assert profile.model.served_name
    # The embedded default speculates with the shipped EAGLE head; the baseline does not.
    assert profile.speculative is not None and profile.speculative.method == "eagle"
    assert load_profile("local-cpu-baseline").speculative is None
    assert "local-cpu" in available_profiles()


def test_with_embedded_dtype_switches_only_the_embedded_model(tmp_path: Path) -> None:
    profile = load_profile("local-cpu").with_embedded_dtype("float32")
    assert profile.embedded_dtype == "float32"
    assert profile.model.dtype == "float32"
    assert profile.speculative == load_profile("local-cpu").speculative
    external = load_profile(str(write(tmp_path, BASE_TOML)))
    assert external.with_embedded_dtype("float32") == external


def test_local_cpu_command() -> None:
    profile = load_profile("local-cpu")
    argv = profile.command("/cache/model", port=9001)
    assert argv[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    assert flag_value(argv, "--model") == "/cache/model"
    assert flag_value(argv, "--served-model-name") == profile.model.served_name
    assert flag_value(argv, "--port") == "9001"
    assert flag_value(argv, "--max-model-len") == str(profile.model.max_model_len)
    assert argv[-len(profile.server.args) :] == profile.server.args
    assert json.loads(flag_value(argv, "--speculative-config"))["method"] == "eagle"
    baseline = load_profile("local-cpu-baseline").command("/cache/model")
    assert "--speculative-config" not in baseline


def test_command_from_tmp_profile(tmp_path: Path) -> None:
    profile = load_profile(str(write(tmp_path, BASE_TOML)))
    assert profile.embedded_dtype is None
    argv = profile.command("/models/qwen")
    assert flag_value(argv, "--port") == "8123"  # the profile's own port
    assert flag_value(argv, "--host") == "0.0.0.0"
    assert flag_value(argv, "--served-model-name") == "qwen-coder"
    assert flag_value(argv, "--dtype") == "float16"
    assert flag_value(argv, "--max-model-len") == "4096"
    assert flag_value(argv, "--gpu-memory-utilization") == "0.5"
    assert flag_value(argv, "--max-num-seqs") == "4"
    assert flag_value(argv, "--tensor-parallel-size") == "2"
    assert argv[-3:] == ["--enable-prefix-caching", "--seed", "1"]
    assert "--speculative-config" not in argv
    assert "--tokenizer" not in argv


def test_speculative_config_json(tmp_path: Path) -> None:
    profile = load_profile(str(write(tmp_path, BASE_TOML + SPEC_TOML)))
    argv = profile.command("/models/qwen", port=8000)
    config = json.loads(flag_value(argv, "--speculative-config"))
    assert config == {
        "method": "eagle3",
        "model": "/models/eagle3-head",
        "num_speculative_tokens": 4,
        "draft_tensor_parallel_size": 1,
    }
    # the free-form args still come last
    assert argv[-3:] == ["--enable-prefix-caching", "--seed", "1"]


def test_ngram_without_model(tmp_path: Path) -> None:
    spec = """
[speculative]
method = "ngram"
num_speculative_tokens = 3
options = { prompt_lookup_max = 4, prompt_lookup_min = 2 }
"""
    profile = load_profile(str(write(tmp_path, BASE_TOML + spec)))
    config = profile.speculative_config()
    assert config == {
        "method": "ngram",
        "num_speculative_tokens": 3,
        "prompt_lookup_max": 4,
        "prompt_lookup_min": 2,
    }
    assert "model" not in json.loads(flag_value(profile.command("/m"), "--speculative-config"))


@pytest.mark.parametrize("tokens", [0, 6, 10])
def test_num_speculative_tokens_out_of_range(tmp_path: Path, tokens: int) -> None:
    text = BASE_TOML + SPEC_TOML.replace(
        "num_speculative_tokens = 4", f"num_speculative_tokens = {tokens}"
    )
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match="num_speculative_tokens"):
        load_profile(str(path))


def test_unknown_speculative_method_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, BASE_TOML + SPEC_TOML.replace('"eagle3"', '"magic"'))
    with pytest.raises(ConfigError, match="method"):
        load_profile(str(path))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (BASE_TOML + "colour = 'blue'\n", "colour"),
        (BASE_TOML.replace("[server]", "[server]\nworkers = 3"), "workers"),
        (BASE_TOML.replace("[model]", "[model]\nquantisation = 'q4'"), "quantisation"),
        (BASE_TOML + SPEC_TOML.replace("[speculative]", "[speculative]\nheads = 2"), "heads"),
    ],
)
def test_unknown_keys_rejected(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=where) as info:
        load_profile(str(path))
    assert str(path) in str(info.value)


def test_missing_required_field_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, BASE_TOML.replace('served_name = "qwen-coder"\n', ""))
    with pytest.raises(ConfigError, match="served_name"):
        load_profile(str(path))


def test_invalid_toml_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "name = \n")
    with pytest.raises(ConfigError, match="cannot read engine profile"):
        load_profile(str(path))


def test_unknown_profile_name_lists_known(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="no-such-profile") as info:
        load_profile("no-such-profile")
    assert "local-cpu" in str(info.value)
    configs = tmp_path / "configs"
    (configs / "profiles").mkdir(parents=True)
    write(configs / "profiles", BASE_TOML, "zeta.toml")
    write(configs / "profiles", BASE_TOML, "alpha.toml")
    monkeypatch.setenv("COPILOT_LSP_CONFIGS", str(configs))
    with pytest.raises(ConfigError, match=r"known: alpha, zeta"):
        load_profile("gamma")
    assert load_profile("alpha").model.served_name == "qwen-coder"


def test_missing_profile_path_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no engine profile"):
        load_profile(str(tmp_path / "absent.toml"))


def test_tokenizer_flag() -> None:
    profile = Profile.model_validate(
        {"name": "t", "model": {"source": "/m", "served_name": "s", "tokenizer": "/tok"}}
    )
    assert flag_value(profile.command("/m"), "--tokenizer") == "/tok"
    assert flag_value(profile.command("/m"), "--port") == "8000"


def test_options_cannot_override_validated_speculative_keys(tmp_path: Path) -> None:
    spec = """
[speculative]
method = "ngram"
num_speculative_tokens = 3

[speculative.options]
num_speculative_tokens = 12
prompt_lookup_max = 4
"""
    path = write(tmp_path, BASE_TOML + spec)
    with pytest.raises(
        ConfigError,
        match=r"speculative\.options: .*num_speculative_tokens in \[speculative\] itself, not in",
    ):
        load_profile(str(path))
    # Without the clash the same options pass through to --speculative-config.
    path = write(tmp_path, BASE_TOML + spec.replace("num_speculative_tokens = 12\n", ""))
    config = json.loads(flag_value(load_profile(str(path)).command("/m"), "--speculative-config"))
    assert config == {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}


def test_reports_label_a_profile_file_by_its_name_never_its_path(tmp_path: Path) -> None:
    from copilot_lsp.serving.profiles import profile_label, profile_labels

    named = write(tmp_path, BASE_TOML.replace('name = "test"', 'name = "eagle-round-7"'), "c7.toml")
    nameless = write(tmp_path, "[model]\n", "cand-e3b.toml")
    assert profile_label("local-cpu") == "local-cpu"
    assert profile_label(str(named)) == "eagle-round-7"
    assert profile_label(str(nameless)) == "cand-e3b"
    assert profile_label(str(tmp_path / "gone.toml")) == "gone"
    # A candidate copied from the profile it competes with keeps that profile's name: the
    # file's stem tells the two apart.
    copied = write(tmp_path, BASE_TOML, "cand-sd7.toml")
    assert profile_labels(["test", str(copied), str(named)]) == {
        "test": "test",
        str(copied): "cand-sd7",
        str(named): "eagle-round-7",
    }
    other = tmp_path / "other"
    other.mkdir()
    twin = write(other, BASE_TOML, "cand-sd7.toml")
    with pytest.raises(ConfigError, match="cand-sd7"):
        profile_labels(["test", str(copied), str(twin)])


@pytest.mark.parametrize(
    "name", [name for name in available_profiles() if name.startswith("local-cpu")]
)
def test_cpu_profiles_cache_prompts_in_small_blocks(name: str) -> None:
    # vLLM's prefix cache holds whole KV blocks: with the CPU backend's default of 128 tokens a
    # keystroke recomputes up to 127 tokens of a prompt whose head is cached (seconds here).
    argv = load_profile(name).command("/cache/model", port=9001)
    assert flag_value(argv, "--block-size") == "32"
