"""A small, deterministic YAML writer for the generated manifests in deploy/.

Block style only: mappings, lists, strings, integers, booleans. A string is written plain when
YAML would read it back as the same string, single-quoted otherwise (JSON inside an argument
stays readable), and double-quoted (YAML escapes) when it holds a line break or another
unprintable character. The server needs no YAML library at run time for this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_PLAIN = re.compile(r"[A-Za-z0-9_./$()][A-Za-z0-9_./$()=@:+-]*|--?[A-Za-z0-9][A-Za-z0-9_./=-]*")
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
# What a YAML 1.1 reader (PyYAML, Kubernetes' sigs.k8s.io/yaml) would not read as a string.
_RESERVED = re.compile(
    r"(?i:y|n|yes|no|true|false|on|off|null|~)|[-+]?(\d[\d_]*(\.[\d_]*)?|\.[\d_]+)([eE][-+]?\d+)?"
    r"|[-+]?0[xob][0-9a-fA-F_]+|[-+]?\.(?i:inf|nan)|[-+]?\d[\d_]*(:[0-5]?\d)+(\.[\d_]*)?"
    r"|\d{4}-\d\d?-\d\d?([Tt ].*)?|[-+]?\.|=|<<"
)


def dump(value: Any) -> str:
    """`value` as a YAML document (ends with a newline)."""
    return "\n".join(_lines(value, 0)) + "\n"


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as YAML")
    if _PLAIN.fullmatch(value) and not _RESERVED.fullmatch(value) and not value.endswith(":"):
        return value
    return _quoted(value)


def _key(key: str) -> str:
    return key if _KEY.fullmatch(key) and not _RESERVED.fullmatch(key) else _quoted(key)


def _quoted(value: str) -> str:
    if value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    return '"' + "".join(_escaped(char) for char in value) + '"'


def _escaped(char: str) -> str:
    """One character inside a YAML double-quoted scalar (YAML's own escapes)."""
    if char in '"\\':
        return "\\" + char
    if char.isprintable():
        return char
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        lines = []
        for key, item in value.items():
            if _is_block(item):
                lines.append(f"{pad}{_key(key)}:")
                lines += _lines(item, indent + (0 if _is_list(item) else 2))
            else:
                lines.append(f"{pad}{_key(key)}: {_inline(item)}")
        return lines
    if _is_list(value):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            if _is_block(item):
                nested = _lines(item, indent + 2)
                lines.append(f"{pad}- {nested[0].lstrip()}")
                lines += nested[1:]
            else:
                lines.append(f"{pad}- {_inline(item)}")
        return lines
    return [pad + scalar(value)]


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _is_block(value: Any) -> bool:
    return bool(value) and (isinstance(value, Mapping) or _is_list(value))


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if _is_list(value):
        return "[]"
    return scalar(value)
