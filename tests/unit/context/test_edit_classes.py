"""Every class of edit an editor sends (typing, Enter, deleting a line, pasting a block, undoing
a large change as a range or as the whole text) leaves a document's syntax, its definitions
and the prompt built from it equal to those of the same text opened fresh, and re-parses the
statements around the edit only, not the file (context/forest.py)."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Iterator

import pytest
from tree_sitter import Node

from copilot_lsp.completion.assembly import Limits, build_prompt
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import load_template
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context import snippets, validate
from copilot_lsp.context import syntax as syntax_module
from copilot_lsp.context.definition_cache import DefinitionCache, definitions_incremental
from copilot_lsp.context.documents import Document, DocumentStore, Edit
from copilot_lsp.context.index import DefinitionIndex
from copilot_lsp.context.languages import grammar
from copilot_lsp.context.outline import Outline
from copilot_lsp.context.syntax import SyntaxTree, encode
from copilot_lsp.positions import Position, line_starts
from copilot_lsp.settings import CompletionSettings

FAR = time.perf_counter() + 3600
CLASSES = ["typing", "enter", "delete_line", "paste", "undo_range", "undo_full"]

UNITS = [
    '''@dataclass
class Record{i}:
    """Record {i}."""

    name: str
    count: int = 0

    def total(self, factor: int) -> int:
        value = self.count * factor + {i}
        if value > 100:
            return value - 100
        # a comment inside the method
        return value
''',
    """def build_{i}(items: list[str]) -> list[str]:
    try:
        records = sorted(
            items,
            key=len,
        )
    except ValueError:
        records = []
    else:
        records.append("x")
    total = 1 + \\
        2
    return records  # built by build_{i}
# a comment at column 0 after a function

""",
    '''TABLE_{i} = {{
    "a": [1, 2, 3],
    "b": (4, 5),
}}
QUERY_{i} = """
select *
from table_{i}
"""
''',
    """class Outer{i}:
    class Inner:
        pass

    @staticmethod
    def make(a, b=2, *args, **kwargs):
        for item in args:
            if item:
                break
        else:
            return None
        return [x for x in args if x]
        # trailing comment, indented

""",
    """if __name__ == "main_{i}":
    print("main")
elif False:
    pass
else:
    value_{i} = lambda x: x + {i}
""",
]


def module(units: int) -> str:
    """A Python module with the constructs whose parse depends on what surrounds them:
    decorators, else/except clauses, brackets and strings over several lines, comments at
    column 0 and indented, line continuations (about 15 lines per unit)."""
    head = '"""A generated module."""\n\nimport os\nfrom dataclasses import dataclass\n\n\n'
    return head + "\n\n".join(UNITS[i % len(UNITS)].format(i=i) for i in range(units))


@dataclasses.dataclass(frozen=True)
class Step:
    edit: Edit
    cursor: Position


def steps(kind: str, lines: list[str], rng: random.Random) -> Iterator[Step]:
    """Random edits of one class anywhere in the file: many leave a syntax error behind (a
    line deleted out of a block, a paste in the middle of a statement), as editing does."""
    count = len(lines)
    line = rng.randrange(1, count - 30)
    current = lines[line]
    end = len(current)
    indent = current[: len(current) - len(current.lstrip())]
    if kind == "typing":
        for column, char in enumerate("x = f(y)"[: rng.randrange(1, 8)]):
            at = Position(line, end + column)
            yield Step(Edit(char, at, at), Position(line, end + column + 1))
    elif kind == "enter":
        at = Position(line, end)
        yield Step(Edit("\n" + indent, at, at), Position(line + 1, len(indent)))
    elif kind == "delete_line":
        yield Step(Edit("", Position(line, 0), Position(line + 1, 0)), Position(line - 1, 0))
    elif kind == "paste":
        source = rng.randrange(0, count - 25)
        block = "\n".join(lines[source : source + rng.randrange(5, 25)]) + "\n"
        at = Position(line, 0)
        yield Step(Edit(block, at, at), Position(line + block.count("\n"), 0))
    elif kind == "undo_range":
        size = rng.randrange(20, 120)
        block = "\n".join(lines[line : line + size]) + "\n"
        yield Step(Edit("", Position(line, 0), Position(line + size, 0)), Position(line, 0))
        yield Step(Edit(block, Position(line, 0), Position(line, 0)), Position(line + size, 0))
    elif kind == "undo_full":
        size = rng.randrange(20, 120)
        before = "\n".join(lines)
        shorter = "\n".join(lines[:line] + lines[line + size :])
        yield Step(Edit(shorter), Position(line, 0))
        yield Step(Edit(before), Position(line + size, 0))


def edited(kind: str, rounds: int, seed: int = 0) -> Iterator[tuple[Document, Position]]:
    """A large module opened, then `rounds` rounds of `kind`: the document after each edit."""
    store = DocumentStore()
    document = store.open("file:///m.py", "python", 1, module(120))
    rng = random.Random(f"{kind}-{seed}")
    version = 1
    for _ in range(rounds):
        for step in steps(kind, document.text.split("\n"), rng):
            version += 1
            store.change(document.uri, version, [step.edit], "utf-16")
            yield document, step.cursor


def tops(outline: Outline) -> list[tuple[str, int, int, int, int, str]]:
    return [
        (
            node.type,
            node.start_byte + block.byte,
            node.end_byte + block.byte,
            node.start_point[0] + block.row,
            node.end_point[0] + block.row,
            str(node),
        )
        for node, block in outline
    ]


@pytest.mark.parametrize("kind", CLASSES)
def test_the_outline_after_edits_equals_a_fresh_parse(kind: str) -> None:
    checked = errors = 0
    cache = DefinitionCache()
    for document, cursor in edited(kind, 25):
        text = document.text
        assert document.syntax is not None
        outline = document.syntax.outline(text)
        fresh_syntax = SyntaxTree.for_language("python", text)
        assert fresh_syntax is not None
        fresh = fresh_syntax.tree(text)
        assert tops(outline) == tops(snippets.outline_of(fresh)), kind
        assert document.starts == line_starts(text)
        errors += fresh.root_node.has_error
        # What the prompt reads from it: imports, the headers around the cursor, definitions.
        assert snippets.imports(outline, "python", FAR) == snippets.imports(fresh, "python", FAR)
        at = len(encode(text[: document.offset(cursor, "utf-16")]))
        assert snippets.enclosing_headers(outline, "python", at, FAR) == (
            snippets.enclosing_headers(fresh, "python", at, FAR)
        )
        found = definitions_incremental(outline, "python", FAR, cache, document.syntax.changes)
        assert dict(found) == snippets.definitions(fresh, "python", FAR)
        checked += 1
    assert checked >= 25
    if kind not in ("enter", "undo_range", "undo_full"):
        assert errors, "some edits leave a syntax error: the whole-text parse is checked too"


@pytest.mark.parametrize("kind", ["enter", "delete_line", "paste", "undo_range", "undo_full"])
def test_edits_in_a_valid_file_reparse_the_statements_around_them(kind: str) -> None:
    text = module(400)  # about 5,700 lines, 90 kB
    lines = text.split("\n")
    store = DocumentStore()
    document = store.open("file:///m.py", "python", 1, text)
    syntax = document.syntax
    assert syntax is not None
    size = len(encode(text))
    before = syntax.parsed_bytes
    rng = random.Random(kind)
    edits = 0
    for version in range(2, 40):
        # Edits that keep the file valid: at top-level boundaries (between units), where the
        # parse of the whole file would re-lex everything after them.
        boundaries = [i for i, line in enumerate(lines) if line.startswith(("def ", "@"))]
        line = rng.choice(boundaries[1:-3])
        following = boundaries[boundaries.index(line) + 2]
        if kind == "enter":
            edit = Edit("\n", Position(line - 1, 0), Position(line - 1, 0))
        elif kind == "delete_line":
            if lines[line - 1].strip():
                continue
            edit = Edit("", Position(line - 1, 0), Position(line, 0))
        elif kind == "paste":
            block = "\n".join(lines[line:following]) + "\n"
            edit = Edit(block, Position(line, 0), Position(line, 0))
        elif kind == "undo_range":
            edit = Edit("", Position(line, 0), Position(following, 0))
        else:
            edit = Edit("\n".join(lines[:line] + lines[following:]))
        store.change(document.uri, version, [edit], "utf-16")
        lines = document.text.split("\n")
        outline = syntax.outline(document.text)
        assert outline.root is None, "assembled from parts, not parsed whole"
        edits += 1
    # A handful of statements per edit, where a whole parse hands over the whole file.
    assert syntax.parsed_bytes - before < edits * size / 20
    assert not syntax.tree(document.text).root_node.has_error


def test_a_syntax_error_falls_back_to_the_whole_parse_and_back() -> None:
    text = module(120)
    store = DocumentStore()
    document = store.open("file:///m.py", "python", 1, text)
    syntax = document.syntax
    assert syntax is not None
    line = text.split("\n").index("def build_1(items: list[str]) -> list[str]:")
    at = Position(line - 1, 0)
    store.change(document.uri, 2, [Edit("x = (\n", at, at)], "utf-16")
    broken = syntax.outline(document.text)
    assert broken.root is not None and broken.root.has_error
    store.change(
        document.uri, 3, [Edit(")", Position(line - 1, 5), Position(line - 1, 5))], "utf-16"
    )
    assert syntax.outline(document.text).root is not None  # whole: parsed after an error
    store.change(
        document.uri, 4, [Edit("1", Position(line - 1, 5), Position(line - 1, 5))], "utf-16"
    )
    healed = syntax.outline(document.text)
    assert healed.root is None  # in parts again
    fresh = SyntaxTree.for_language("python", document.text)
    assert fresh is not None
    assert tops(healed) == tops(snippets.outline_of(fresh.tree(document.text)))


def test_a_statement_edited_again_is_parsed_from_its_own_last_parse() -> None:
    # After its first edit a statement is a block of its own parse, which later edits in it
    # re-parse incrementally; an edit of the blank lines around it (same length or not)
    # makes that parse stale, and must not be reused for the statement's text.
    text = module(120)
    store = DocumentStore()
    document = store.open("file:///m.py", "python", 1, text)
    syntax = document.syntax
    assert syntax is not None
    line = text.split("\n").index("def build_6(items: list[str]) -> list[str]:")
    edits = [
        Edit("x = 1\n", Position(line + 1, 4), Position(line + 1, 4)),  # its own block now
        Edit(" ", Position(line - 1, 0), Position(line - 1, 0)),  # the blank line above it
        Edit("\t", Position(line - 1, 0), Position(line - 1, 1)),  # same length, other text
        Edit("y = 2\n", Position(line + 1, 4), Position(line + 1, 4)),
        Edit("", Position(line + 1, 4), Position(line + 1, 6)),
        Edit("z", Position(line + 2, 4), Position(line + 2, 4)),
    ]
    for version, edit in enumerate(edits, start=2):
        store.change(document.uri, version, [edit], "utf-16")
        outline = syntax.outline(document.text)
        fresh = SyntaxTree.for_language("python", document.text)
        assert fresh is not None
        assert tops(outline) == tops(snippets.outline_of(fresh.tree(document.text))), edit


def test_text_before_the_first_statement_does_not_shift_definitions_or_headers() -> None:
    # The root's own text starts at the first token: sliced at node positions it was off by
    # the leading blank lines (definitions named ')', headers cut mid-word).
    text = "\n\n# leading comment\nimport os\n\ndef f(a):\n    return a\n"
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    for source in (syntax.tree(text), syntax.outline(text)):
        assert dict(definitions_incremental(source, "python", FAR, DefinitionCache())) == {
            "f": [snippets.Definition("f", "def f(a):", 5)]
        }
        assert snippets.enclosing_headers(source, "python", text.index("return"), FAR) == [
            (5, "def f(a):")
        ]
        assert snippets.imports(source, "python", FAR) == ["import os"]
    assert snippets.definitions(syntax.tree(text), "python", FAR)["f"][0].header == "def f(a):"


def unhurried_workspace() -> Workspace:
    """A workspace whose definitions are never cut short by their deadline (this machine may
    be busy; what is compared is what they hold)."""
    workspace = Workspace()
    workspace.definitions = DefinitionIndex(deadline_ms=1e9)
    workspace.set_root("file:///work")
    return workspace


@pytest.mark.parametrize("kind", CLASSES)
def test_the_prompt_after_edits_equals_the_prompt_for_the_text_opened_fresh(kind: str) -> None:
    template, counter = load_template("smollm2"), TokenCounter()
    options = CompletionSettings()
    limits = Limits(
        max_tokens=template.budget(None) or 2048,
        prefix_lines=options.prefix_lines,
        suffix_lines=options.suffix_lines,
        snippets=True,
        snippet_deadline_ms=1e6,
    )
    uri = "file:///work/m.py"
    workspace = unhurried_workspace()
    workspace.open(uri, "python", 1, module(120))
    rng = random.Random(kind)
    version = 1
    for _ in range(12):
        for step in steps(kind, workspace.documents.get(uri).text.split("\n"), rng):
            version += 1
            workspace.change(uri, version, [step.edit], "utf-16")
            edited = workspace.request(uri, step.cursor, "utf-16", automatic=True, options=options)
            fresh_workspace = unhurried_workspace()
            fresh_workspace.open(uri, "python", 1, workspace.documents.get(uri).text)
            fresh = fresh_workspace.request(
                uri, step.cursor, "utf-16", automatic=True, options=options
            )
            assert edited is not None and fresh is not None
            assert edited.prompt.starts == fresh.prompt.starts
            # The places edited last are the edited document's own: the same for both.
            same_places = dataclasses.replace(fresh.prompt, recent=edited.prompt.recent)
            assert build_prompt(edited.prompt, template, counter, limits).prompt == (
                build_prompt(same_places, template, counter, limits).prompt
            )


def test_trimming_a_completion_with_the_outline_keeps_the_verdict_of_whole_parses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A multi-line completion is cut to its longest prefix that leaves the fewest syntax
    # errors. With the document's outline, a prefix that leaves none is known so from the
    # statements it lands in: the result is the same, without a parse of the whole file.
    text = module(120)
    lines = text.split("\n")
    syntax = SyntaxTree.for_language("python", text)
    assert syntax is not None
    outline = syntax.outline(text)
    language = grammar("python")
    assert language is not None
    whole_parses = 0
    count_errors = syntax_module.error_count

    def counting(node: Node) -> int:
        nonlocal whole_parses
        whole_parses += 1
        return count_errors(node)

    monkeypatch.setattr(validate, "error_count", counting)
    rng = random.Random(7)
    clean = 0
    for _ in range(30):
        line = rng.randrange(5, len(lines) - 5)
        at = sum(len(x) + 1 for x in lines[:line])
        first = rng.randrange(0, len(lines) - 10)
        completion = "\n".join(lines[first : first + rng.randrange(1, 6)]) + "\n"
        whole_parses = 0
        judged = validate.trim_to_valid_syntax(
            language, text[:at], completion, text[at:], deadline_ms=1e6, syntax=outline
        )
        with_outline, whole_parses = whole_parses, 0
        alone = validate.trim_to_valid_syntax(
            language, text[:at], completion, text[at:], deadline_ms=1e6
        )
        assert judged == alone
        clean += with_outline < whole_parses
    assert clean >= 5, "some completions were judged from their statements alone"
