"""Settings layers merged field by field: a mistake costs that field (or that file), never
the other fields or the layers above and below it (copilot_lsp.settings_layers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from copilot_lsp.lsp.server import CopilotServer
from copilot_lsp.settings_layers import base_messages, load_base

ENV_URL = "http://env-host:7000/v1"


pytestmark = pytest.mark.usefixtures("clean_env")


def popups(server: CopilotServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []

    def show(params: types.ShowMessageParams) -> None:
        shown.append(params.message)

    monkeypatch.setattr(server, "window_show_message", show)
    return shown


def test_a_wrong_typed_file_field_costs_only_that_field(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_env.write_text(
        '[engine]\nmodel = "file-model"\n[completion]\ndebounce_ms = "fast"\nmax_lines = 5\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", ENV_URL)
    server = CopilotServer()
    shown = popups(server, monkeypatch)
    server.layers.load_base()
    assert server.layers.current.engine.url == ENV_URL  # the environment still applies
    assert server.layers.current.engine.model == "file-model"  # and the file's other fields
    assert server.layers.current.completion.max_lines == 5
    assert server.layers.current.completion.debounce_ms == 40  # the bad one: the default
    assert len(shown) == 1
    assert "completion.debounce_ms" in shown[0] and str(clean_env) in shown[0]


def test_a_file_that_is_not_toml_is_skipped_with_its_line(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_env.write_text('[engine]\nmodel = "m"\nurl = \n', encoding="utf-8")
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", ENV_URL)
    loaded = load_base()
    assert loaded.settings.engine.url == ENV_URL
    assert loaded.settings.engine.model is None  # the whole file is skipped
    [message] = loaded.messages
    assert str(clean_env) in message and "line 3" in message and "TOML" in message


def test_a_wrong_typed_environment_variable_is_dropped_alone(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_env.write_text("[completion]\nmax_lines = 5\n", encoding="utf-8")
    monkeypatch.setenv("COPILOT_LSP_COMPLETION_DEBOUNCE_MS", "fast")
    monkeypatch.setenv("COPILOT_LSP_ENGINE_URL", ENV_URL)
    monkeypatch.setenv("COPILOT_LSP_ENGINE_ENDPOINTS", '["http://a/v1", "http://b/v1"]')
    monkeypatch.setenv("COPILOT_LSP_PROMPT_STOP", "not json")
    loaded = load_base()
    assert loaded.settings.engine.url == ENV_URL
    assert loaded.settings.engine.endpoints == ["http://a/v1", "http://b/v1"]
    assert loaded.settings.completion.max_lines == 5
    assert loaded.settings.completion.debounce_ms == 40
    assert len(loaded.problems) == 2
    debounce, stop = sorted(loaded.problems)
    assert debounce.startswith("COPILOT_LSP_COMPLETION_DEBOUNCE_MS: ") and "'fast'" in debounce
    assert stop.startswith("COPILOT_LSP_PROMPT_STOP: ")


def test_sections_and_subsections_with_underscores_are_set_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # NEXT_EDIT_SUGGESTIONS is one section; ENGINE_API_KEY a field of its subsection.
    monkeypatch.setenv("COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENABLED", "true")
    monkeypatch.setenv("COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_URL", ENV_URL)
    monkeypatch.setenv("COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_API_KEY", "sk-nes-secret")
    monkeypatch.setenv("COPILOT_LSP_CONTEXT_WORKSPACE", '{"maxFiles": 7}')
    monkeypatch.setenv("COPILOT_LSP_CONTEXT_WORKSPACE_ENABLED", "false")
    monkeypatch.setenv("COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_APIKEY", "x")
    loaded = load_base()
    options = loaded.settings.next_edit_suggestions
    assert options.enabled is True
    assert options.engine.url == ENV_URL
    assert options.engine.api_key is not None
    assert options.engine.api_key.get_secret_value() == "sk-nes-secret"
    assert loaded.settings.context.workspace.max_files == 7
    assert loaded.settings.context.workspace.enabled is False
    assert loaded.problems == []
    [unknown] = loaded.warnings
    assert "COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_APIKEY" in unknown
    assert "sk-nes-secret" not in " ".join(loaded.messages)


def test_unknown_keys_get_one_did_you_mean_each(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_env.write_text(
        '[engine]\nulr = "http://typo/v1"\nmodel = "m"\n[completon]\nx = 1\n', encoding="utf-8"
    )
    monkeypatch.setenv("COPILOT_LSP_ENGINE_MODLE", "x")
    loaded = load_base()
    assert loaded.settings.engine.model == "m" and not loaded.problems
    text = "\n".join(loaded.warnings)
    assert "`engine.ulr` (did you mean `engine.url`?)" in text
    assert "`completon` (did you mean `completion`?)" in text
    assert "COPILOT_LSP_ENGINE_MODLE (did you mean COPILOT_LSP_ENGINE_MODEL?)" in text
    assert len(loaded.warnings) == 3
    assert base_messages() == loaded.messages  # what `copilot-lsp complete` prints


def test_an_unknown_prompt_family_lists_the_known_ones(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_env.write_text('[prompt]\nfamily = "qwen2.5-coder"\n', encoding="utf-8")
    server = CopilotServer()
    shown = popups(server, monkeypatch)
    server.layers.load_base()
    server.layers.set_layer("initializationOptions", {"prompt": {"family": "qwen-coder"}})
    assert server.layers.current.prompt.family == "qwen2.5-coder"  # the layer below still applies
    [message] = shown
    assert "unknown model family 'qwen-coder'" in message
    assert "smollm2" in message and "starcoder2" in message
    assert "Traceback" not in message


def test_each_message_reaches_the_editor_once(monkeypatch: pytest.MonkeyPatch) -> None:
    server = CopilotServer()
    shown = popups(server, monkeypatch)
    server.layers.load_base()
    bad: dict[str, Any] = {"completion": {"maxTokens": "many", "temprature": 0.1}}
    for _ in range(3):  # every configuration change merges the layers again
        server.layers.set_layer("workspace/configuration", bad)
    assert len(shown) == 2, shown
    assert any("max_tokens" in m for m in shown)
    assert any("did you mean `completion.temperature`" in m for m in shown)
