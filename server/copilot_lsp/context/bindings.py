"""The names a Python module binds at its top: what `import m; m.<name>` can reach.

Generous by design: a name that may be bound counts (an assignment under `if`, `try` or a
loop, an import under `if TYPE_CHECKING:`, the targets of `x[i] = …`), since the set
limits what a completion may write after `m.` (context/members.py) and a name missing
from it would forbid a right answer. A module whose names cannot be known from its text
(`from x import *`, a module-level `__getattr__`, `globals()`, `sys.modules[…]`, `exec`) has
no set (None).
"""

from __future__ import annotations

import re

import tree_sitter

_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})
"""Nodes whose insides bind names of their own, not the module's (their name is the
module's: `def f` binds `f`)."""
_COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"}
)
_TARGET_FIELDS = {
    "assignment": "left",
    "augmented_assignment": "left",
    "for_statement": "left",
    "named_expression": "name",
    "type_alias_statement": "left",
}
_OPEN = re.compile(rb"\bglobals\(\)|\bsys\.modules\[|(?<![\w.])exec\(|\bvars\(\)")
"""Ways a module binds names its text does not show."""

MODULE_ATTRIBUTES = frozenset(
    {
        "__name__",
        "__file__",
        "__doc__",
        "__spec__",
        "__loader__",
        "__package__",
        "__path__",
        "__dict__",
        "__builtins__",
        "__cached__",
        "__annotations__",
        "__class__",
    }
)
"""What every module has besides what its code binds."""


def python_bindings(root: tree_sitter.Node, source: bytes) -> tuple[str, ...] | None:
    """The names module `root` (parsed from `source`) binds, sorted; None when they cannot
    be known from its text."""
    if _OPEN.search(source):
        return None
    found: set[str] = set()
    stack = list(root.named_children)
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("import_statement", "import_from_statement", "future_import_statement"):
            if not _imports(node, source, found):
                return None
            continue
        if kind in _SCOPES:
            name = node.child_by_field_name("name")
            if name is not None:
                found.add(_text(name, source))
            stack += _descendants(node, "global_statement")  # they bind the module's
            continue
        if kind in _COMPREHENSIONS:
            stack += _descendants(node, "named_expression", _SCOPES)  # `(x := …)` binds x
            continue
        field = _TARGET_FIELDS.get(kind)
        target = node.child_by_field_name(field) if field else None
        if target is not None:
            found.update(_identifiers(target, source))
        elif kind == "as_pattern":  # with … as x, except E as x
            alias = node.child_by_field_name("alias")
            if alias is not None:
                found.update(_identifiers(alias, source))
        elif kind == "global_statement":
            found.update(_identifiers(node, source))
        stack += node.named_children
    if "__getattr__" in found:
        return None
    return tuple(sorted(found))


def _imports(node: tree_sitter.Node, source: bytes, found: set[str]) -> bool:
    """Add what an import binds; False for `from x import *`."""
    if node.type == "import_from_statement":
        if any(child.type == "wildcard_import" for child in node.children):
            return False
        module = node.child_by_field_name("module_name")
        names = [child for child in node.named_children if child != module]
    else:
        names = list(node.named_children)
        if node.type == "future_import_statement":
            names = [child for child in names if child.type != "dotted_name" or child.prev_sibling]
    for name in names:
        if name.type == "aliased_import":
            alias = name.child_by_field_name("alias")
            if alias is not None:
                found.add(_text(alias, source))
        elif name.type == "dotted_name":
            # `import a.b` binds `a`; `from m import a` binds `a`
            found.add(_text(name, source).split(".", 1)[0].strip())
    return True


def _descendants(
    node: tree_sitter.Node, kind: str, through: frozenset[str] = frozenset()
) -> list[tree_sitter.Node]:
    """The nodes of type `kind` under `node`, not entering them nor nodes of a type in
    `through`."""
    found: list[tree_sitter.Node] = []
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        if child.type == kind:
            found.append(child)
        elif child.type not in through:
            stack += child.named_children
    return found


def _identifiers(node: tree_sitter.Node, source: bytes) -> set[str]:
    found = [node] if node.type == "identifier" else _descendants(node, "identifier")
    return {_text(identifier, source) for identifier in found}


def _text(node: tree_sitter.Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
