"""The settings and commands reference in docs/, rendered from the code that defines them.

`make docs` writes docs/settings.md and docs/commands.md; tests/unit/project/test_reference_docs.py
fails when either differs from what this renders, so the reference cannot drift from the
settings models or the command parsers.

    python -m copilot_lsp.cli.reference docs/
"""

from __future__ import annotations

import argparse
import os
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from copilot_lsp.cli.output import walk_commands
from copilot_lsp.settings import Settings

HELP_WIDTH = 100
"""Columns the help texts are wrapped at (argparse reads $COLUMNS; fixed so the text is the
same on every terminal)."""

SETTINGS_INTRO = """\
# Settings reference

Generated from `server/copilot_lsp/settings.py` by `make docs`; a test keeps it in step.

Every setting has a default; set only what you change. Layers, lowest first:

1. the defaults below;
2. the settings file: `$COPILOT_LSP_SETTINGS_FILE`, else `settings.toml` in the user config
   directory (`~/.config/copilot-lsp/settings.toml`), TOML with one table per section
   (`[engine]`, `[completion]`, …) and snake_case or camelCase keys;
3. environment variables `COPILOT_LSP_<SECTION>_<FIELD>` (e.g. `COPILOT_LSP_ENGINE_URL`,
   `COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_URL` for a subsection's field); lists and objects
   as JSON, and a whole section or subsection as one JSON object
   (`COPILOT_LSP_CONTEXT_WORKSPACE='{"enabled": false}'`);
4. the editor's `initializationOptions` (same tree, camelCase);
5. the editor's settings, section `copilotLsp` (VS Code `copilotLsp.*`, Neovim
   `settings = { copilotLsp = { … } }`), sent through `workspace/configuration`.

The editor's own settings (how it starts the server, its status bar, per-language switches)
share that section under one key, `client` (VS Code `copilotLsp.client.serverPath`,
`copilotLsp.client.serverArgs`, `copilotLsp.client.engineProfile`, `copilotLsp.client.enable`,
`copilotLsp.client.statusIntervalS`); the server skips `client` in both editor layers, so an
editor's whole section reaches it without an unknown key. The VS Code extension's names up to
0.1.0 (`copilotLsp.serverPath`, `serverArgs`, `engine.profile`, `enable`, `statusIntervalS`,
`debounceMs`, `streaming`) still work, each with one deprecation warning naming its new key;
`debounceMs` and `streaming` apply as `completion.debounceMs` and `editor.streaming`, over
those keys while the old name is set. The Neovim plugin's own options are `setup()`'s; its
`init_options` are the server's tree.

Layers merge field by field: a file with a syntax error is skipped with one message naming it
and the line; a field of the wrong type or out of range is reported once and dropped, the rest
of its layer still applies; an unknown key gets a did-you-mean message.
"""

COMMANDS_INTRO = """\
# Commands reference

Generated from the command parsers (`server/copilot_lsp/cli/`) by `make docs`; a test keeps
it in step. `copilot-lsp COMMAND --help` prints the same text. Each option's default is shown
where it has one.
"""


def render_settings() -> str:
    lines = [SETTINGS_INTRO]
    for section_name, section_field in Settings.model_fields.items():
        section = _model_of(section_field)
        lines += [f"\n## `{to_camel(section_name)}`\n"]
        doc = section.__doc__
        if doc and not doc.startswith(f"{section.__name__}("):
            lines += [_one_paragraph(doc), ""]
        lines += [
            "| setting | environment variable | type | default | meaning |",
            "|---|---|---|---|---|",
        ]
        lines += _rows(section, to_camel(section_name), f"COPILOT_LSP_{section_name.upper()}")
    return "\n".join(lines) + "\n"


def _rows(section: type[BaseModel], prefix: str, env_prefix: str) -> list[str]:
    """One row per setting of `section`; a subsection's settings under its name, each with
    its own variable (the subsection's variable also takes them all as one JSON object)."""
    rows = []
    for name, field in section.model_fields.items():
        key = f"{prefix}.{to_camel(name)}"
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows += _rows(annotation, key, f"{env_prefix}_{name.upper()}")
            continue
        env = f"`{env_prefix}_{name.upper()}`"
        rows.append(
            f"| `{key}` | {env} | {_type_name(annotation)} | {_default(field)} "
            f"| {_cell(field.description or '')}{_bounds(field)} |"
        )
    return rows


def render_commands() -> str:
    from copilot_lsp.cli.main import build_parser

    parser = build_parser()
    blocks = [COMMANDS_INTRO]
    for path, command in walk_commands(parser, ["copilot-lsp"]):
        depth = min(len(path) + 1, 4)
        blocks += [f"\n{'#' * depth} `{' '.join(path)}`\n", "```text", _help(command), "```"]
    return "\n".join(blocks) + "\n"


def write(folder: Path) -> list[Path]:
    written = []
    for name, text in (("settings.md", render_settings()), ("commands.md", render_commands())):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _help(parser: argparse.ArgumentParser) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        return parser.format_help().rstrip()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def _model_of(field: FieldInfo) -> type[BaseModel]:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    raise TypeError(f"settings section is not a model: {annotation!r}")


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{value!r}`".replace("'", '"') for value in arguments)
    if origin in (typing.Union, types.UnionType):
        named = [_type_name(argument) for argument in arguments if argument is not type(None)]
        return " \\| ".join(named) + (" or unset" if type(None) in arguments else "")
    if origin in (list, dict):
        return f"{origin.__name__} of " + ", ".join(_type_name(argument) for argument in arguments)
    if annotation is SecretStr:
        return "secret string"
    if annotation is Any:
        return "any"
    if annotation is Path:
        return "path"
    return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
        getattr(annotation, "__name__", str(annotation)), str(annotation)
    )


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.is_required():
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def _bounds(field: FieldInfo) -> str:
    limits = []
    for metadata in field.metadata:
        for attribute, symbol in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(metadata, attribute, None)
            if value is not None:
                limits.append(f"{symbol} {value}")
    return f" ({', '.join(limits)})" if limits else ""


def _cell(text: str) -> str:
    return _one_paragraph(text).replace("|", "\\|")


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    folder = Path(arguments[0]) if arguments else Path("docs")
    for path in write(folder):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
