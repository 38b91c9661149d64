"""Secrets written into source files are redacted from the code other files lend a prompt."""

from __future__ import annotations

import time

import pytest

from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.crossfile import charge
from copilot_lsp.context.retrieval import CrossFile
from copilot_lsp.context.secrets import PLACEHOLDER, redact
from copilot_lsp.context.workspace_files import secret_file

GITHUB = "ghp_" + "a1B2" * 9
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq+abcdefghijklmnopqrstuvwxYZ0123456789abcdefgh\n"
    "YZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX==\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("line", "redacted"),
    [
        ('OPENAI_API_KEY = "sk-proj-abcdefghijklmnopqrstuvwx1234"', 'OPENAI_API_KEY = "<r>"'),
        (f'auth = {{"Authorization": "token {GITHUB}"}}', 'auth = {"Authorization": "token <r>"}'),
        ('aws_id = "AKIAIOSFODNN7EXAMPLE"', 'aws_id = "<r>"'),
        ('const apiKey = "Zx9yW8vU7tS6rQ5p";', 'const apiKey = "<r>";'),
        ('conf = {"client_secret": "a8f5f167f44f4964e6c998de"}', 'conf = {"client_secret": "<r>"}'),
        ('db_password := "hunter22pass"', 'db_password := "<r>"'),
        ('def login(user, password="changeme1"):', 'def login(user, password="<r>"):'),
        ('api_key: str = "abc123def456"', 'api_key: str = "<r>"'),
        ("DATABASE_PASSWORD = 'postgres://app:p4ss@db/app'", "DATABASE_PASSWORD = '<r>'"),
    ],
)  # fmt: skip
def test_keys_and_values_assigned_to_secret_names_are_redacted(line: str, redacted: str) -> None:
    assert redact(line) == redacted.replace("<r>", PLACEHOLDER)


@pytest.mark.parametrize(
    "line",
    [
        'ENV_API_KEY = "ANTHROPIC_API_KEY"',  # the name of a variable, not its value
        'GRANT_TYPE = "refresh_token"',
        'HEADER = "X-Api-Key"',
        'prompt = input("Enter your password: ")',
        'token_url = "https://oauth2.example.com/token"',
        'secret_key: "Optional[str]" = None',
        'auth = f"Bearer {token}"',
        'tokenizer = "bert-base-uncased"',
        "self.password = password",
        'MAX_TOKENS = "4096"',
    ],
)
def test_names_urls_templates_and_prose_are_left_alone(line: str) -> None:
    assert redact(line) == line


def test_a_private_key_block_keeps_its_lines() -> None:
    text = f'KEY = """{PEM}"""\nafter = 1\n'
    done = redact(text)
    assert "MIIE" not in done and done.count("\n") == text.count("\n")
    assert done.endswith('"""\nafter = 1\n') and PLACEHOLDER in done
    # Code that only names the markers is no key.
    markers = 'START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
    markers += 'END = b"-----END OPENSSH PRIVATE KEY-----"'
    assert redact(markers) == markers


def test_code_from_other_files_is_charged_without_its_keys() -> None:
    api = f'OPENAI_API_KEY = "sk-live-{"k9" * 12}"\ndef ask(question: str) -> str: ...'
    items = [CrossFile("llm.py", api, "imported module")]
    chosen, _ = charge(lambda deadline: items, [], 0, 400, TokenCounter(), time.perf_counter() + 60)
    assert [snippet.text for snippet in chosen] == [
        f'OPENAI_API_KEY = "{PLACEHOLDER}"\ndef ask(question: str) -> str: ...'
    ]


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        (".env", True),
        ("services/api/.env.local", True),
        ("/home/me/keys/id_ed25519", True),
        ("deploy/tls/server.pem", True),
        ("config/secrets.yaml", True),
        ("src/credentials_store.py", True),
        ("src/app.py", False),
        ("docs/environment.md", False),
    ],
)
def test_secret_files_are_known_by_their_names(path: str, secret: bool) -> None:
    assert secret_file(path) is secret
