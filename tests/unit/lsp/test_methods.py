"""Our custom method names are a wire protocol: each one the server speaks is documented in
docs/protocol.md under the very name the code sends, and none is defined twice."""

from __future__ import annotations

import re
from pathlib import Path

from copilot_lsp.lsp import methods
from tests.conftest import REPO

DOCS = REPO / "docs" / "protocol.md"
SERVER = Path(methods.__file__).resolve().parents[1]


def names() -> dict[str, str]:
    return {
        key: value
        for key, value in vars(methods).items()
        if key.isupper() and isinstance(value, str)
    }


def test_every_method_name_is_documented_as_sent() -> None:
    documented = DOCS.read_text(encoding="utf-8")
    missing = {
        key: value
        for key, value in names().items()
        if not re.search(rf"`{re.escape(value)}[` ]", documented)
    }
    assert missing == {}


def test_no_module_spells_a_method_name_itself() -> None:
    """The server and the in-package clients take every name from lsp/methods.py."""
    spelled = []
    for path in SERVER.rglob("*.py"):
        if path.name == "methods.py":
            continue
        text = path.read_text(encoding="utf-8")
        for value in names().values():
            if re.search(rf"[\"']{re.escape(value)}[\"']", text):
                spelled.append(f"{path.relative_to(SERVER)}: {value}")
    assert spelled == []
