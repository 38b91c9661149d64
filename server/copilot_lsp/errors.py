"""The one exception tree of copilot-lsp.

CopilotLspError
├── ConfigError            bad settings file, profile or option value
├── DocumentError          unknown document, position or edit outside the text
├── EngineError            anything between us and the OpenAI-compatible engine
│   ├── EngineUnavailable  connection refused, DNS, timeout before any byte
│   ├── EngineHTTPError    the engine answered with a non-2xx status
│   └── EngineStreamError  malformed SSE, or the stream ended before [DONE]
├── LauncherError          the embedded engine could not be prepared, started or stopped
└── UsageError             a command line asks for something impossible (exit status 2)

Only the LSP boundary and the CLI catch the base class.
"""

from __future__ import annotations


class CopilotLspError(Exception):
    """Base class of every error copilot-lsp raises on purpose."""


class ConfigError(CopilotLspError):
    """A settings file, engine profile or option value is invalid."""


class DocumentError(CopilotLspError):
    """A request names an unknown document or a position/edit outside its text."""


class EngineError(CopilotLspError):
    """The completion engine could not serve a request."""

    retry_after_s: float | None = None
    """How long the engine asked to be left alone (`Retry-After`), if it did."""


class EngineUnavailable(EngineError):
    """The engine could not be reached at all (refused, timed out, name lookup failed)."""


class EngineHTTPError(EngineError):
    """The engine answered with an error status."""

    def __init__(
        self, status_code: int, detail: str, *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(f"engine answered HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail
        self.retry_after_s = retry_after_s
        """What the engine's `Retry-After` header asked for (429/503), if it sent one."""


class EngineStreamError(EngineError):
    """The engine's event stream was malformed or cut before it finished."""


class LauncherError(CopilotLspError):
    """The embedded engine could not be prepared, started or stopped."""


class UsageError(CopilotLspError):
    """A command's arguments are wrong (a missing file, a line past the end, a port out of
    range); the command exits with status 2, as argparse does for its own usage errors."""
