"""Prompt templates per model family (configs/models/*.toml), chosen by configuration.

A template names where the prefix, suffix, snippets, file path and repository go; the
family's stop sequences end generation where the format says the middle is over.
"""

from __future__ import annotations

import functools
import re
import tomllib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from copilot_lsp import paths
from copilot_lsp.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{(prefix|suffix|snippets|path|repo|content)\}")
_CURRENT_FILE = re.compile(r"\{(prefix|suffix)\}")

# Line-comment leaders, for snippets rendered as comments.
COMMENT = {
    "python": "#",
    "ruby": "#",
    "shellscript": "#",
    "lua": "--",
    "sql": "--",
}


def comment_leader(language_id: str) -> str:
    return COMMENT.get(language_id, "//")


DEFAULT_PROMPT_TOKENS = 1024
"""The prompt budget when neither `prompt.maxTokens` nor the family sets one."""


class Snippet(BaseModel):
    """Code from elsewhere that the model should see: a path and its text."""

    model_config = ConfigDict(frozen=True)

    path: str
    text: str
    kind: str


class PromptTemplate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    template: str
    snippet_style: Literal["comments", "files", "headers"] = "comments"
    """How code from other files reads: `comments` (every line commented, under a commented
    kind and path), `files` (`file_template` per snippet: a format's repository tokens) or
    `headers` (the code as it is under a commented path, then the current file's commented
    path: for models with no repository format)."""
    file_template: str = "{content}\n"
    stop: list[str] = []
    tokenizer: str | None = None
    """`embedded` for the embedded model's tokenizer.json (counted exactly when prepared)."""
    detect: list[str] = []
    """Case-insensitive regular expressions over a served model's id and path that pick this
    family when `prompt.family` is unset (completion/families.py)."""
    fim_markers: list[str] = []
    """Special tokens the format needs; a model whose tokenizer splits them lacks them."""
    repo_variant: str | None = None
    """The family to use instead when the prompt carries code from other files."""
    prompt_tokens: int | None = Field(default=None, ge=64)
    """The prompt's token budget when `prompt.maxTokens` is unset (default: 1024)."""

    def budget(self, configured: int | None) -> int:
        """The prompt's token budget: the setting, else this family's, else 1024."""
        return configured or self.prompt_tokens or DEFAULT_PROMPT_TOKENS

    @property
    def uses_suffix(self) -> bool:
        return "{suffix}" in self.template

    def render(
        self,
        *,
        prefix: str,
        suffix: str,
        snippets: list[Snippet],
        path: str,
        repo: str,
        language_id: str,
    ) -> str:
        values = {
            "prefix": prefix,
            "suffix": suffix,
            "path": path,
            "repo": repo,
            "snippets": self.render_snippets(snippets, language_id, path),
        }
        return _fill(self.template, values)

    def head(self, *, snippets: list[Snippet], path: str, repo: str, language_id: str) -> str:
        """The rendered prompt up to where the current file's code starts (its first `{prefix}`
        or `{suffix}`): the part that stays the same while the user types in one place, so
        `render` with the same snippets, path and repo starts with exactly this text."""
        cut = _CURRENT_FILE.search(self.template)
        values = {
            "path": path,
            "repo": repo,
            "snippets": self.render_snippets(snippets, language_id, path),
        }
        return _fill(self.template[: cut.start() if cut else len(self.template)], values)

    def render_snippets(self, snippets: list[Snippet], language_id: str, path: str = "") -> str:
        if not snippets:
            return ""
        if self.snippet_style == "files":
            return "".join(
                _fill(self.file_template, {"path": s.path, "content": s.text}) for s in snippets
            )
        leader = comment_leader(language_id)
        if self.snippet_style == "headers":
            blocks = [
                f"{leader} {s.path}\n{_as_code(s.text, language_id)}"
                if _balanced(s.text)
                else _commented(s, leader)
                for s in snippets
            ]
            return "\n\n".join(blocks) + f"\n\n{leader} {path}\n"
        return "\n".join(_commented(s, leader) for s in snippets) + "\n\n"


def _commented(snippet: Snippet, leader: str) -> str:
    lines = [f"{leader} {snippet.kind} ({snippet.path}):"]
    lines += [f"{leader} {line}".rstrip() for line in snippet.text.split("\n")]
    return "\n".join(lines)


_PY_HEADERS = ("def ", "class ", "async def ")


def _as_code(text: str, language_id: str) -> str:
    """`text` as code that parses: in Python a header with no body under it (`def f(x):`)
    gets `...` for one."""
    if language_id != "python":
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not (line.rstrip().endswith(":") and line.lstrip().startswith(_PY_HEADERS)):
            continue
        indent = len(line) - len(line.lstrip())
        below = next((other for other in lines[number + 1 :] if other.strip()), None)
        if below is None or len(below) - len(below.lstrip()) <= indent:
            lines[number] = line.rstrip() + " ..."
    return "\n".join(lines)


def _balanced(text: str) -> bool:
    """Whether `text` closes every bracket it opens (a header cut inside a call does not: as
    code it would leave the model inside that call, so it goes in as a comment)."""
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _fill(template: str, values: dict[str, str]) -> str:
    # One pass over the template only: code containing "{suffix}" stays as it is.
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), ""), template)


def available_families() -> list[str]:
    return sorted(path.stem for path in (paths.configs_root() / "models").glob("*.toml"))


@functools.cache
def load_template(family: str) -> PromptTemplate:
    path = paths.configs_root() / "models" / f"{family}.toml"
    if not path.is_file():
        known = ", ".join(available_families()) or "none"
        raise ConfigError(f"no model family {family!r} in configs/models (known: {known})")
    try:
        return PromptTemplate.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as error:
        raise ConfigError(f"invalid model family file {path}: {error}") from None
