"""Whether a Python name may mean something other than its import at the cursor: bound
again at the module's top, or in a function around the cursor (a parameter, an assignment,
a loop variable, `with … as name`).

Read from the lines, by indentation, since the file being typed rarely parses (an open
bracket at the cursor makes the parser wrap everything before it in an ERROR node). It
errs on the side of "maybe": a keyword argument of that name counts, as does any binding
in a nested function or a class body, and anything it cannot place.
"""

from __future__ import annotations

import re

_IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\b")
_FUNCTION = re.compile(r"^\s*(?:async\s+)?def\b")
_PARAMETERS = re.compile(r"\s*(?:async\s+)?def\s+\w+\s*\(((?:[^()]|\([^()]*\))*)\)")
SIGNATURE_LINES = 60
"""Lines of a `def` read for its parameters at most."""
_LAMBDA = re.compile(r"\blambda\b([^:\n]*):")
_TARGETS = re.compile(r"\bfor\s+([\w\s,()\[\]*]+?)\s+in\b|\b(?:global|nonlocal)\s+([\w\s,]+)")
_CLOSERS = ")]}"
_NO_SCOPE = "#" + _CLOSERS
"""A line starting with one of these (a comment, a closing bracket) says nothing about
scopes."""


def rebound(name: str, text: str, line: int) -> bool:
    """Whether `name` may be bound in `text` other than by an import, where the cursor
    on `line` (0-based) would see it."""
    if name not in text:
        return False
    lines = text.split("\n")
    scopes = _Scopes(lines)
    enclosing = scopes.functions(line) if line < len(lines) else frozenset()
    for start in enclosing:
        signature = _PARAMETERS.match("\n".join(lines[start : start + SIGNATURE_LINES]))
        if signature is not None and name in parameter_names(signature.group(1)):
            return True
    escaped = re.escape(name)
    word = rf"(?<![\w.]){escaped}\b"
    direct = re.compile(
        rf"{word}\s*(?:,[^=\n]*)?(?::[^=\n]*)?(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"
        rf"|,\s*{escaped}\s*(?:,[^=\n]*)?=(?!=)"
        rf"|\bas\s+{escaped}\b|\b(?:def|class)\s+{escaped}\b|{word}\s*:="
    )
    named = re.compile(word)
    for index in [index for index, text_line in enumerate(lines) if name in text_line]:
        text_line = lines[index]
        if _IMPORT_LINE.match(text_line) or not scopes.functions(index) <= enclosing:
            continue  # an import, or a line of a function the cursor is not in
        if direct.search(text_line):
            return True
        for found in _TARGETS.finditer(text_line):
            if any(group and named.search(group) for group in found.groups()):
                return True
        for found in _LAMBDA.finditer(text_line):
            if name in parameter_names(found.group(1)):
                return True
    return False


def parameter_names(parameters: str) -> set[str]:
    """The names of a parameter list (`a, b: int = f(x), *args, **kw`), not their
    annotations or defaults."""
    found: set[str] = set()
    depth, start = 0, 0
    for at, char in enumerate(parameters + ","):
        if char in "([{":
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        elif char == "," and depth <= 0:
            named = re.match(r"\s*\**\s*(\w+)\s*(?:[:=]|$)", parameters[start:at])
            if named is not None:
                found.add(named.group(1))
            start = at + 1
    return found


def local_imports(above: str, indent: int) -> list[str]:
    """The import statements of the functions around a cursor line indented `indent`, whose
    text above is `above` (ending with a newline): a module imported where it is used
    (typer's `from . import rich_utils` inside a function) binds its name there too. Their
    nested functions' imports are not the cursor's."""
    if not indent or "import" not in above:
        return []
    lines = above.split("\n")
    top = len(lines) - 1
    while top > 0 and not _top_level(lines[top - 1]):
        top -= 1
    lines = lines[max(top - 1, 0) :]  # from the top-level statement the cursor is under
    if not any("import" in line for line in lines):
        return []
    lines[-1] = " " * indent + "pass"  # the cursor's line
    scopes = _Scopes(lines)
    enclosing = scopes.functions(len(lines) - 1)
    if not enclosing:
        return []
    found: list[str] = []
    index = min(enclosing) + 1
    while index < len(lines) - 1:
        text = lines[index]
        if _IMPORT_LINE.match(text) and scopes.functions(index) <= enclosing:
            statement = [text.strip()]
            depth = text.count("(") - text.count(")")
            while (depth > 0 or statement[-1].endswith("\\")) and index + 1 < len(lines) - 1:
                index += 1
                statement.append(lines[index].strip())
                depth += lines[index].count("(") - lines[index].count(")")
            found.append("\n".join(statement))
        index += 1
    return found


def _top_level(line: str) -> bool:
    """A statement at the file's top level (not a blank, comment or closing line)."""
    return bool(line) and not line[0].isspace() and line[0] not in _NO_SCOPE


class _Scopes:
    """The `def`s each line is inside, by indentation: each line's parent (the nearest line
    above with less indentation) from one pass over the file."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._parents = _parents(lines)
        self._functions: dict[int, frozenset[int]] = {}

    def functions(self, line: int) -> frozenset[int]:
        """The lines of the `def`s around `line` (its own `def` line not counted)."""
        known = self._functions.get(line)
        if known is None:
            parent = self._parents[line]
            known = frozenset()
            if parent >= 0:
                known = self.functions(parent)
                if _FUNCTION.match(self.lines[parent]):
                    known = known | {parent}
            self._functions[line] = known
        return known


def _parents(lines: list[str]) -> list[int]:
    """For each line, the nearest line above with less indentation (-1: none). A blank,
    comment or closing line belongs with the code above it."""
    parents = [-1] * len(lines)
    open_lines: list[int] = []
    indents: list[int] = []
    for index, text in enumerate(lines):
        stripped = text.lstrip()
        if not stripped or stripped[0] in _NO_SCOPE:
            parents[index] = open_lines[-1] if open_lines else -1
            continue
        indent = len(text) - len(stripped)
        while indents and indents[-1] >= indent:
            indents.pop()
            open_lines.pop()
        parents[index] = open_lines[-1] if open_lines else -1
        open_lines.append(index)
        indents.append(indent)
    return parents
