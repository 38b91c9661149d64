"""The edit patterns the next-edit suite is made of, found in real source with `ast`: a renamed
parameter or local, a typo fixed once, a new `__init__` parameter, a repeated edit, an
unrelated edit. Each finder yields the user's edit and the rest of the same change."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from copilot_lsp.bench.nextedit.suite import Step

RENAMES = {
    "s": "text", "n": "count", "x": "value", "f": "stream", "fp": "stream", "i": "index",
    "k": "key", "v": "value", "d": "mapping", "l": "items", "c": "char", "p": "path",
    "m": "match", "t": "token", "e": "exc", "a": "first", "b": "second", "obj": "target",
    "name": "label", "value": "item", "key": "name", "data": "payload", "path": "location",
    "text": "content", "line": "row", "msg": "message", "args": "arguments",
}  # fmt: skip
NEW_FIELDS = ("timeout", "verbose", "parent", "label", "encoding", "limit")


@dataclass(frozen=True, slots=True)
class Edit:
    """A replacement of `original[start:end]` (offsets in the original text)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Found:
    kind: str
    user: list[Edit]
    """The user's edits, in order; the cursor goes after the first."""
    rest: list[Edit]
    """The rest of the change: the next edit, or done by the user too."""
    note: str
    text: str | None = None
    """The file the edits apply to, when not the source as it is (a typo spread in it)."""


class Source:
    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def offset(self, lineno: int, col_bytes: int) -> int:
        """ast's (1-based line, UTF-8 byte column) as a code-point offset."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))

    def line_of(self, offset: int) -> int:
        """0-based line of an offset."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self.starts[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low


def sequential(edits: list[Edit]) -> list[Step]:
    """Edits of the original text, applied in the given order, as steps of the buffer."""
    steps: list[Step] = []
    done: list[Edit] = []
    for edit in edits:
        shift = sum(len(e.text) - (e.end - e.start) for e in done if e.start < edit.start)
        steps.append(Step(edit.start + shift, edit.end + shift, edit.text))
        done.append(edit)
    return steps


def apply_edits(text: str, edits: list[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def _names(node: ast.AST, name: str) -> list[ast.Name]:
    found = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _renamed(name: str) -> str:
    return RENAMES.get(name, f"{name}_value")


def _rename_param(source: Source, tree: ast.AST) -> Iterator[Found]:
    for function in _functions(tree):
        for arg in function.args.args:
            if arg.arg in ("self", "cls"):
                continue
            uses = _names(function, arg.arg)
            if not 1 <= len(uses) <= 6:
                continue
            new = _renamed(arg.arg)
            if (
                _names(function, new)
                or new in source.text[source.offset(function.lineno, 0) :][:2000].split()
            ):
                continue
            at = source.offset(arg.lineno, arg.col_offset)
            head = Edit(at, at + len(arg.arg), new)
            rest = [Edit(o, o + len(arg.arg), new) for o in _offsets(source, uses)]
            note = f"parameter {arg.arg} renamed {new} in the def of {function.name}"
            yield Found("rename-param", [head], rest, note)
            break


def _offsets(source: Source, names: list[ast.Name]) -> list[int]:
    return [source.offset(n.lineno, n.col_offset) for n in names]


def _rename_local(source: Source, tree: ast.AST) -> Iterator[Found]:
    for function in _functions(tree):
        arguments = {a.arg for a in function.args.args + function.args.kwonlyargs}
        for statement in function.body:
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
            ):
                continue
            name = statement.targets[0].id
            uses = _names(function, name)
            if (
                name in arguments
                or len(uses) < 2
                or len(uses) > 6
                or uses[0] is not statement.targets[0]
            ):
                continue
            if any(isinstance(u.ctx, ast.Store) for u in uses[1:]):
                continue
            new = _renamed(name)
            if _names(function, new):
                continue
            first, *later = _offsets(source, uses)
            head = Edit(first, first + len(name), new)
            rest = [Edit(o, o + len(name), new) for o in later]
            yield Found("rename-local", [head], rest, f"local {name} renamed {new} where assigned")
            break


def _typo_of(name: str) -> str:
    middle = len(name) // 2
    return name[: middle - 1] + name[middle] + name[middle - 1] + name[middle + 1 :]


def _typo(source: Source, tree: ast.AST) -> Iterator[Found]:
    """A name misspelt in all its uses in a function (as a copy-paste spreads it); the user
    fixes the first one."""
    for function in _functions(tree):
        seen: set[str] = set()
        for node in ast.walk(function):
            if not isinstance(node, ast.Name) or node.id in seen or len(node.id) < 5:
                continue
            seen.add(node.id)
            uses = _names(function, node.id)
            typo = _typo_of(node.id)
            if not 2 <= len(uses) <= 5 or typo == node.id or typo in source.text:
                continue
            offsets = _offsets(source, uses)
            # The typo has the name's length: the offsets hold in the misspelt file.
            misspelt = apply_edits(source.text, [Edit(o, o + len(node.id), typo) for o in offsets])
            head = Edit(offsets[0], offsets[0] + len(typo), node.id)
            rest = [Edit(o, o + len(typo), node.id) for o in offsets[1:]]
            yield Found("typo", [head], rest, f"typo {typo} fixed to {node.id} once", misspelt)
            break


def _new_field(source: Source, tree: ast.AST) -> Iterator[Found]:
    for function in _functions(tree):
        args = function.args
        if function.name != "__init__" or args.vararg or args.kwarg or args.kwonlyargs:
            continue
        params = [a.arg for a in args.args[1:]]
        if len(params) < 2 or function.lineno != function.args.args[-1].lineno:
            continue
        assigned: list[ast.Assign] = []
        for statement in function.body:
            if not isinstance(statement, ast.Assign):
                if assigned:
                    break
                continue
            target = statement.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and isinstance(statement.value, ast.Name)
                and statement.value.id == target.attr
                and target.attr in params
            ):
                assigned.append(statement)
            elif assigned:
                break
        if len(assigned) < 2:
            continue
        new = next(
            (
                f
                for f in NEW_FIELDS
                if f not in source.text[source.offset(function.lineno, 0) :][:3000]
            ),
            None,
        )
        if new is None:
            continue
        last_arg = args.args[-1]
        end = args.defaults[-1] if args.defaults else last_arg
        if end.end_lineno != function.lineno:
            continue
        at = source.offset(end.end_lineno, end.end_col_offset)  # type: ignore[arg-type]
        default = "=None" if args.defaults else ""
        head = Edit(at, at, f", {new}{default}")
        last = assigned[-1]
        line_end = source.starts[last.lineno - 1] + len(source.lines[last.lineno - 1])
        indent = source.lines[last.lineno - 1][: last.col_offset]
        rest = [Edit(line_end, line_end, f"\n{indent}self.{new} = {new}")]
        yield Found("new-field", [head], rest, f"__init__ takes {new}: its attribute is next")
        break


def _repeated(source: Source, tree: ast.AST) -> Iterator[Found]:
    """A run of `self.NAME = ...` lines; the user makes the first attribute private."""
    for function in _functions(tree):
        run: list[ast.Assign] = []
        for statement in [*function.body, None]:
            target = statement.targets[0] if isinstance(statement, ast.Assign) else None
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and not target.attr.startswith("_")
                and statement.lineno == statement.end_lineno  # type: ignore[union-attr]
            ):
                run.append(statement)  # type: ignore[arg-type]
                continue
            if len(run) >= 3:
                run = run[:6]
                attrs = [r.targets[0].attr for r in run]  # type: ignore[attr-defined]
                nearby = "\n".join(source.lines[max(0, run[0].lineno - 11) : run[0].lineno + 10])
                if all(nearby.count(f"self.{a}") == 1 for a in attrs):
                    edits = [
                        Edit(
                            source.offset(r.lineno, r.targets[0].col_offset) + 5,
                            source.offset(r.lineno, r.targets[0].col_offset) + 5,
                            "_",
                        )
                        for r in run
                    ]
                    note = "self.ATTR made self._ATTR on the first line of a run"
                    yield Found("repeated-edit", edits[:1], edits[1:], note)
                    return
            run = []


def _unrelated(source: Source, tree: ast.AST) -> Iterator[Found]:
    """An edit with nothing to follow: an exception's message reworded."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and node.exc.args
            and isinstance(node.exc.args[0], ast.Constant)
            and isinstance(node.exc.args[0].value, str)
            and node.lineno == node.end_lineno
        ):
            continue
        literal = node.exc.args[0]
        at = source.offset(literal.lineno, literal.col_offset)
        quote = source.text[at]
        if quote not in "'\"" or source.text[at : at + 3] == quote * 3:
            continue
        edit = Edit(at + 1, at + 1, "cannot continue: ")
        yield Found("unrelated", [edit], [], "an exception's message reworded")
        return


FINDERS = (_rename_param, _rename_local, _typo, _new_field, _repeated, _unrelated)
