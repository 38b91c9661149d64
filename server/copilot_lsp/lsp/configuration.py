"""The settings layers an editor adds, and which section of its settings is ours.

Precedence, lowest first: the base settings (defaults < settings file < environment, see
settings.py) < `initializationOptions` < `workspace/configuration`. The section is
`copilotLsp`, as the VS Code extension names its settings; the older `copilot` is still read
when `copilotLsp` is absent, with a one-time deprecation warning. The editor's own settings
in the section (`client`, and the VS Code extension's names up to 0.1.0) are not the server's:
editor_section.py takes them out of both editor layers. Every layer is merged field by field
(settings_layers.py): a bad field costs that field, and each message about it is shown once
per session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from copilot_lsp import settings_layers
from copilot_lsp.lsp import editor_section
from copilot_lsp.settings import Settings

logger = logging.getLogger(__name__)

SECTION = "copilotLsp"
OLD_SECTION = "copilot"
SECTIONS = (SECTION, OLD_SECTION)
"""Asked for in this order by workspace/configuration."""
LAYERS = ("initializationOptions", "copilot", "workspace/configuration")
COPILOT_KEYS = ("nextEditSuggestions",)
"""Settings GitHub Copilot's clients send at the top of their settings, outside any section
(copilotlsp-nvim: `settings = { nextEditSuggestions = { enabled = true } }`): read as ours,
under `copilotLsp`'s own."""
DEPRECATED = (
    f"copilot-lsp: the settings section `{OLD_SECTION}` is deprecated; name it `{SECTION}` "
    "(the old name will stop working in a later release)"
)


class SettingsLayers:
    """The current settings: the base settings with the editor's layers on top."""

    def __init__(
        self,
        on_change: Callable[[Settings], None],
        *,
        warn: Callable[[str], None],
        deprecated: Callable[[str], None],
    ) -> None:
        """`warn` hears what was wrong with the settings (shown as errors); `deprecated` the
        one-time notes about old names of the section or of its keys (warnings)."""
        self._on_change = on_change
        self._warn = warn
        self._deprecated = deprecated
        self._base = Settings()
        self._layers: dict[str, Any] = {}
        self._said: set[str] = set()
        self._copilot: dict[str, Any] = {}
        """The Copilot-named settings pushed last (`COPILOT_KEYS`)."""
        self.current = Settings()

    def load_base(self) -> None:
        """The settings file and the environment, merged field by field."""
        loaded = settings_layers.load_base()
        self._base = loaded.settings
        self.warn_once(loaded.messages)
        self._rebuild()

    def warn_once(self, messages: list[str]) -> None:
        """Show each settings message once per session: the layers are merged again on
        every configuration change, and the same mistake should not pop up each time."""
        for message in messages:
            if message not in self._said:
                self._said.add(message)
                self._warn(f"copilot-lsp: invalid settings: {message}")

    def set_layer(self, source: str, layer: Any) -> None:
        """Replace one settings layer; invalid fields in it are reported and ignored, the
        editor's own settings in it skipped."""
        ours, notes = editor_section.server_part(layer)
        for note in notes:
            self._deprecate_once(note)
        self._layers[source] = ours
        self._rebuild()

    def pulled(self, answer: Any) -> None:
        """Apply a workspace/configuration answer to `[SECTION, OLD_SECTION]`."""
        values = list(answer) if isinstance(answer, list | tuple) else []
        ours = values[0] if values else None
        old = values[1] if len(values) > 1 else None
        if isinstance(old, Mapping) and old and not (isinstance(ours, Mapping) and ours):
            self._apply_deprecated(old)
        elif ours is not None:  # anything but an object is one message (settings_layers)
            self.set_layer("workspace/configuration", ours)

    def pushed(self, settings: Any) -> bool:
        """Apply didChangeConfiguration's settings if they hold our section; False if not
        (the client then has to be asked)."""
        if not isinstance(settings, Mapping):
            return False
        copilot = {
            key: settings[key] for key in COPILOT_KEYS if isinstance(settings.get(key), Mapping)
        }
        if copilot and copilot != self._copilot:
            self._copilot = copilot
            self.set_layer("copilot", copilot)
        if isinstance(settings.get(SECTION), Mapping):
            self.set_layer("workspace/configuration", settings[SECTION])
            return True
        if isinstance(settings.get(OLD_SECTION), Mapping):
            self._apply_deprecated(settings[OLD_SECTION])
            return True
        return False

    def _apply_deprecated(self, layer: Mapping[str, Any]) -> None:
        self._deprecate_once(DEPRECATED)
        self.set_layer("workspace/configuration", layer)

    def _deprecate_once(self, note: str) -> None:
        # Every pull and push brings the same old names again; each is said once a session.
        if note not in self._said:
            self._said.add(note)
            self._deprecated(note)

    def _rebuild(self) -> None:
        merged = settings_layers.Layered(self._base)
        for source in LAYERS:
            settings_layers.apply(merged, self._layers.get(source), source)
        self.warn_once(merged.messages)
        self.current = merged.settings
        self._on_change(merged.settings)
