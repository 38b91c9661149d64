"""Unit tests for copilot_lsp.settings: layering, validation and secret handling."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.errors import ConfigError
from copilot_lsp.settings import (
    DEFAULT_ENGINE_URL,
    CompletionSettings,
    Settings,
    apply_layer,
)
from copilot_lsp.settings_layers import base_settings

SECRET = "sk-very-secret-0123456789"


pytestmark = pytest.mark.usefixtures("clean_env")


@pytest.fixture
def settings_file(clean_env: Path) -> Path:
    clean_env.write_text(
        """
[engine]
url = "http://file-host:9000/v1"
model = "file-model"
read_timeout_s = 12.5

[completion]
debounce_ms = 100
maxTokens = 99
prefix_lines = 20

[prompt]
family = "qwen2.5-coder"
stop = ["<|endoftext|>"]

[completion.extra_body]
top_p = 0.5
""",
        encoding="utf-8",
    )
    return clean_env


@pytest.fixture
def vscode_init_options() -> dict[str, Any]:
    """initializationOptions as a VS Code / Neovim client sends them (camelCase, nested)."""
    payload: dict[str, Any] = json.loads(
        """
        {
          "engine": {
            "url": "http://gpu-box.lan:8000/v1",
            "apiKey": "sk-init-options-key",
            "model": "Qwen/Qwen2.5-Coder-1.5B",
            "connectTimeoutS": 1.5,
            "readTimeoutS": 20
          },
          "completion": {
            "enable": true,
            "debounceMs": 25,
            "multiline": "auto",
            "maxTokens": 256,
            "singleLineMaxTokens": 32,
            "maxLines": 12,
            "temperature": 0.2,
            "prefixLines": 60,
            "suffixLines": 15,
            "extraBody": {"top_p": 0.95, "repetitionPenalty": 1.05, "nested": {"keepMe": 1}}
          },
          "prompt": {
            "family": "qwen2.5-coder-repo",
            "maxTokens": 2048,
            "snippetDeadlineMs": 5,
            "stop": ["<|endoftext|>", "<|file_sep|>"]
          },
          "telemetry": {"enableLog": false, "logSource": true, "window": 500},
          "editorInfo": {"name": "vscode", "version": "1.95.0"},
          "trace": "verbose"
        }
        """
    )
    return payload


def test_defaults_without_file_or_env(clean_env: Path) -> None:
    assert not clean_env.exists()
    settings = base_settings()
    assert settings == Settings()
    assert settings.engine.url is None
    assert settings.engine.api_key is None
    assert settings.completion.debounce_ms == 40
    assert settings.completion.max_tokens == 128
    assert settings.prompt.family is None  # the served model decides (completion/families.py)
    assert DEFAULT_ENGINE_URL.endswith("/v1")


def test_file_overrides_defaults(settings_file: Path) -> None:
    settings = base_settings()
    assert settings.engine.url == "http://file-host:9000/v1"
    assert settings.engine.model == "file-model"
    assert settings.engine.read_timeout_s == 12.5
    assert settings.completion.debounce_ms == 100
    assert settings.completion.max_tokens == 99  # camelCase in the file works too
    assert settings.completion.prefix_lines == 20
    assert settings.completion.extra_body == {"top_p": 0.5}
    assert settings.prompt.family == "qwen2.5-coder"
    assert settings.prompt.stop == ["<|endoftext|>"]
    # untouched fields keep their defaults
    assert settings.completion.suffix_lines == 10


def test_env_overrides_file(settings_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", "http://env-host:7000/v1")
    monkeypatch.setenv("COPILOT_LSP_COMPLETION_DEBOUNCE_MS", "7")
    monkeypatch.setenv("COPILOT_LSP_ENGINE_API_KEY", SECRET)
    settings = base_settings()
    assert settings.engine.url == "http://env-host:7000/v1"
    assert settings.completion.debounce_ms == 7
    assert settings.engine.api_key is not None
    assert settings.engine.api_key.get_secret_value() == SECRET
    # file values not set in the environment survive
    assert settings.engine.model == "file-model"
    assert settings.completion.max_tokens == 99


def test_full_precedence_chain(
    settings_file: Path, monkeypatch: pytest.MonkeyPatch, vscode_init_options: dict[str, Any]
) -> None:
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", "http://env-host:7000/v1")
    monkeypatch.setenv("COPILOT_LSP_COMPLETION_DEBOUNCE_MS", "7")
    monkeypatch.setenv("COPILOT_LSP_ENGINE_API_KEY", SECRET)
    base = base_settings()
    init = apply_layer(base, vscode_init_options, "initializationOptions")
    assert init.engine.url == "http://gpu-box.lan:8000/v1"
    assert init.completion.debounce_ms == 25
    assert init.engine.api_key is not None
    assert init.engine.api_key.get_secret_value() == "sk-init-options-key"
    assert init.completion.prefix_lines == 60
    workspace = apply_layer(
        init,
        {"completion": {"debounceMs": 3, "multiline": "never"}, "engine": {"model": "ws"}},
        "workspace/configuration",
    )
    assert workspace.completion.debounce_ms == 3
    assert workspace.completion.multiline == "never"
    assert workspace.engine.model == "ws"
    # lower layers show through where the top layer is silent
    assert workspace.engine.url == "http://gpu-box.lan:8000/v1"
    assert workspace.completion.prefix_lines == 60
    assert workspace.prompt.stop == ["<|endoftext|>", "<|file_sep|>"]
    # and each layer left the one below unchanged
    assert base.completion.debounce_ms == 7
    assert init.completion.debounce_ms == 25


def test_vscode_payload_maps_every_field(vscode_init_options: dict[str, Any]) -> None:
    settings = apply_layer(Settings(), vscode_init_options, "initializationOptions")
    assert settings.engine.connect_timeout_s == 1.5
    assert settings.engine.read_timeout_s == 20.0
    assert settings.engine.model == "Qwen/Qwen2.5-Coder-1.5B"
    assert settings.completion.single_line_max_tokens == 32
    assert settings.completion.max_lines == 12
    assert settings.completion.temperature == 0.2
    assert settings.completion.suffix_lines == 15
    assert settings.prompt.family == "qwen2.5-coder-repo"
    assert settings.prompt.max_tokens == 2048
    assert settings.prompt.snippet_deadline_ms == 5
    assert settings.telemetry.enable_log is False
    assert settings.telemetry.log_source is True
    assert settings.telemetry.window == 500


def test_extra_body_keys_are_verbatim(vscode_init_options: dict[str, Any]) -> None:
    settings = apply_layer(Settings(), vscode_init_options, "initializationOptions")
    assert settings.completion.extra_body == {
        "top_p": 0.95,
        "repetitionPenalty": 1.05,
        "nested": {"keepMe": 1},
    }


def test_extra_body_merges_over_lower_layer() -> None:
    lower = apply_layer(Settings(), {"completion": {"extraBody": {"top_p": 0.5}}}, "a")
    upper = apply_layer(lower, {"completion": {"extraBody": {"minP": 0.1}}}, "b")
    assert upper.completion.extra_body == {"top_p": 0.5, "minP": 0.1}
    assert lower.completion.extra_body == {"top_p": 0.5}


def test_snake_case_layer_is_accepted() -> None:
    settings = apply_layer(
        Settings(), {"completion": {"debounce_ms": 5, "extra_body": {"aB": 1}}}, "x"
    )
    assert settings.completion.debounce_ms == 5
    assert settings.completion.extra_body == {"aB": 1}


def test_camel_case_dump_round_trips_through_apply_layer() -> None:
    changed = Settings(
        completion=CompletionSettings(
            debounce_ms=1,
            max_tokens=2,
            single_line_max_tokens=3,
            max_lines=4,
            temperature=0.5,
            prefix_lines=6,
            suffix_lines=7,
            multiline="never",
            enable=False,
            extra_body={"a_b": 1, "cD": 2},
        )
    )
    camel = changed.model_dump(by_alias=True, mode="json")
    assert "singleLineMaxTokens" in camel["completion"]
    assert apply_layer(Settings(), camel, "roundtrip").completion == changed.completion


def test_unknown_keys_are_ignored(vscode_init_options: dict[str, Any]) -> None:
    layer = {"nonsense": 1, "completion": {"notAField": True, "debounceMs": 11}}
    settings = apply_layer(Settings(), layer, "x")
    assert settings.completion.debounce_ms == 11
    assert "nonsense" not in settings.model_dump()
    assert "not_a_field" not in settings.completion.model_dump()


def test_empty_or_none_layer_returns_the_same_settings() -> None:
    settings = Settings()
    assert apply_layer(settings, None, "x") is settings
    assert apply_layer(settings, {}, "x") is settings


def test_non_mapping_layer_raises() -> None:
    with pytest.raises(ConfigError, match="expected an object"):
        apply_layer(Settings(), ["not", "a", "dict"], "initializationOptions")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("layer", "field", "shown"),
    [
        ({"completion": {"debounceMs": "soon"}}, "debounce_ms", "'soon'"),
        ({"completion": {"debounceMs": 5000}}, "debounce_ms", "5000"),
        ({"completion": {"multiline": "always"}}, "multiline", "'always'"),
        ({"engine": {"connectTimeoutS": -1}}, "connect_timeout_s", "-1"),
        ({"prompt": {"maxTokens": 10}}, "max_tokens", "10"),
        ({"telemetry": {"window": 1}}, "window", "1"),
    ],
)
def test_invalid_layer_raises_naming_field_and_input(
    layer: dict[str, Any], field: str, shown: str
) -> None:
    settings = apply_layer(Settings(), {"completion": {"debounceMs": 9}}, "base")
    before = settings.model_dump()
    with pytest.raises(ConfigError) as info:
        apply_layer(settings, layer, "workspace/configuration")
    message = str(info.value)
    assert "workspace/configuration" in message
    assert field in message
    assert shown in message
    assert settings.model_dump() == before
    assert settings.completion.debounce_ms == 9


def test_invalid_layer_does_not_mutate_the_layer_or_settings(
    vscode_init_options: dict[str, Any],
) -> None:
    settings = apply_layer(Settings(), vscode_init_options, "init")
    before = settings.model_dump()
    layer = copy.deepcopy(vscode_init_options)
    layer["completion"]["maxTokens"] = 0
    snapshot = copy.deepcopy(layer)
    with pytest.raises(ConfigError, match="max_tokens"):
        apply_layer(settings, layer, "init")
    assert layer == snapshot
    assert settings.model_dump() == before


def test_invalid_toml_raises_config_error(clean_env: Path) -> None:
    clean_env.write_text("[engine\nurl = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read settings file"):
        base_settings()


def test_invalid_value_in_file_raises_config_error(clean_env: Path) -> None:
    clean_env.write_text("[completion]\nmax_lines = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="max_lines"):
        base_settings()


def test_invalid_env_value_raises_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_LSP_COMPLETION_DEBOUNCE_MS", "later")
    with pytest.raises(ConfigError) as info:
        base_settings()
    assert "debounce_ms" in str(info.value)
    assert "'later'" in str(info.value)


def test_api_key_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_LSP_ENGINE_API_KEY", SECRET)
    settings = base_settings()
    assert settings.engine.api_key is not None
    assert settings.engine.api_key.get_secret_value() == SECRET
    for shown in (
        repr(settings),
        str(settings),
        settings.model_dump_json(),
        repr(settings.engine),
        str(settings.engine),
        json.dumps(settings.model_dump(mode="json")),
    ):
        assert SECRET not in shown
    layered = apply_layer(settings, {"completion": {"debounceMs": 1}}, "x")
    assert layered.engine.api_key is not None
    assert layered.engine.api_key.get_secret_value() == SECRET
    assert SECRET not in repr(layered) + layered.model_dump_json()


def test_api_key_not_in_error_message_of_an_unrelated_bad_field() -> None:
    layer = {"engine": {"apiKey": SECRET, "readTimeoutS": 0}}
    with pytest.raises(ConfigError) as info:
        apply_layer(Settings(), layer, "init")
    assert SECRET not in str(info.value)
