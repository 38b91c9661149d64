"""The server-over-stdio fixture of tests/lsp, shared with the bad-input tests."""

from tests.lsp.conftest import FakeSession, session

__all__ = ["FakeSession", "session"]
