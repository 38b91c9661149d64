"""Imports followed to their modules over LSP, one language family each: the imported Go
package's API, the Rust item's definition, the TypeScript alias's definition reach the
prompt from files that are not open; a changed go.mod reaches it through watched files."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from copilot_lsp.testing.fake_engine import Reply
from tests.conftest import until
from tests.lsp.conftest import FakeSession, fake_session
from tests.lsp.test_workspace_index import progress_ends, start

pytestmark = pytest.mark.timeout(120)

GO_MAIN = 'package main\n\nimport u "example.com/shop/pkg/money"\n\nfunc main() {\n\tx := u.\n'
RUST_MAIN = "use crate::billing::invoice::{Invoice, total as sum};\n\nfn main() {\n    let i = \n"
TS_MAIN = 'import { formatPrice } from "@/utils/price";\n\nconst label = \n'
FILES = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "pkg/money/money.go": "package money\n\nfunc Round(cents int64, step int64) int64 {\n"
    "\treturn cents\n}\n\nfunc internal() {}\n",
    "pkg/money/amount.go": "package money\n\ntype Amount struct {\n\tCents int64\n}\n\n"
    "func (a Amount) Add(other Amount) Amount { return a }\n",
    "cmd/shop/main.go": GO_MAIN,
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/main.rs": "mod billing;\n",
    "src/billing/mod.rs": "pub mod invoice;\n",
    "src/billing/invoice.rs": "pub struct Invoice {\n    pub lines: Vec<u32>,\n}\n\n"
    "impl Invoice {\n    pub fn add_line(&mut self, cents: u32) -> usize {\n        0\n    }\n}\n\n"
    "pub fn total(invoice: &Invoice) -> u64 {\n    0\n}\n",
    "src/app.rs": RUST_MAIN,
    "web/tsconfig.json": '{\n  // aliases\n  "compilerOptions": {"baseUrl": ".", "paths": '
    '{"@/*": ["src/*"]},},\n}\n',
    "web/src/utils/price.ts": "export function formatPrice(cents: number, currency: string): "
    "string {\n  return '';\n}\n",
    "web/src/app.ts": TS_MAIN,
}


@pytest_asyncio.fixture
async def imports_session(
    isolated_env: dict[str, str], tmp_path: Path
) -> AsyncIterator[tuple[FakeSession, Path]]:
    root = tmp_path / "workspace"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    async with fake_session(isolated_env, tmp_path) as session:
        session.engine.default = Reply(chunks=["x"])
        registrations = await start(session, root)
        await until(lambda: progress_ends(session), within=60, what="the index's first pass")
        await until(lambda: registrations, what="the file watchers' registration")
        options = registrations[0].registrations[0].register_options
        assert isinstance(options, dict)  # as the client receives it: JSON
        globs = [watcher["globPattern"] for watcher in options["watchers"]]
        assert (
            "**/{Cargo.toml,go.mod,go.work,jsconfig.json,package.json,pnpm-workspace.yaml,tsconfig.json}"
            in globs
        )
        yield session, root


def block(prompt: str, title: str) -> str:
    """The lines of the prompt's snippet headed `title`, up to the next snippet."""
    lines = prompt.split(f"// {title}:\n", 1)[1].split("\n")
    kept = []
    for line in lines:
        if re.match(r"// (imported module|definition|similar code) \(", line) or not line:
            break
        kept.append(line)
    return "\n".join(kept)


async def prompt_at_end(session: FakeSession, root: Path, relative: str, language: str) -> str:
    text = FILES[relative]
    uri = session.open(text, uri=(root / relative).as_uri(), language=language)
    lines = text.split("\n")
    await session.complete(uri, len(lines) - 2, len(lines[-2]))
    return str(session.engine.requests[-1].body["prompt"])


async def test_a_go_package_api_reaches_the_prompt_and_follows_go_mod(
    imports_session: tuple[FakeSession, Path],
) -> None:
    session, root = imports_session
    prompt = await prompt_at_end(session, root, "cmd/shop/main.go", "go")
    api = block(prompt, "imported module (pkg/money)")
    assert "func Round(cents int64, step int64) int64" in api
    assert "type Amount struct {" in api
    assert "func (a Amount) Add(other Amount) Amount" in api
    assert "internal" not in api

    # The module is renamed: the import no longer names a folder of this workspace.
    (root / "go.mod").write_text("module example.com/renamed\n")
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent((root / "go.mod").as_uri(), types.FileChangeType.Changed)]
        )
    )
    await asyncio.sleep(0.2)
    uri = (root / "cmd/shop/main.go").as_uri()
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=GO_MAIN + "\ty := u.\n")],
        )
    )
    await session.complete(uri, 6, len("\ty := u."))
    assert "imported module (pkg/money)" not in str(session.engine.requests[-1].body["prompt"])


async def test_a_rust_item_definition_reaches_the_prompt(
    imports_session: tuple[FakeSession, Path],
) -> None:
    session, root = imports_session
    prompt = await prompt_at_end(session, root, "src/app.rs", "rust")
    text = prompt.split("// definition (src/billing/invoice.rs):\n", 1)[1]
    assert "pub struct Invoice\n//     pub fn add_line(&mut self, cents: u32) -> usize" in text
    assert "pub fn total(invoice: &Invoice) -> u64" in text


async def test_a_typescript_path_alias_reaches_the_definition(
    imports_session: tuple[FakeSession, Path],
) -> None:
    session, root = imports_session
    prompt = await prompt_at_end(session, root, "web/src/app.ts", "typescript")
    assert block(prompt, "definition (web/src/utils/price.ts)") == (
        "// export function formatPrice(cents: number, currency: string): string"
    )
