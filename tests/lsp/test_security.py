"""Security: TLS towards remote engines, no secrets or source in logs, no files read, no
network traffic but the engine's."""

from __future__ import annotations

import ast
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trustme
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.tls import verify_option
from copilot_lsp.errors import ConfigError, EngineUnavailable
from copilot_lsp.settings import EngineSettings
from copilot_lsp.testing.fake_engine import FakeEngine, Reply
from tests.conftest import REPO
from tests.lsp.conftest import FakeSession as Session

pytestmark = pytest.mark.timeout(60)

API_KEY = "sk-test-SECRET-9f8e7d6c"
SOURCE_MARKER = "TOP_SECRET_SOURCE_TOKEN"
COMPLETION_MARKER = "generated_secret_value_77"
ENV_MARKER = "DOTENV_SECRET_VALUE_31"


async def test_tls_is_verified_by_default(tls_engine: FakeEngine) -> None:
    assert tls_engine.url.startswith("https://")
    client = EngineClient(tls_engine.url, verify=verify_option(EngineSettings()))
    try:
        with pytest.raises(EngineUnavailable, match=r"CERTIFICATE_VERIFY_FAILED|certificate"):
            await client.served_models()
    finally:
        await client.aclose()


async def test_a_custom_ca_file_is_trusted_and_the_key_travels_encrypted(
    tls_engine: FakeEngine, ca: trustme.CA, tmp_path: Path
) -> None:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    options = EngineSettings(ca_file=bundle, api_key=API_KEY)  # type: ignore[arg-type]
    client = EngineClient(tls_engine.url, api_key=API_KEY, verify=verify_option(options))
    try:
        assert [m.id for m in await client.served_models()] == ["fake-model"]
    finally:
        await client.aclose()


def test_an_unreadable_ca_file_is_a_clear_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"engine\.ca_file"):
        verify_option(EngineSettings(ca_file=tmp_path / "missing.pem"))


async def test_turning_verification_off_works_and_warns(
    tls_engine: FakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        verify = verify_option(EngineSettings(tls_verify=False))
    assert verify is False
    assert "NOT checked" in caplog.text
    client = EngineClient(tls_engine.url, verify=verify)
    try:
        assert [m.id for m in await client.served_models()] == ["fake-model"]
    finally:
        await client.aclose()


# --- TLS through the server, configured the way users configure it -------------------------


async def tls_completion(
    session: Session, engine: FakeEngine, engine_options: dict[str, Any]
) -> list[str | None]:
    engine.default = Reply(chunks=["over_tls"])
    await session.initialize({"engine": engine_options}, engine_url=engine.url)
    uri = session.open("x = \n")
    return [i.insert_text for i in await session.complete(uri, 0, 4)]


async def test_engine_ca_file_setting_trusts_a_private_ca(
    session: Session, tls_engine: FakeEngine, ca: trustme.CA, tmp_path: Path
) -> None:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    assert await tls_completion(session, tls_engine, {"caFile": str(bundle)}) == ["over_tls"]
    assert len(tls_engine.requests) == 1


async def test_a_self_signed_engine_is_refused_by_default(
    session: Session, tls_engine: FakeEngine
) -> None:
    assert await tls_completion(session, tls_engine, {}) == []
    assert tls_engine.requests == []  # the handshake failed: no prompt left the server
    stats = await session.stats()
    assert stats["outcomes"] == {"error": 1}
    assert "CERTIFICATE_VERIFY_FAILED" in stats["recent"][-1]["error"]


async def test_tls_verify_false_setting_accepts_a_self_signed_engine(
    session: Session, tls_engine: FakeEngine
) -> None:
    assert await tls_completion(session, tls_engine, {"tlsVerify": False}) == ["over_tls"]
    assert len(tls_engine.requests) == 1


# --- a whole server run, watched ----------------------------------------------------------

WATCHER = r"""
import os, runpy, sys
events = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes)):
        os.write(events, b"open\t" + os.fsencode(args[0]) + b"\n")
    elif event == "socket.connect":
        os.write(events, ("connect\t" + repr(args[1]) + "\n").encode())
sys.addaudithook(hook)
sys.stderr = open(sys.argv[2], "w", buffering=1, encoding="utf-8")
sys.argv = ["copilot-lsp", "-v", "--stdio"]
runpy.run_module("copilot_lsp", run_name="__main__", alter_sys=True)
"""


async def test_no_key_or_source_in_logs_no_files_read_no_other_traffic(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    outside = tmp_path / "outside"
    for folder in (workspace, outside):
        folder.mkdir()
        (folder / "secret.py").write_text(f"{SOURCE_MARKER} = 'on disk'\n")
    # Indexed never: neither read by the index nor sent (context/workspace_files.py).
    (workspace / ".env.py").write_text(f"{ENV_MARKER} = 'never sent'\n")
    events, stderr = tmp_path / "events.tsv", tmp_path / "stderr.log"
    engine = await FakeEngine().start()
    engine.replies = [Reply(status=500), Reply(chunks=[COMPLETION_MARKER])]
    engine.default = Reply(chunks=[COMPLETION_MARKER])
    client = LanguageClient("security-test", "1")
    await client.start_io(sys.executable, "-c", WATCHER, str(events), str(stderr), env=isolated_env)
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options={
                    "engine": {"url": engine.url, "apiKey": API_KEY},
                    "completion": {"debounceMs": 0},
                    "prompt": {"snippets": True},
                },
            )
        )
        client.initialized(types.InitializedParams())
        text = (
            f"from secret import {SOURCE_MARKER}\nimport outside.secret\n"
            f"{SOURCE_MARKER}_copy = {SOURCE_MARKER}\nvalue = \n"
        )
        uri = (workspace / "main.py").as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        other = (outside / "other.py").as_uri()  # opened by the editor: its text comes over LSP
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(other, "python", 1, f"def {SOURCE_MARKER}_fn():\n    pass\n")
            )
        )
        params = types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(3, 8),
        )
        answers = [
            await asyncio.wait_for(client.text_document_inline_completion_async(params), 20)
            for _ in range(3)
        ]
        first, _, third = answers
        assert isinstance(first, types.InlineCompletionList) and not first.items  # the 500
        assert isinstance(third, types.InlineCompletionList)
        assert third.items[0].insert_text == COMPLETION_MARKER
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        server = getattr(client, "_server", None)
        if server is not None:
            await asyncio.wait_for(server.wait(), 10)
    finally:
        await client.stop()
        await engine.stop()

    # The workspace index's files reached the prompt; the secret one never did.
    assert all(ENV_MARKER not in str(request.body) for request in engine.requests)
    # The key reached the engine, and only the engine.
    assert engine.requests[-1].headers["authorization"] == f"Bearer {API_KEY}"
    assert engine.other_paths == []
    log = stderr.read_text(encoding="utf-8")
    assert "completion " in log  # -v logs every completion: the log was written
    completions_log = Path(isolated_env["COPILOT_LSP_STATE_DIR"]) / "completions.jsonl"
    records = completions_log.read_text(encoding="utf-8")
    assert len(records.splitlines()) >= 3
    for written in (log, records):
        assert API_KEY not in written and "SECRET-9f8e" not in written
        assert SOURCE_MARKER not in written and COMPLETION_MARKER not in written

    check_events(events, workspace, outside, engine.port)
    state = Path(isolated_env["COPILOT_LSP_STATE_DIR"])
    assert written_files(state) <= {"completions.jsonl"}


def check_events(events: Path, workspace: Path, outside: Path, port: int) -> None:
    """The server process opened no file in the workspace or outside it (documents come over
    LSP; the workspace index reads the workspace's files in a process of its own, which
    never opens a secret: tests/unit/context/test_workspace_files.py), and connected to
    nothing but the engine."""
    seen = events.read_text(encoding="utf-8", errors="replace").splitlines()
    opened = [line.split("\t", 1)[1] for line in seen if line.startswith("open\t")]
    assert opened, "the audit hook saw nothing"
    for path in opened:
        resolved = os.path.realpath(path) if os.path.isabs(path) else path
        assert not resolved.startswith(str(workspace)), f"read a workspace file: {path}"
        assert not resolved.startswith(str(outside)), f"read a file outside: {path}"
    connects = [line.split("\t", 1)[1] for line in seen if line.startswith("connect\t")]
    assert connects and all(f"'127.0.0.1', {port})" in c for c in connects), connects


def written_files(state: Path) -> set[str]:
    return {p.name for p in state.rglob("*") if p.is_file()}


NETWORK_MODULES = {
    "aiohttp",
    "ftplib",
    "http",
    "httpx",
    "requests",
    "smtplib",
    "socket",
    "ssl",
    "urllib",
    "urllib3",
    "websockets",
}
PACKAGE = REPO / "server" / "copilot_lsp"


def imported_modules(source: str) -> set[str]:
    """Every module `source` imports (absolute names; `from . import x` stays relative)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("<dynamic import>")
        elif isinstance(node, ast.Attribute) and node.attr in ("open_connection", "import_module"):
            names.add(f"<{node.attr}>")
    return names


def network_imports(root: Path) -> dict[str, set[str]]:
    """Network modules imported by the modules under `root`, following copilot_lsp's own
    imports transitively: {module file: forbidden names}."""
    found: dict[str, set[str]] = {}
    todo, seen = sorted(root.glob("*.py")), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        names = imported_modules(path.read_text(encoding="utf-8"))
        bad = {n for n in names if n.split(".")[0] in NETWORK_MODULES or n.startswith("<")}
        if bad:
            found[str(path.relative_to(PACKAGE))] = bad
        for name in names:
            if name.startswith("copilot_lsp."):
                parts = name.split(".")[1:]
                for candidate in (
                    PACKAGE.joinpath(*parts).with_suffix(".py"),
                    PACKAGE.joinpath(*parts, "__init__.py"),
                ):
                    if candidate.exists():
                        todo.append(candidate)
    return found


def test_the_import_check_sees_every_form_of_import() -> None:
    forms = [
        "import httpx",
        "from httpx import AsyncClient",
        "import urllib.request as r",
        "from http.client import HTTPConnection",
        "import socket",
        "x = __import__('socket')",
        "importlib.import_module('httpx')",
        "await asyncio.open_connection('h', 1)",
    ]
    for source in forms:
        names = imported_modules(source)
        assert any(n.split(".")[0] in NETWORK_MODULES or n.startswith("<") for n in names), source
    assert imported_modules("import json\nfrom pathlib import Path") == {
        "json",
        "pathlib",
        "pathlib.Path",
    }


def test_telemetry_has_no_network_sink() -> None:
    """Telemetry writes a local JSON-lines file and keeps percentiles in memory: nothing in
    copilot_lsp/telemetry, nor anything of copilot_lsp it imports, imports a network client."""
    assert network_imports(PACKAGE / "telemetry") == {}
    # The check does see a network client where there is one (the engine client).
    engine = network_imports(PACKAGE / "engine")
    assert any("httpx" in names for names in engine.values()), engine
