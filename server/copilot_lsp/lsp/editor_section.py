"""The server's part of an editor's `copilotLsp` section; the editor's own part is skipped.

An editor's settings section holds two kinds of settings: the server's (`engine.url`,
`completion.debounceMs`, … as in settings.py) and the editor's own (how it starts the server,
its status bar, per-language switches). The editor's own live under one key, `client`
(VS Code: `copilotLsp.client.serverPath`, …), which the server skips: an editor that pulls
its whole section through `workspace/configuration` then sends nothing the server rejects.

The VS Code extension up to 0.1.0 kept its own settings at the top of the section
(`copilotLsp.serverPath`, …). A user who set one of those still has it in the section; each
gets one deprecation note naming its new key. The two that are server settings
(`debounceMs`, `streaming`) still apply where the server reads them, over the new key: the
section always holds the new key's default, so while the old key is there it is the user's
choice. The editor-only ones are skipped (the extension reads them itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_snake

from copilot_lsp.settings import _snake_keys

CLIENT = "client"
"""The key of the editor's own settings in its section."""

LEGACY = (
    ("serverPath", "client.serverPath"),
    ("serverArgs", "client.serverArgs"),
    ("engine.profile", "client.engineProfile"),
    ("enable", "client.enable"),
    ("statusIntervalS", "client.statusIntervalS"),
    ("debounceMs", "completion.debounceMs"),
    ("streaming", "editor.streaming"),
)
"""The VS Code extension's keys up to 0.1.0 and their names now (both under `copilotLsp.`)."""

_ABSENT = object()


def server_part(layer: Any) -> tuple[Any, list[str]]:
    """`layer` (snake_case keys) without the editor's own settings, old names moved to the
    server's, and one deprecation note per old name found. Anything but an object is
    returned as it is (the settings layers report it)."""
    if not isinstance(layer, Mapping):
        return layer, []
    ours: dict[str, Any] = _snake_keys(layer)
    ours.pop(CLIENT, None)
    notes = []
    for old, new in LEGACY:
        value = _pop(ours, _path(old))
        if value is _ABSENT:
            continue
        notes.append(
            f"copilot-lsp: the setting `copilotLsp.{old}` is deprecated; name it "
            f"`copilotLsp.{new}` (the old name will stop working in a later release)"
        )
        new_path = _path(new)
        if new_path[0] != CLIENT:
            _put(ours, new_path, value)
    return ours, notes


def _path(dotted: str) -> tuple[str, ...]:
    return tuple(to_snake(part) for part in dotted.split("."))


def _pop(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    *parents, leaf = path
    node: Any = tree
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or leaf not in node:
        return _ABSENT
    return node.pop(leaf)


def _put(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    *parents, leaf = path
    node = tree
    for key in parents:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return  # the section's own value there is wrong; the settings layers report it
    node[leaf] = value
