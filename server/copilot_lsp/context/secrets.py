"""Secrets written into source files, kept out of the prompt's code from other places.

The index never reads secret files (context/workspace_files.py), but a tracked source file
may still hold a key: `OPENAI_API_KEY = "sk-…"` in a settings module, a private key pasted
into a test. Whatever the prompt carries from another file (a module's API lists its
assignments, similar code sends windows, open tabs their definitions, recent edits their
lines) passes `redact` on its way into the prompt (completion/assembly.py): well-known token
formats wherever they stand, a PEM private key block, and the string literal assigned to a
name that says it holds a secret (`password`, `api_key`, `client_secret`, …) when it looks
like one. The replacement keeps the lines and the quotes, so the code still reads as code.
Snippets are small and repeat from keystroke to keystroke: `redact` is memoised.
"""

from __future__ import annotations

import functools
import re

PLACEHOLDER = "<redacted>"

_TOKENS = re.compile(
    r"""
    \b(?:
        sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}       # OpenAI, Anthropic
      | (?:AKIA|ASIA)[0-9A-Z]{16}                    # AWS access key id
      | gh[pousr]_[A-Za-z0-9]{36,}                   # GitHub tokens
      | github_pat_[A-Za-z0-9_]{40,}
      | glpat-[A-Za-z0-9_\-]{20,}                    # GitLab
      | xox[abprs]-[A-Za-z0-9\-]{10,}                # Slack
      | AIza[0-9A-Za-z_\-]{35}                       # Google API key
      | (?:sk|rk)_live_[0-9A-Za-z]{16,}              # Stripe
      | hf_[A-Za-z0-9]{30,}                          # Hugging Face
      | npm_[A-Za-z0-9]{36}
      | eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}  # a JWT
    )
    """,
    re.VERBOSE,
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[A-Za-z0-9+/=\s\\\"',]|\\n){40,}?"  # base64 lines (in a string: `\n`, quotes)
    r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
)
_SECRET_NAME = (
    r"[\w$]*?(?:passw(?:or)?d|passwd|pwd|secret|api_?key|apikey|access_?key|"
    r"private_?key|auth_?token|access_?token|refresh_?token|bearer|credential)s?[\w$]*"
)
_ASSIGNED = re.compile(
    rf"""(?ix)
    (?P<name>["']?\b{_SECRET_NAME}["']?)      # a name, or a quoted key of a mapping
    (?P<op>\s*(?::\s*[\w\[\]., |]+?\s*)?(?:=|:=|:|=>)\s*)  # =, :=, a typed =, a mapping's :
    (?P<quote>["'`])(?P<value>[^"'`\n]{{8,}})(?P=quote)
    """
)
_HINTS = re.compile(
    r"passw|pwd|secret|api_?key|apikey|access_?key|private_?key|token|bearer|credential"
    r"|sk-|akia|asia|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|aiza|_live_|hf_|npm_|eyj"
)
"""What a line holding a secret has, lowercased: the patterns above run on those lines only."""
_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://[^@]*$")
_WORDS = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)*")


@functools.lru_cache(maxsize=4096)
def redact(text: str) -> str:
    """`text` with the secrets it holds replaced by `PLACEHOLDER` (same lines, same quotes)."""
    if "-----BEGIN" in text:
        text = _PRIVATE_KEY.sub(_keep_lines, text)
    if not _HINTS.search(text.lower()):
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _HINTS.search(line.lower()):
            lines[number] = _ASSIGNED.sub(_value_redacted, _TOKENS.sub(PLACEHOLDER, line))
    return "\n".join(lines)


def _keep_lines(match: re.Match[str]) -> str:
    return PLACEHOLDER + "\n" * match.group(0).count("\n")


def _value_redacted(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _looks_secret(value):
        return match.group(0)
    quote = match.group("quote")
    return f"{match.group('name')}{match.group('op')}{quote}{PLACEHOLDER}{quote}"


def _looks_secret(value: str) -> bool:
    """Whether a value assigned to a secret's name looks like one: no prose, template or type
    (`"Optional[str]"`), no URL without credentials, no words (`"ANTHROPIC_API_KEY"`,
    `"X-Api-Key"`); a digit, mixed case, or 24 letters at least."""
    if PLACEHOLDER in value or any(c.isspace() or c in "{}%[]()<>" for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    if _URL.match(value) or (not has_digit and _WORDS.fullmatch(value)):
        return False
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit or mixed or (len(value) >= 24 and value.isalnum())
