"""A lint for the test suite itself: tests that cannot fail are defects (issue 16).

Read with `ast`, over every Python file under tests/. Each rule names what it forbids:

- an `except` in a test that swallows the failure (`return`, `pass`, `continue`, `...`);
- `assert <literal>` (always true, or always false: say `pytest.fail`), and asserting a tuple;
- an assertion about nothing of the project: it names only builtins and standard-library
  modules (`assert json.loads("{}") == {}`), compares an expression with itself, or checks
  that a length is not negative;
- a test function with no assertion: no `assert`, no `pytest.raises`/`warns`/`fail`, and no
  call of a helper (of the tests) that asserts.

And the unit tier mirrors the package: `tests/unit/<package>/test_*.py` for the modules of
`copilot_lsp/<package>/`, `tests/unit/test_<module>.py` for a top-level `copilot_lsp/<module>.py`,
`tests/unit/project/` for checks of the whole repository; every folder a package
(`__init__.py`), so that two test files may share a name and import each other as `tests.unit...`.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import pytest

import copilot_lsp
from tests.conftest import TESTS

PACKAGE = Path(copilot_lsp.__file__).resolve().parent
REPOSITORY_WIDE = "project"
"""The folder of tests/unit for checks of the whole repository rather than of one package."""
SWALLOWING = (ast.Return, ast.Pass, ast.Continue)
CHECKS = {"raises", "warns", "fail", "deprecated_call", "approx"}
"""pytest.X calls that check something (approx only inside an assert, where it counts anyway)."""
HARMLESS = set(dir(builtins))


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}"


def _is_test(node: ast.AST) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
        "test_"
    )


def _stdlib_imports(tree: ast.Module) -> set[str]:
    """Names bound by imports of standard-library modules (`json`, `Path`, ...)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    names.add((alias.asname or alias.name).split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and not node.level
            and node.module.split(".")[0] in sys.stdlib_module_names
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names - {"__future__"}


def _swallows(handler: ast.ExceptHandler) -> bool:
    body = handler.body
    only = body[0] if len(body) == 1 else None
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return True  # `...` or a bare string
    return isinstance(only, SWALLOWING) and getattr(only, "value", None) is None


def _assert_problem(test: ast.expr, stdlib: set[str]) -> str | None:
    if isinstance(test, ast.Constant):
        return "assert of a literal"
    if isinstance(test, ast.Tuple):
        return "assert of a tuple (always true: the message belongs after a comma)"
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    if not names - HARMLESS - stdlib:
        return "assertion about nothing of the project (only builtins and stdlib)"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = ast.dump(test.left), ast.dump(test.comparators[0])
        if left == right:
            return "comparison of an expression with itself"
        is_len = isinstance(test.left, ast.Call) and getattr(test.left.func, "id", "") == "len"
        if (
            is_len
            and isinstance(test.ops[0], ast.GtE)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == 0
        ):
            return "a length is never negative"
    return None


def _checks(node: ast.AST) -> bool:
    """Whether `node` holds an assert or a pytest.raises-style check itself."""
    for child in ast.walk(node):
        if isinstance(child, ast.Assert):
            return True
        if isinstance(child, ast.Call):
            func = child.func
            if isinstance(func, ast.Attribute) and func.attr in CHECKS:
                return True
    return False


def _called(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            func = child.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def _trees(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield str(path.relative_to(root.parent)), ast.parse(path.read_text(encoding="utf-8"))


def _asserting_helpers(trees: list[tuple[str, ast.Module]]) -> set[str]:
    """Functions and methods of the tests that check something, directly or through another."""
    functions: dict[str, list[ast.AST]] = {}
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_test(node):
                functions.setdefault(node.name, []).append(node)
    asserting = {name for name, defs in functions.items() if any(_checks(d) for d in defs)}
    while True:
        more = {
            name
            for name, defs in functions.items()
            if name not in asserting and any(_called(d) & asserting for d in defs)
        }
        if not more:
            return asserting
        asserting |= more


def findings(trees: list[tuple[str, ast.Module]]) -> list[Finding]:
    helpers = _asserting_helpers(trees)
    found: list[Finding] = []
    for path, tree in trees:
        stdlib = _stdlib_imports(tree)
        for node in ast.walk(tree):
            if not _is_test(node):
                continue
            for child in ast.walk(node):
                if isinstance(child, ast.ExceptHandler) and _swallows(child):
                    found.append(Finding(path, child.lineno, "except that swallows the failure"))
                if isinstance(child, ast.Assert):
                    problem = _assert_problem(child.test, stdlib)
                    if problem:
                        found.append(Finding(path, child.lineno, problem))
            if not _checks(node) and not (_called(node) & helpers):
                found.append(Finding(path, node.lineno, f"{node.name} asserts nothing"))
    return found


def _parse(source: str) -> list[tuple[str, ast.Module]]:
    return [("tests/sample.py", ast.parse(source))]


def test_the_suite_has_no_test_that_cannot_fail() -> None:
    problems = findings(list(_trees(TESTS)))
    assert problems == [], "\n".join(map(str, problems))


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        (
            "def test_a():\n    try:\n        f()\n    except ValueError:\n        return\n"
            "    assert g()\n",
            "except that swallows the failure",
        ),
        (
            "def test_a():\n    for x in y:\n        try:\n            f(x)\n"
            "        except E:\n            continue\n    assert y\n",
            "except that swallows the failure",
        ),
        ("def test_a():\n    assert True\n", "assert of a literal"),
        ("def test_a():\n    assert (f(), 'message')\n", "assert of a tuple"),
        (
            "import json\ndef test_a():\n    assert json.loads('{}') == {}\n",
            "assertion about nothing of the project",
        ),
        ("def test_a():\n    assert len([1]) == 1\n", "assertion about nothing of the project"),
        ("def test_a(x):\n    assert f(x) == f(x)\n", "comparison of an expression with itself"),
        ("def test_a(x):\n    assert len(x) >= 0\n", "a length is never negative"),
        ("def test_a(x):\n    f(x)  # does not raise\n", "test_a asserts nothing"),
    ],
)
def test_each_rule_catches_its_defect(source: str, rule: str) -> None:
    problems = findings(_parse(source))
    assert [p.rule for p in problems if p.rule.startswith(rule)] != [], (source, problems)


def test_honest_tests_pass_the_rules() -> None:
    source = (
        "import json\n"
        "from pkg import parse\n"
        "def check(x):\n    assert x\n"
        "def indirect(x):\n    check(x)\n"
        "def test_a(tmp):\n    assert parse('{}') == {}\n"
        "def test_b():\n    with pytest.raises(ValueError):\n        parse('')\n"
        "def test_c(x):\n    indirect(x)\n"
        "def test_d(x):\n    try:\n        f(x)\n    except ValueError as e:\n"
        "        assert 'bad' in str(e)\n"
        "    assert json.loads(x) == {}\n"
    )
    assert findings(_parse(source)) == []


def misplaced_unit_tests(unit: Path, package: Path) -> list[str]:
    """Test files under `unit` that do not lie where `package`'s layout says, and folders
    without an `__init__.py`."""
    packages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    problems: list[str] = []
    for path in sorted(unit.rglob("test_*.py")):
        relative = path.relative_to(unit)
        if len(relative.parts) == 1:
            if not (package / f"{path.stem.removeprefix('test_')}.py").is_file():
                problems.append(f"{relative}: no top-level module of that name")
        elif len(relative.parts) != 2 or relative.parts[0] not in packages | {REPOSITORY_WIDE}:
            problems.append(f"{relative}: not in a folder named after a package")
        elif not (path.parent / "__init__.py").is_file():
            problems.append(f"{relative.parent}: no __init__.py")
    return problems


def test_the_unit_tier_mirrors_the_package() -> None:
    problems = misplaced_unit_tests(TESTS / "unit", PACKAGE)
    assert problems == [], "\n".join(problems)


def test_a_misplaced_unit_test_is_named(tmp_path: Path) -> None:
    package, unit = tmp_path / "pkg", tmp_path / "unit"
    for path in (package / "engine" / "__init__.py", package / "settings.py"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    for name in (
        "test_settings.py",
        "test_router.py",
        "engine/__init__.py",
        "engine/test_client.py",
        "project/test_layering.py",
        "lsp/__init__.py",
        "lsp/test_server.py",
    ):
        (unit / name).parent.mkdir(parents=True, exist_ok=True)
        (unit / name).touch()
    assert misplaced_unit_tests(unit, package) == [
        "lsp/test_server.py: not in a folder named after a package",
        "project: no __init__.py",
        "test_router.py: no top-level module of that name",
    ]
