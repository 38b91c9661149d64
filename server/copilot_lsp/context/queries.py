"""Node types that matter for context, per language family."""

from __future__ import annotations

# Statements that bring names into a file.
IMPORTS: dict[str, frozenset[str]] = {
    "python": frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
    "javascript": frozenset({"import_statement"}),
    "typescript": frozenset({"import_statement"}),
    "go": frozenset({"package_clause", "import_declaration"}),
    "rust": frozenset({"use_declaration", "extern_crate_declaration"}),
}

# Definitions: node type -> the field holding its name.
DEFINITIONS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "name", "class_definition": "name"},
    "javascript": {
        "function_declaration": "name",
        "generator_function_declaration": "name",
        "class_declaration": "name",
        "method_definition": "name",
    },
    "typescript": {
        "function_declaration": "name",
        "class_declaration": "name",
        "abstract_class_declaration": "name",
        "method_definition": "name",
        "interface_declaration": "name",
        "type_alias_declaration": "name",
        "enum_declaration": "name",
    },
    "go": {
        "function_declaration": "name",
        "method_declaration": "name",
        "type_spec": "name",
    },
    "rust": {
        "function_item": "name",
        "struct_item": "name",
        "enum_item": "name",
        "trait_item": "name",
        "type_item": "name",
        "impl_item": "type",
        "mod_item": "name",
        "function_signature_item": "name",
        "const_item": "name",
        "static_item": "name",
    },
}

# The field that holds a definition's body: its header is everything before it.
BODY_FIELDS = ("body", "block", "value")

# Words that are never worth looking up as definitions.
KEYWORDS = frozenset(
    [
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "def",
        "default",
        "defer",
        "del",
        "elif",
        "else",
        "enum",
        "except",
        "export",
        "extends",
        "false",
        "fn",
        "for",
        "from",
        "func",
        "function",
        "go",
        "if",
        "impl",
        "import",
        "in",
        "interface",
        "is",
        "let",
        "loop",
        "match",
        "mod",
        "mut",
        "new",
        "nil",
        "none",
        "not",
        "null",
        "or",
        "pass",
        "pub",
        "raise",
        "return",
        "self",
        "static",
        "struct",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "use",
        "var",
        "where",
        "while",
        "with",
        "yield",
    ]
)
