"""docs/settings.md and docs/commands.md are what the code renders: a setting or an option
added, renamed or re-defaulted without `make docs` fails here."""

from __future__ import annotations

from pydantic import BaseModel

from copilot_lsp.cli import reference
from copilot_lsp.cli.main import build_parser
from copilot_lsp.cli.output import walk_commands
from copilot_lsp.settings import Settings
from tests.conftest import REPO

DOCS = REPO / "docs"


def test_settings_reference_is_current() -> None:
    assert (DOCS / "settings.md").read_text(encoding="utf-8") == reference.render_settings(), (
        "docs/settings.md is stale: run `make docs`"
    )


def test_commands_reference_is_current() -> None:
    assert (DOCS / "commands.md").read_text(encoding="utf-8") == reference.render_commands(), (
        "docs/commands.md is stale: run `make docs`"
    )


def test_settings_reference_names_every_field_with_its_environment_variable() -> None:
    text = reference.render_settings()
    named = 0

    def check(model: type[BaseModel], prefix: str) -> None:
        nonlocal named
        for name, field in model.model_fields.items():
            inner = field.annotation
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                check(inner, f"{prefix}_{name.upper()}")  # a subsection: its fields each
                continue
            assert f"`{prefix}_{name.upper()}`" in text
            named += 1

    check(Settings, "COPILOT_LSP")
    assert "`COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_API_KEY`" in text
    assert named > 50


def test_commands_reference_has_every_subcommand() -> None:
    text = reference.render_commands()
    headings = {line.strip("#` ") for line in text.splitlines() if line.startswith("#")}
    for path, _parser in walk_commands(build_parser(), ["copilot-lsp"]):
        assert " ".join(path) in headings
    assert "copilot-lsp engine up" in headings


def test_make_help_lists_every_target() -> None:
    makefile = (DOCS.parent / "Makefile").read_text(encoding="utf-8")
    targets = [line.split(":")[0] for line in makefile.splitlines() if _is_target(line)]
    undocumented = [
        target
        for target, line in zip(targets, filter(_is_target, makefile.splitlines()), strict=True)
        if "## " not in line
    ]
    assert "test" in targets and "docs" in targets
    assert undocumented == [], f"targets without a `## help` comment: {undocumented}"


def _is_target(line: str) -> bool:
    name, colon, rest = line.partition(":")
    return bool(colon) and not rest.startswith("=") and name.replace("-", "").isalnum()
