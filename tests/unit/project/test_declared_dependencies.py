"""Every third-party module the package imports is declared in pyproject.toml (core or an
extra), not merely present because another package (vLLM) happened to pull it in."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib

from tests.conftest import REPO

PACKAGE = REPO / "server" / "copilot_lsp"


def imported_top_level_modules() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"copilot_lsp", "__future__"}


def declared_distributions() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    return {_normal(re.split(r"[<>=!~\[; ]", requirement)[0]) for requirement in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared() -> None:
    providers = importlib.metadata.packages_distributions()
    declared = declared_distributions()
    undeclared = {}
    for module in sorted(imported_top_level_modules()):
        distributions = {_normal(d) for d in providers.get(module, [])}
        if distributions and not distributions & declared:
            undeclared[module] = sorted(distributions)
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
