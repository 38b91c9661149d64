"""A small package whose modules use each other, for the cross-file benchmark's tests."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "__init__.py": "from .models import Client\n",
    "models.py": (
        "DEFAULT_TIMEOUT = 5\n"
        "\n"
        "\n"
        "class Client:\n"
        "    def __init__(self, timeout=DEFAULT_TIMEOUT):\n"
        "        self.timeout = timeout\n"
        "\n"
        "\n"
        "def make_client(timeout):\n"
        "    return Client(timeout)\n"
    ),
    "util.py": (
        "def helper(x):\n"
        "    return x * 2\n"
        "\n"
        "\n"
        "def shared(x):\n"
        "    return x\n"
        "\n"
        "\n"
        "def triple(x):\n"
        "    return x * 3\n"
    ),
    "app.py": (
        "import pkg.util as u\n"
        "from . import models\n"
        "from .models import make_client\n"
        "from pkg import Client\n"
        "\n"
        "\n"
        "def run(value):\n"
        "    client = make_client(value)\n"
        "    doubled = u.helper(value)  # a comment: no task on this line\n"
        "    result = models.DEFAULT_TIMEOUT + u.shared(doubled)\n"
        "    other = Client(1)\n"
        "    total = u.triple(\n"
        "        value\n"
        "    )\n"
        "    return u.shared(client), result, other, total\n"
    ),
    "tests/test_app.py": "from pkg.util import triple\n\nassert triple(1) == 3\n",
}
"""In app.py: `make_client(value)` (imported, used once), `DEFAULT_TIMEOUT + …` (after
`models.`, the name written once in the file) and `Client(1)` (re-exported by __init__.py)
are tasks; `u.helper` (a comment on the line), `u.shared` (twice in the file) and `u.triple`
(the statement goes on below) are not, nor anything in tests/."""


def write_package(folder: Path, name: str = "pkg") -> Path:
    """The package's folder, written under `folder`."""
    root = folder / name
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
