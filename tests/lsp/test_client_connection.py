"""The server process every in-package client starts (client/connection.py): one that exits
before it answers is reported with what it wrote on stderr, whichever client started it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from copilot_lsp.client.driver import EditorSession
from copilot_lsp.errors import CopilotLspError

pytestmark = pytest.mark.timeout(60)

EXITS = "import sys; sys.stderr.write('no engine profile here\\n'); sys.exit(3)"


async def test_a_server_that_exits_at_start_is_reported_with_its_stderr(tmp_path: Path) -> None:
    with pytest.raises(CopilotLspError, match=r"(?s)the server did not start.*no engine profile"):
        await EditorSession.start(tmp_path, server_command=[sys.executable, "-c", EXITS])
