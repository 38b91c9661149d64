"""The next-edit quality suite's scenarios: a file, the user's recent edits, the cursor, and
the edit that should come next (or none).

Most are made from real Python source (the standard library of the Python that builds them)
by static transformations found with `ast`: the user's edit is applied as didChange steps and
the rest of the same change is what the model should propose. Each kind has a twin where the
right answer is no edit: the change is already complete (`*-done`), or the user's edit has no
consequence (`unrelated`). A small hand-written set adds a changed signature and its call
sites. `python -m copilot_lsp.bench.nextedit.scenarios` writes data/scenarios.json.gz again
(the same bytes from the same Python); the suite in the repository is the one benchmarked.

Offsets count code points. A step replaces `text[start:end]` of the buffer as it is when the
step comes; the cursor is an offset in the buffer after the last step.
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data") / "scenarios.json.gz"
WINDOW = 10
"""Lines above and below the cursor the server's window holds by default: every expected
edit lies inside it."""
MAX_CHANGED_LINES = 8
"""The server's default confidence rule (nextEditSuggestions.maxChangedLines): the next edit
is offered as one edit from its first change to its last, so their lines span at most this."""
CONTEXT_ABOVE, CONTEXT_BELOW = 25, 35
"""Lines of the source file kept around the cursor's line in a scenario's file."""
MODULES = (
    "argparse", "difflib", "textwrap", "configparser", "logging/__init__", "email/message",
    "http/cookiejar", "json/decoder", "pathlib", "shutil", "tarfile", "zipfile",
    "csv", "calendar", "fractions", "ftplib", "smtplib", "imaplib", "pprint", "sched",
    "inspect", "dataclasses", "tokenize", "gettext", "mailbox", "optparse", "pdb",
    "pickle", "random", "selectors", "statistics", "string", "subprocess", "tempfile",
    "threading", "trace", "uuid", "wave", "xml/dom/minidom", "cmd", "code", "codeop",
    "netrc", "plistlib", "queue", "shlex", "socketserver", "telnetlib", "timeit", "zipapp",
)  # fmt: skip
"""Standard-library files searched, in this order."""
QUOTAS = {
    "rename-param": 6,
    "rename-local": 6,
    "typo": 5,
    "new-field": 5,
    "repeated-edit": 4,
    "rename-param-done": 4,
    "rename-local-done": 3,
    "typo-done": 3,
    "new-field-done": 3,
    "unrelated": 10,
}
"""Generated scenarios per kind: with the hand-written set, about half want no edit."""
RENAMES = {
    "s": "text", "n": "count", "x": "value", "f": "stream", "fp": "stream", "i": "index",
    "k": "key", "v": "value", "d": "mapping", "l": "items", "c": "char", "p": "path",
    "m": "match", "t": "token", "e": "exc", "a": "first", "b": "second", "obj": "target",
    "name": "label", "value": "item", "key": "name", "data": "payload", "path": "location",
    "text": "content", "line": "row", "msg": "message", "args": "arguments",
}  # fmt: skip
NEW_FIELDS = ("timeout", "verbose", "parent", "label", "encoding", "limit")


@dataclass(frozen=True, slots=True)
class Step:
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    kind: str
    source: str
    """Where the file came from: `stdlib:MODULE:LINE` or `hand`."""
    before: str
    """The file as opened."""
    steps: tuple[Step, ...]
    """The user's recent edits, replayed as didChange steps."""
    cursor: int
    expected: str | None
    """The buffer after the right next edit; None when no edit is right."""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def wants_edit(self) -> bool:
        return self.expected is not None

    def current(self) -> str:
        """The buffer after the user's steps: what the next edit applies to."""
        return apply_steps(self.before, self.steps)

    def target(self) -> str:
        """The buffer a perfect suggester leaves: the expected one, or the current one."""
        return self.expected if self.expected is not None else self.current()


def apply_steps(text: str, steps: tuple[Step, ...] | list[Step]) -> str:
    for step in steps:
        text = text[: step.start] + step.text + text[step.end :]
    return text


def save(scenarios: list[Scenario], path: Path = DATA) -> None:
    data = {
        "built_by": "python -m copilot_lsp.bench.nextedit.scenarios",
        "python": sys.version.split()[0],
        "scenarios": [asdict(s) for s in scenarios],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=0, ensure_ascii=False) + "\n"
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))


def load(path: Path = DATA) -> list[Scenario]:
    data = json.loads(gzip.decompress(path.read_bytes()))
    return [
        Scenario(**{**item, "steps": tuple(Step(**step) for step in item["steps"])})
        for item in data["scenarios"]
    ]


# --- Building -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Edit:
    """A replacement of `original[start:end]` (offsets in the original text)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class _Found:
    kind: str
    user: list[_Edit]
    """The user's edits, in order; the cursor goes after the first."""
    rest: list[_Edit]
    """The rest of the change: the next edit, or done by the user too."""
    note: str
    text: str | None = None
    """The file the edits apply to, when not the source as it is (a typo spread in it)."""


class _Source:
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


def _sequential(edits: list[_Edit]) -> list[Step]:
    """Edits of the original text, applied in the given order, as steps of the buffer."""
    steps: list[Step] = []
    done: list[_Edit] = []
    for edit in edits:
        shift = sum(len(e.text) - (e.end - e.start) for e in done if e.start < edit.start)
        steps.append(Step(edit.start + shift, edit.end + shift, edit.text))
        done.append(edit)
    return steps


def _apply(text: str, edits: list[_Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def _scenario(
    source: _Source,
    kind: str,
    user: list[_Edit],
    rest: list[_Edit],
    *,
    cursor_edit: _Edit,
    wants_edit: bool,
    before: str | None = None,
    note: str = "",
) -> Scenario | None:
    """A scenario cut from `source`: the user's edits `user` (in order), then `rest` is the
    next edit (`wants_edit`) or was done by the user too (appended to the steps)."""
    original = before if before is not None else source.text
    steps_edits = user if wants_edit else user + rest
    everything = user + rest
    line = source.line_of(cursor_edit.start)
    touched = {source.line_of(e.start) for e in everything} | {
        source.line_of(e.end) for e in everything
    }
    if any(abs(t - line) > WINDOW - 1 for t in touched):
        return None
    rest_lines = [source.line_of(e.start) for e in rest] + [source.line_of(e.end) for e in rest]
    if rest and max(rest_lines) - min(rest_lines) + 1 > MAX_CHANGED_LINES:
        return None  # one edit from the first change to the last: the server's gate says no
    first = max(0, line - CONTEXT_ABOVE)
    last = min(len(source.lines) - 1, line + CONTEXT_BELOW)
    base = source.starts[first]
    stop = source.starts[last] + len(source.lines[last])
    cut = original[base:stop] + "\n"

    def moved(edit: _Edit) -> _Edit:
        return _Edit(edit.start - base, edit.end - base, edit.text)

    steps = _sequential([moved(e) for e in steps_edits])
    shift = sum(len(e.text) - (e.end - e.start) for e in steps_edits if e.start < cursor_edit.start)
    cursor = cursor_edit.start - base + shift + len(cursor_edit.text)  # after the user's edit
    current = apply_steps(cut, steps)
    expected = _apply(cut, [moved(e) for e in everything]) if wants_edit else None
    if expected == current:
        return None
    return Scenario(
        id="",
        kind=kind,
        source=f"stdlib:{source.name}:{line + 1}",
        before=cut,
        steps=tuple(steps),
        cursor=cursor,
        expected=expected,
        note=note,
    )


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def _names(node: ast.AST, name: str) -> list[ast.Name]:
    found = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _renamed(name: str) -> str:
    return RENAMES.get(name, f"{name}_value")


def _rename_param(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
            head = _Edit(at, at + len(arg.arg), new)
            rest = [_Edit(o, o + len(arg.arg), new) for o in _offsets(source, uses)]
            note = f"parameter {arg.arg} renamed {new} in the def of {function.name}"
            yield _Found("rename-param", [head], rest, note)
            break


def _offsets(source: _Source, names: list[ast.Name]) -> list[int]:
    return [source.offset(n.lineno, n.col_offset) for n in names]


def _rename_local(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
            head = _Edit(first, first + len(name), new)
            rest = [_Edit(o, o + len(name), new) for o in later]
            yield _Found("rename-local", [head], rest, f"local {name} renamed {new} where assigned")
            break


def _typo_of(name: str) -> str:
    middle = len(name) // 2
    return name[: middle - 1] + name[middle] + name[middle - 1] + name[middle + 1 :]


def _typo(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
            misspelt = _apply(source.text, [_Edit(o, o + len(node.id), typo) for o in offsets])
            head = _Edit(offsets[0], offsets[0] + len(typo), node.id)
            rest = [_Edit(o, o + len(typo), node.id) for o in offsets[1:]]
            yield _Found("typo", [head], rest, f"typo {typo} fixed to {node.id} once", misspelt)
            break


def _new_field(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
        head = _Edit(at, at, f", {new}{default}")
        last = assigned[-1]
        line_end = source.starts[last.lineno - 1] + len(source.lines[last.lineno - 1])
        indent = source.lines[last.lineno - 1][: last.col_offset]
        rest = [_Edit(line_end, line_end, f"\n{indent}self.{new} = {new}")]
        yield _Found("new-field", [head], rest, f"__init__ takes {new}: its attribute is next")
        break


def _repeated(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
                        _Edit(
                            source.offset(r.lineno, r.targets[0].col_offset) + 5,
                            source.offset(r.lineno, r.targets[0].col_offset) + 5,
                            "_",
                        )
                        for r in run
                    ]
                    note = "self.ATTR made self._ATTR on the first line of a run"
                    yield _Found("repeated-edit", edits[:1], edits[1:], note)
                    return
            run = []


def _unrelated(source: _Source, tree: ast.AST) -> Iterator[_Found]:
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
        edit = _Edit(at + 1, at + 1, "cannot continue: ")
        yield _Found("unrelated", [edit], [], "an exception's message reworded")
        return


FINDERS = (_rename_param, _rename_local, _typo, _new_field, _repeated, _unrelated)


def build(modules: tuple[str, ...] = MODULES) -> list[Scenario]:
    """The generated scenarios, then the hand-written ones, with ids."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    counts = dict.fromkeys(QUOTAS, 0)
    found: list[Scenario] = []
    for module in modules:
        text = (stdlib / f"{module}.py").read_text(encoding="utf-8")
        source = _Source(module.removesuffix("/__init__").replace("/", "."), text)
        tree = ast.parse(text)
        for finder in FINDERS:
            made = list(finder(source, tree))
            if not made:
                continue
            kind, user, rest, note, misspelt = (
                made[0].kind,
                made[0].user,
                made[0].rest,
                made[0].note,
                made[0].text,
            )
            for wants_edit in (True, False):
                name = kind if wants_edit else f"{kind}-done"
                if kind == "unrelated":
                    name = kind
                if counts.get(name, QUOTAS.get(name, 0)) >= QUOTAS.get(name, 0):
                    continue
                from_source = _Source(source.name, misspelt) if misspelt else source
                scenario = _scenario(
                    from_source,
                    name,
                    user,
                    rest,
                    cursor_edit=user[0],
                    wants_edit=wants_edit and kind != "unrelated",
                    note=note,
                )
                if scenario is not None:
                    counts[name] += 1
                    found.append(scenario)
                if kind == "unrelated":
                    break
    found.extend(hand_written())
    return [
        Scenario(**{**asdict(s), "steps": s.steps, "id": f"{index:02d}-{s.kind}"})
        for index, s in enumerate(found)
    ]


def _hand(
    kind: str, before: str, user: list[tuple[str, str]], after: str | None, note: str
) -> Scenario:
    """A scenario from the file, the user's replacements (old, new: each the first occurrence
    of `old` in the buffer at the time) and the expected buffer."""
    steps, text, cursor = [], before, 0
    for old, new in user:
        at = text.index(old)
        steps.append(Step(at, at + len(old), new))
        text = text[:at] + new + text[at + len(old) :]
        cursor = at + len(new)
    return Scenario("", kind, "hand", before, tuple(steps), cursor, after, note)


_SHAPES = """import math


def area(radius):
    return math.pi * radius ** 2


def describe(shapes):
    total = 0.0
    for shape in shapes:
        total += area(shape.radius)
    print("largest", area(max(s.radius for s in shapes)))
    return total
"""

_CONFIG = """class Config:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def url(self):
        return f"http://{self.host}:{self.port}/"


def local():
    return Config("localhost", 8080)


def remote():
    return Config("example.org", 443)
"""

_LOG = """def report(rows, out):
    out.write("name,size\\n")
    for row in rows:
        out.write(f"{row.name},{row.size}\\n")
    out.write("total,%d\\n" % sum(r.size for r in rows))
"""


def hand_written() -> list[Scenario]:
    """A changed signature and its call sites, and its complete and unrelated twins."""
    area2 = _SHAPES.replace("def area(radius):", "def area(radius, scale):")
    return [
        _hand(
            "signature",
            _SHAPES,
            [
                ("def area(radius):", "def area(radius, scale=1.0):"),
                ("    return math.pi * radius ** 2", "    return math.pi * (radius * scale) ** 2"),
            ],
            None,
            "a defaulted parameter: the call sites need nothing",
        ),
        _hand(
            "signature",
            _SHAPES,
            [
                ("def area(radius):", "def area(radius, scale):"),
                ("    return math.pi * radius ** 2", "    return math.pi * (radius * scale) ** 2"),
                ("def describe(shapes):", "def describe(shapes, scale):"),
            ],
            area2.replace("radius ** 2", "(radius * scale) ** 2")
            .replace("def describe(shapes):", "def describe(shapes, scale):")
            .replace("area(shape.radius)", "area(shape.radius, scale)")
            .replace(
                "area(max(s.radius for s in shapes))", "area(max(s.radius for s in shapes), scale)"
            ),
            "a required parameter passed on: both call sites take it",
        ),
        _hand(
            "signature",
            _CONFIG,
            [
                ("def __init__(self, host, port):", "def __init__(self, host, port, scheme):"),
                (
                    "        self.port = port",
                    "        self.port = port\n        self.scheme = scheme",
                ),
            ],
            _CONFIG.replace(
                "def __init__(self, host, port):", "def __init__(self, host, port, scheme):"
            )
            .replace(
                "        self.port = port", "        self.port = port\n        self.scheme = scheme"
            )
            .replace('return f"http://{', 'return f"{self.scheme}://{'),
            "a new field used where it belongs",
        ),
        _hand(
            "signature-done",
            _CONFIG,
            [
                ("def __init__(self, host, port):", "def __init__(self, host, port, scheme):"),
                (
                    "        self.port = port",
                    "        self.port = port\n        self.scheme = scheme",
                ),
                ('return f"http://{', 'return f"{self.scheme}://{'),
            ],
            None,
            "the new field is stored and used: done",
        ),
        _hand(
            "repeated-edit",
            _LOG,
            [('out.write("name,size\\n")', 'out.write("name;size\\n")')],
            _LOG.replace("name,size", "name;size")
            .replace("{row.name},{row.size}", "{row.name};{row.size}")
            .replace("total,%d", "total;%d"),
            "the separator changed in the header: the rows and total follow",
        ),
        _hand(
            "unrelated",
            _LOG,
            [
                (
                    "def report(rows, out):\n",
                    'def report(rows, out):\n    """Write rows as CSV."""\n',
                )
            ],
            None,
            "a docstring added",
        ),
    ]


def main() -> None:
    scenarios = build()
    save(scenarios)
    kinds: dict[str, int] = {}
    for scenario in scenarios:
        kinds[scenario.kind] = kinds.get(scenario.kind, 0) + 1
    wanting = sum(s.wants_edit for s in scenarios)
    sys.stdout.write(f"{len(scenarios)} scenarios ({wanting} want an edit) -> {DATA}: {kinds}\n")


if __name__ == "__main__":
    main()
