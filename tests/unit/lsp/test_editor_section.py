"""One settings section for the editor and the server: what the VS Code extension declares
reaches the server without a rejected key, its own settings (`client`) are skipped, and the
names it used up to 0.1.0 still work with a deprecation note (copilot_lsp.lsp.editor_section,
applied by lsp/configuration.py's SettingsLayers)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from copilot_lsp.lsp.configuration import SettingsLayers
from copilot_lsp.settings import Settings
from tests.conftest import REPO

PACKAGE_JSON = REPO / "editor-extensions" / "vscode" / "package.json"

OLD_SECTION: dict[str, Any] = {
    "serverPath": "/opt/copilot-lsp/bin/copilot-lsp",
    "serverArgs": ["-v"],
    "engine": {"url": None, "profile": "local-cpu"},
    "debounceMs": 90,
    "streaming": False,
    "enable": {"*": True, "plaintext": False, "markdown": False, "scminput": False},
    "statusIntervalS": 5,
}
"""The section as the extension 0.1.0 sent it, with a user's own debounce and streaming."""


@dataclass
class Heard:
    """What SettingsLayers told the editor, and the settings it arrived at."""

    warnings: list[str] = field(default_factory=list)
    deprecations: list[str] = field(default_factory=list)
    settings: list[Settings] = field(default_factory=list)

    def layers(self) -> SettingsLayers:
        return SettingsLayers(
            self.settings.append, warn=self.warnings.append, deprecated=self.deprecations.append
        )


def declared_section() -> dict[str, Any]:
    """The `copilotLsp` section VS Code sends for the extension's defaults: each declared
    `copilotLsp.a.b` property's default at section["a"]["b"]."""
    manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    section: dict[str, Any] = {}
    for key, spec in manifest["contributes"]["configuration"]["properties"].items():
        namespace, *parents, leaf = key.split(".")
        assert namespace == "copilotLsp", key
        node = section
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = spec["default"]
    return section


def test_the_extensions_default_section_is_taken_without_a_message() -> None:
    heard = Heard()
    section = declared_section()
    assert "client" in section and "serverPath" in section["client"]  # the editor's own are there
    heard.layers().pulled([section, None])
    assert heard.warnings == []
    assert heard.deprecations == []
    assert heard.settings[-1].editor.streaming is True  # the server's part applied


def test_the_extensions_initialization_options_are_taken_without_a_message() -> None:
    heard = Heard()
    layers = heard.layers()
    # src/logic/settings.ts initializationOptions(DEFAULTS), with an engine URL set.
    layers.set_layer(
        "initializationOptions",
        {"completion": {"debounceMs": 40}, "editor": {"streaming": True}, "engine": {"url": "x"}},
    )
    assert heard.warnings == []
    assert heard.settings[-1].engine.url == "x"


def test_anything_under_client_is_skipped_and_a_server_typo_beside_it_still_warns() -> None:
    heard = Heard()
    heard.layers().pulled(
        [{"client": {"serverPath": 3, "whatever": {"x": 1}}, "completion": {"debounceMz": 5}}]
    )
    assert len(heard.warnings) == 1, heard.warnings
    assert "unknown key `completion.debounce_mz`" in heard.warnings[0]
    assert "client" not in heard.warnings[0]


def test_the_section_of_extension_0_1_0_still_applies_with_one_note_per_old_key() -> None:
    heard = Heard()
    layers = heard.layers()
    # The new extension's defaults are in the section too (VS Code sends every declared key).
    section = {**declared_section(), **OLD_SECTION}
    section["engine"] = {**declared_section()["engine"], **OLD_SECTION["engine"]}
    for _ in range(2):  # pulled at start, pushed on a change: the notes come once
        layers.pulled([section, None])
    assert heard.warnings == []
    current = heard.settings[-1]
    assert current.completion.debounce_ms == 90  # the user's old key wins over the default
    assert current.editor.streaming is False
    assert len(heard.deprecations) == 7, heard.deprecations
    joined = "\n".join(heard.deprecations)
    for old, new in [
        ("serverPath", "client.serverPath"),
        ("serverArgs", "client.serverArgs"),
        ("engine.profile", "client.engineProfile"),
        ("enable", "client.enable"),
        ("statusIntervalS", "client.statusIntervalS"),
        ("debounceMs", "completion.debounceMs"),
        ("streaming", "editor.streaming"),
    ]:
        assert f"`copilotLsp.{old}` is deprecated; name it `copilotLsp.{new}`" in joined


def test_an_old_key_of_the_wrong_type_is_reported_under_its_new_name() -> None:
    heard = Heard()
    heard.layers().pulled([{"debounceMs": "soon"}])
    assert len(heard.deprecations) == 1
    [warning] = heard.warnings
    assert "completion.debounce_ms" in warning and "'soon'" in warning
    assert heard.settings[-1].completion.debounce_ms == Settings().completion.debounce_ms
