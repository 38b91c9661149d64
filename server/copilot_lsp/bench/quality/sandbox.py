"""Run a filled-in program on its unit tests in a constrained subprocess.

Isolated interpreter (`-I`), its own empty working directory, no inherited environment,
CPU, memory and file-size limits, and a wall-clock timeout. Enough to keep a generated
program from hurting the machine; it is not a security boundary against hostile code.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MEMORY_BYTES = 1 << 30
FILE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class UnitTest:
    stdin: str
    accepted: Sequence[str]


def _limits(cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))


def _same_output(actual: str, expected: str) -> bool:
    return actual.split() == expected.split()


def passes(program: str, tests: Sequence[UnitTest], timeout_s: float = 5.0) -> bool:
    """True when the program prints an accepted output for every test."""
    with tempfile.TemporaryDirectory(prefix="copilot-lsp-sandbox-") as folder:
        path = Path(folder) / "program.py"
        path.write_text(program, encoding="utf-8")
        for test in tests:
            try:
                result = subprocess.run(
                    [sys.executable, "-I", str(path)],
                    input=test.stdin,
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                    cwd=folder,
                    env={"PATH": "/usr/bin:/bin"},
                    preexec_fn=lambda: _limits(int(timeout_s) + 1),
                )
            except subprocess.TimeoutExpired:
                return False
            if result.returncode != 0:
                return False
            if not any(_same_output(result.stdout, expected) for expected in test.accepted):
                return False
    return True
