"""Which engine URL to use when the settings leave it open."""

from __future__ import annotations

from pathlib import Path

from copilot_lsp.engine.health import HealthRule, Recorded
from copilot_lsp.engine.state import read_state, state_path
from copilot_lsp.settings import DEFAULT_ENGINE_URL


class EngineUrl:
    """The configured URL, else the embedded engine's from `engine up`, else the default.

    The embedded engine's URL comes from the state file `engine up` writes. It is read again
    only when that file changes (a stat per call, no read), so an engine started, moved or
    stopped while the server runs is still followed without reading the file per request.
    """

    def __init__(self, state_file: Path | None = None) -> None:
        self._state_file = state_file
        self._seen: tuple[Path, int, int, int] | None = None
        self._embedded: str | None = None
        self._samples_exactly = True
        self._recorded: Recorded | None = None

    def resolve(self, configured: str | None) -> str:
        if configured:
            return configured.rstrip("/")
        return self.embedded() or DEFAULT_ENGINE_URL

    def embedded(self) -> str | None:
        """The URL `engine up` recorded, or None when no embedded engine was started."""
        path = self._state_file or state_path()
        try:
            stat = path.stat()
        except OSError:
            self._seen, self._embedded = None, None
            return None
        seen = (path, stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if seen != self._seen:
            state = read_state(path)
            self._seen, self._embedded = seen, state.url if state is not None else None
            self._samples_exactly = state.samples_exactly if state is not None else True
            self._recorded = (
                Recorded(
                    state.profile, state.speculative_method, HealthRule.from_dict(state.health)
                )
                if state is not None
                else None
            )
        return self._embedded

    def recorded(self) -> tuple[str, Recorded] | None:
        """The embedded engine's URL and what `engine up` recorded of its speculation."""
        url = self.embedded()
        if url is None or self._recorded is None:
            return None
        return url, self._recorded

    def samples_exactly(self, configured: str | None) -> bool:
        """False when the URL in use is the embedded engine's and `engine up` recorded that it
        samples wrongly (engine/state.py); engines it did not start are taken at their word."""
        if self.resolve(configured) != self.embedded():
            return True
        return self._samples_exactly
