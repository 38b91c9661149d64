"""The editors' defaults are the server's: every setting the VS Code extension (package.json)
or the Neovim plugin (lua/copilot_lsp/config.lua) declares that the server also has defaults
to the server's value (copilot_lsp.settings), and the engine profile to the command line's.
A default changed on one side only fails here."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_snake
from pydantic.fields import FieldInfo

from copilot_lsp.cli.engine import DEFAULT_PROFILE, FALLBACK_PROFILE
from copilot_lsp.settings import Settings
from tests.conftest import REPO

EXTENSIONS = REPO / "editor-extensions"
PACKAGE_JSON = EXTENSIONS / "vscode" / "package.json"
LUA_CONFIG = EXTENSIONS / "neovim" / "lua" / "copilot_lsp" / "config.lua"

EDITOR_CHOICES: dict[str, Any] = {"editor.streaming": True}
"""Server settings both editors set on purpose: the server streams partial completions only
to a client that asks (a plain LSP client would not draw them); both editors draw them."""

LUA_SERVER_SETTINGS = {"debounce_ms": "completion.debounceMs", "streaming": "editor.streaming"}
"""The Neovim plugin's options that are server settings under another name."""


def server_field(key: str) -> FieldInfo:
    """The server's field for a camelCase `section.name` key (KeyError: not a setting)."""
    section, name = (to_snake(part) for part in key.split("."))
    model = Settings.model_fields[section].annotation
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model.model_fields[name]


def server_default(key: str) -> Any:
    section, name = (to_snake(part) for part in key.split("."))
    return Settings().model_dump(mode="json")[section][name]


def bound(info: FieldInfo, name: str) -> Any:
    return next((getattr(m, name) for m in info.metadata if hasattr(m, name)), None)


def vscode_properties() -> dict[str, dict[str, Any]]:
    manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    properties: dict[str, dict[str, Any]] = manifest["contributes"]["configuration"]["properties"]
    return {key.removeprefix("copilotLsp."): spec for key, spec in properties.items()}


def lua_defaults() -> dict[str, Any]:
    """The scalar options of `M.defaults = { … }` in config.lua (nested tables left out)."""
    text = LUA_CONFIG.read_text(encoding="utf-8")
    body = text.split("M.defaults = {\n", 1)[1].split("\n}\n", 1)[0]
    values: dict[str, Any] = {}
    for name, raw in re.findall(r"^  (\w+) = (.+),$", body, flags=re.MULTILINE):
        if raw in ("true", "false"):
            values[name] = raw == "true"
        elif raw == "nil":
            values[name] = None
        elif re.fullmatch(r"-?\d+", raw):
            values[name] = int(raw)
        elif raw.startswith('"'):
            values[name] = raw.strip('"')
    return values


def test_vscode_server_settings_default_to_the_servers() -> None:
    server_keys = {k: v for k, v in vscode_properties().items() if not k.startswith("client.")}
    assert {"engine.url", "completion.debounceMs", "editor.streaming"} <= server_keys.keys()
    for key, spec in server_keys.items():
        info = server_field(key)  # every key outside `client.` is one of the server's
        expected = EDITOR_CHOICES.get(key, server_default(key))
        assert spec["default"] == expected, f"copilotLsp.{key}"
        assert spec.get("minimum") == bound(info, "ge"), f"copilotLsp.{key} minimum"
        assert spec.get("maximum") == bound(info, "le"), f"copilotLsp.{key} maximum"


def test_neovim_server_settings_default_to_the_servers() -> None:
    defaults = lua_defaults()
    assert {"renderer", "auto_trigger"} <= defaults.keys()  # the parser read the table
    for option, key in LUA_SERVER_SETTINGS.items():
        expected = EDITOR_CHOICES.get(key, server_default(key))
        assert defaults[option] == expected, f"{option} (server {key})"


def test_editor_choices_differ_from_the_server_and_both_editors_make_them() -> None:
    declared = vscode_properties()
    defaults = lua_defaults()
    for key, value in EDITOR_CHOICES.items():
        assert server_default(key) != value, f"{key}: same as the server's, not a choice"
        assert declared[key]["default"] == value
        assert defaults[next(o for o, k in LUA_SERVER_SETTINGS.items() if k == key)] == value


def test_vscode_starts_the_engine_with_the_command_lines_default_profile() -> None:
    # Empty: `engine up` without --profile, which falls back where suffix decoding is missing.
    profile = vscode_properties()["client.engineProfile"]
    assert profile["default"] == ""
    assert DEFAULT_PROFILE in profile["description"]
    assert FALLBACK_PROFILE in profile["description"]


def test_neovim_next_edits_are_off_like_the_servers() -> None:
    """`next_edits.enabled` is sent as `nextEditSuggestions.enabled`: the same default."""
    text = LUA_CONFIG.read_text(encoding="utf-8")
    found = re.search(r"^  next_edits = \{\n    enabled = (true|false),$", text, flags=re.MULTILINE)
    assert found is not None, "next_edits.enabled not found in config.lua's defaults"
    enabled = found.group(1) == "true"
    assert enabled is Settings().next_edit_suggestions.enabled
