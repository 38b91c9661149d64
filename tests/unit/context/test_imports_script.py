"""JavaScript/TypeScript imports beyond relative paths: CommonJS and TypeScript `require`,
tsconfig/jsconfig `baseUrl` and `paths`, re-exports followed one level."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_lsp.context import imports
from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.project_files import ProjectFiles, json_with_comments
from tests.unit.context.workspace_fixtures import retrieve, write_package

TSCONFIG = """{
  // comments and trailing commas, as tsc allows
  "compilerOptions": {
    "baseUrl": ".",
    /* the aliases */
    "paths": { "@/*": ["src/*"], "~lib": ["src/lib/index.ts"], "@app/*": ["src/app/*"], },
  },
}
"""
X = """export function formatPrice(cents: number, currency: string): string {
  return `${cents} ${currency}`;
}

function internalOnly(): void {}

export const TAX_RATE = 0.2;

export class Cart {
  add(item: string): void {}
  private secret(): void {}
}
"""
FILES = {
    "tsconfig.json": TSCONFIG,
    "src/utils/x.ts": X,
    "src/utils/index.ts": 'export * from "./x";\nexport { helperA as aliasA } from "./y";\n',
    "src/utils/y.js": "function helperA(a, b) {\n  return a;\n}\n\nmodule.exports = { helperA };\n",
    "src/lib/index.ts": "export function libFn(depth: number): number {\n  return depth;\n}\n",
    "src/widgets/Button.tsx": "export function Button(props: ButtonProps): JSX.Element {\n"
    "  return <button />;\n}\n",
    "src/app/z.js": "export function zeta() {}\n",
}


def workspace(tmp_path: Path) -> Path:
    return write_package(tmp_path / "ws", FILES)


def test_a_paths_alias_leads_to_the_definition(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "src/app/main.ts", 'import { formatPrice } from "@/utils/x";\n\n')
    assert (
        "definition",
        "src/utils/x.ts",
        "export function formatPrice(cents: number, currency: string): string",
    ) in found
    found = retrieve(root, "src/app/main.ts", 'import { libFn } from "~lib";\n\n')
    assert ("definition", "src/lib/index.ts", "export function libFn(depth: number): number") in (
        found
    )


def test_a_namespace_import_of_a_barrel_brings_what_it_re_exports(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "src/app/main.ts", 'import * as utils from "@/utils";\n\nutils.\n')
    modules = {path: text for kind, path, text in found if kind == "imported module"}
    api = modules["src/utils/x.ts"]
    assert "export function formatPrice(cents: number, currency: string): string" in api
    assert "export const TAX_RATE = 0.2;" in api
    assert "export class Cart\n    add(item: string): void" in api
    assert "internalOnly" not in api and "secret" not in api
    assert modules["src/utils/y.js"] == "function helperA(a, b)"


def test_a_name_re_exported_under_an_alias_leads_to_its_definition(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "src/app/main.ts", 'import { aliasA, Cart } from "../utils";\n\n')
    assert ("definition", "src/utils/y.js", "function helperA(a, b)") in found
    assert any(
        path == "src/utils/x.ts" and text.startswith("export class Cart") for _, path, text in found
    )


def test_require_forms_bind_modules_and_names(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "src/app/main.js", 'const { helperA } = require("../utils/y");\n\n')
    assert ("definition", "src/utils/y.js", "function helperA(a, b)") in found
    found = retrieve(root, "src/app/main.ts", 'import x = require("../utils/x");\n\nx.\n')
    assert any(kind == "imported module" and path == "src/utils/x.ts" for kind, path, _ in found)
    found = retrieve(root, "src/app/main.tsx", 'import { Button } from "@/widgets/Button";\n\n')
    assert any(path == "src/widgets/Button.tsx" for _, path, _ in found)


def test_bare_packages_and_a_broken_tsconfig_resolve_to_nothing(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    place = Place(root, "src/app/main.ts", ProjectFiles())
    for statement in ('import React from "react";', 'const _ = require("lodash");'):
        assert imports.parse(statement, "typescript", place.relative, place) == [
            Imported(statement.split('"')[1], statement.split()[1])
        ]  # under baseUrl "." they name paths; none is indexed:
    found = retrieve(
        root, "src/app/main.ts", 'import React from "react";\nimport _ from "lodash";\n'
    )
    assert [item for item in found if item[0] != "similar code"] == []
    (root / "tsconfig.json").write_text('{ "compilerOptions": { "paths": ')  # mid-edit
    place = Place(root, "src/app/main.ts", ProjectFiles())
    assert (
        imports.parse('import { f } from "@/utils/x";', "typescript", place.relative, place) == []
    )
    assert imports.parse('import { f } from "./z";', "typescript", place.relative, place) == [
        Imported("src/app/z", "f", "f")
    ]


def test_the_nearest_config_applies_and_paths_work_without_base_url(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    write_package(
        root,
        {
            "packages/web/jsconfig.json": '{"compilerOptions": {"paths": {"#/*": ["./lib/*"]}}}',
            "packages/web/lib/api.js": "export function fetchUser(id) {\n  return id;\n}\n",
        },
    )
    found = retrieve(root, "packages/web/app.js", 'import { fetchUser } from "#/api";\n\n')
    assert ("definition", "packages/web/lib/api.js", "export function fetchUser(id)") in found
    place = Place(root, "packages/web/app.js", ProjectFiles())
    assert imports.parse('import a from "@/utils/x"', "javascript", place.relative, place) == []


def test_json_with_comments_keeps_strings_intact() -> None:
    parsed = json_with_comments('{"a": "http://x/*y*/", // c\n "b": [1,],}')
    assert parsed == {"a": "http://x/*y*/", "b": [1]}


UTILS_INDEX = "export function formatPrice(cents: number): string {\n  return '';\n}\n"
UTILS_DATES = "export function parseDay(text: string): Date {\n  return new Date(text);\n}\n"
WEB = (
    'import { formatPrice } from "@acme/utils";\nimport { parseDay } from "@acme/utils/dates";\n'
    'import { old } from "@acme/legacy";\nimport React from "react";\n\nconst total = '
)


def monorepo(tmp_path: Path, manifest: dict[str, str]) -> Path:
    return write_package(
        tmp_path / "ws",
        {
            **manifest,
            "packages/utils/package.json": (
                '{"name": "@acme/utils", "main": "dist/index.js", "types": "dist/index.d.ts"}'
            ),
            "packages/utils/src/index.ts": UTILS_INDEX,
            "packages/utils/src/dates.ts": UTILS_DATES,
            "packages/legacy/package.json": '{"name": "@acme/legacy", "main": "index.js"}',
            "packages/legacy/index.js": "export function old() {}\n",
        },
    )


def definitions(found: list[tuple[str, str, str]]) -> dict[str, str]:
    return {path: text for kind, path, text in found if kind == "definition"}


def test_a_monorepo_package_leads_to_its_source(tmp_path: Path) -> None:
    npm = '{"private": true, "workspaces": ["packages/*", "!packages/legacy"]}'
    for manifest in (
        {"package.json": npm},
        {"package.json": '{"workspaces": {"packages": ["packages/*", "!packages/legacy"]}}'},
        {
            "package.json": '{"name": "root"}',
            "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - '!packages/legacy'\n"
            "catalog:\n  - react: ^18\n",
        },
    ):
        root = monorepo(tmp_path, manifest)
        found = definitions(retrieve(root, "apps/web/src/main.ts", WEB))
        # The declared entry is built output (dist/): the package's src/index is the code.
        assert found.get("packages/utils/src/index.ts", "").startswith(
            "export function formatPrice(cents: number): string"
        ), manifest
        assert "export function parseDay(text: string): Date" in found.get(
            "packages/utils/src/dates.ts", ""
        )
        place = Place(root, "apps/web/src/main.ts", ProjectFiles())
        legacy = 'import { old } from "@acme/legacy";'
        assert imports.parse(legacy, "typescript", place.relative, place) == []  # excluded
        for path in root.rglob("*"):  # the next manifest starts afresh
            if path.is_file():
                path.unlink()


def test_a_package_exports_entry_and_a_workspace_without_monorepo(tmp_path: Path) -> None:
    root = write_package(
        tmp_path / "ws",
        {
            "package.json": '{"workspaces": ["libs/*"]}',
            "libs/core/package.json": (
                '{"name": "core", "exports": {".": {"types": "./lib/main.ts", "default": '
                '"./dist/main.js"}, "./package.json": "./package.json"}}'
            ),
            "libs/core/lib/main.ts": "export const VERSION = 3;\n",
        },
    )
    place = Place(root, "app.ts", ProjectFiles())
    assert imports.parse('import { VERSION } from "core";', "typescript", "app.ts", place) == [
        Imported("libs/core/lib/main", "VERSION", "VERSION"),
        Imported("libs/core/dist/main", "VERSION", "VERSION"),
        Imported("libs/core/src", "VERSION", "VERSION"),
        Imported("libs/core", "VERSION", "VERSION"),
    ]
    alone = write_package(tmp_path / "alone", {"package.json": '{"name": "app"}'})
    place = Place(alone, "app.ts", ProjectFiles())
    assert imports.parse('import { VERSION } from "core";', "typescript", "app.ts", place) == []


def test_a_deep_workspace_glob_skips_installed_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[str] = []
    real_walk = os.walk

    def recording_walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
        for folder, children, files in real_walk(top):
            walked.append(folder)
            yield folder, children, files

    monkeypatch.setattr(os, "walk", recording_walk)
    root = write_package(
        tmp_path / "ws",
        {
            "package.json": '{"workspaces": ["libs/**"]}',
            "libs/group/deep/package.json": '{"name": "deep"}',
            "libs/group/deep/src/index.ts": "export const DEPTH = 2;\n",
            "libs/node_modules/deep/package.json": '{"name": "deep"}',
            "libs/node_modules/deep/index.ts": "export const DEPTH = 99;\n",
        },
    )
    place = Place(root, "app.ts", ProjectFiles())
    parsed = imports.parse('import { DEPTH } from "deep";', "typescript", "app.ts", place)
    assert parsed[0] == Imported("libs/group/deep/src", "DEPTH", "DEPTH")
    assert all("node_modules" not in item.module for item in parsed)
    # The walk never went into the installed packages (a real node_modules holds thousands).
    assert walked and not [folder for folder in walked if "node_modules" in folder]


def test_subpath_exports_lead_to_the_exported_module_and_its_source(tmp_path: Path) -> None:
    exports = (
        '{".": "./dist/index.js", "./dates": {"types": "./dist/time/dates.d.ts", "import": '
        '"./dist/time/dates.mjs"}, "./features/*": "./dist/features/*.js", "./ui/*": "./lib/ui/*/'
        'index.ts", "./internal/*": null, "./package.json": "./package.json"}'
    )
    root = write_package(
        tmp_path / "ws",
        {
            "package.json": '{"workspaces": ["packages/*"]}',
            "packages/kit/package.json": '{"name": "@acme/kit", "exports": ' + exports + "}",
            "packages/kit/src/time/dates.ts": UTILS_DATES,
            "packages/kit/src/features/cart.ts": "export function addItem(id: string) {}\n",
            "packages/kit/lib/ui/button/index.ts": "export function Button() {}\n",
        },
    )
    place = Place(root, "apps/web/main.ts", ProjectFiles())

    def modules(specifier: str) -> list[str]:
        statement = f'import {{ x }} from "{specifier}";'
        return [item.module for item in imports.parse(statement, "typescript", "app.ts", place)]

    kit = "packages/kit"
    # The export's built path, its source under src/, then the plain folder guesses.
    assert modules("@acme/kit/dates")[:3] == [
        f"{kit}/dist/time/dates",
        f"{kit}/src/time/dates",
        f"{kit}/dates",
    ]
    assert modules("@acme/kit/features/cart") == [
        f"{kit}/dist/features/cart",
        f"{kit}/src/features/cart",
        f"{kit}/features/cart",
    ]
    assert modules("@acme/kit/ui/button")[:2] == [f"{kit}/lib/ui/button", f"{kit}/src/ui/button"]
    assert modules("@acme/kit/internal/secret") == []  # exported as null: not importable
    # No export names it: the folder of that name, and under src/ (as without exports).
    assert modules("@acme/kit/other") == [f"{kit}/other", f"{kit}/src/other"]
    text = 'import { Button } from "@acme/kit/ui/button";\nimport { parseDay } from '
    text += '"@acme/kit/dates";\n\nconst when = '
    found = definitions(retrieve(root, "apps/web/src/main.ts", text))
    # Exported under other names than their files': reached through the exports only.
    assert "export function Button()" in found.get(f"{kit}/lib/ui/button/index.ts", "")
    dates = found.get(f"{kit}/src/time/dates.ts", "")
    assert "export function parseDay(text: string): Date" in dates
