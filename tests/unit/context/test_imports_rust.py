"""Rust `use` trees and `mod` declarations followed to the crate's files."""

from __future__ import annotations

from pathlib import Path

from copilot_lsp.context import imports
from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.project_files import ProjectFiles
from tests.unit.context.workspace_fixtures import retrieve, write_package

B = """use std::fmt;

pub struct Thing {
    pub size: u32,
}

impl Thing {
    pub fn new(size: u32) -> Self {
        Thing { size }
    }

    fn secret(&self) -> u32 {
        self.size
    }
}

pub fn make(n: u32) -> Thing {
    Thing::new(n)
}

pub enum Kind {
    Small,
    Large,
}

pub trait Shape {
    fn area(&self) -> f64;
}

fn hidden() {}

pub const LIMIT: u32 = 8;
"""
FILES = {
    "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod a;\nmod shapes;\n\npub fn root_fn(flag: bool) -> bool {\n    flag\n}\n",
    "src/a/mod.rs": "pub mod b;\n\npub fn in_a(x: i64) -> i64 {\n    x\n}\n",
    "src/a/b.rs": B,
    "src/shapes.rs": "pub struct Circle {\n    pub r: f64,\n}\n\npub fn unit_circle() -> Circle {\n"
    "    Circle { r: 1.0 }\n}\n",
}


def workspace(tmp_path: Path) -> Path:
    return write_package(tmp_path / "ws", FILES)


def kinds(found: list[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    kept: dict[tuple[str, str], str] = {}
    for kind, path, text in found:
        if kind != "similar code":
            kept.setdefault((kind, path), text)
    return kept


def test_a_used_type_brings_its_definition_with_its_public_methods(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = kinds(retrieve(root, "src/app.rs", "use crate::a::b::Thing;\n\nfn f() {\n"))
    text = found[("definition", "src/a/b.rs")]
    assert text == "pub struct Thing\n    pub fn new(size: u32) -> Self"
    assert list(found) == [("definition", "src/a/b.rs")]  # the bare header is not repeated


def test_a_used_module_brings_its_pub_api(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = kinds(retrieve(root, "src/app.rs", "use crate::a::b;\n\nfn f() {\n    b::make(1);\n"))
    api = found[("imported module", "src/a/b.rs")]
    for line in ("pub fn make(n: u32) -> Thing", "pub enum Kind", "pub const LIMIT: u32"):
        assert line in api.split("\n")
    assert "pub trait Shape\n    fn area(&self) -> f64;" in api
    assert "hidden" not in api and "secret" not in api


def test_super_self_and_nested_groups_resolve_against_the_current_module(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    write_package(root, {"src/a/d.rs": "", "src/a/e/mod.rs": ""})
    found = retrieve(root, "src/a/d.rs", "use super::b::{Thing, Kind as K};\n\n")
    texts = [text for kind, path, text in found if (kind, path) == ("definition", "src/a/b.rs")]
    assert "pub struct Thing\n    pub fn new(size: u32) -> Self" in texts
    assert "pub enum Kind" in texts
    found = retrieve(root, "src/a/e/mod.rs", "use super::super::root_fn;\n\n")
    assert ("definition", "src/lib.rs", "pub fn root_fn(flag: bool) -> bool") in found
    found = retrieve(root, "src/a/mod.rs", "use self::b::make;\n\n")
    assert ("definition", "src/a/b.rs", "pub fn make(n: u32) -> Thing") in found
    found = retrieve(root, "src/app.rs", "use crate::a::{b::{Kind, make}, in_a};\n\n")
    texts = [text for kind, _, text in found if kind == "definition"]
    assert "pub enum Kind" in texts
    assert "pub fn make(n: u32) -> Thing" in texts
    assert "pub fn in_a(x: i64) -> i64" in texts


def test_a_mod_declaration_brings_the_module_file(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = kinds(retrieve(root, "src/lib.rs", "pub mod a;\nmod shapes;\n\nfn g() {\n"))
    assert "pub fn unit_circle() -> Circle" in found[("imported module", "src/shapes.rs")]
    assert "pub fn in_a(x: i64) -> i64" in found[("imported module", "src/a/mod.rs")]


def test_a_test_crate_reaches_the_library_by_its_package_name(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "tests/it.rs", "use my_crate::a::b::make;\n\n#[test]\nfn t() {\n")
    assert ("definition", "src/a/b.rs", "pub fn make(n: u32) -> Thing") in found


def test_external_crates_resolve_to_nothing(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    write_package(root, {"src/serde.rs": "pub fn not_the_crate() {}\n"})
    place = Place(root, "src/a/b.rs", ProjectFiles())
    for statement in ("use serde::Deserialize;", "use std::fmt;", "extern crate rand;"):
        parsed = imports.parse(statement, "rust", place.relative, place)
        assert all(item.module.startswith("src/a/b/") for item in parsed)  # children only
    found = retrieve(root, "src/a/b.rs", "use serde::Deserialize;\nuse std::fmt;\n\n")
    assert not [item for item in found if item[0] != "similar code"]


def test_use_trees_parse_to_modules_names_and_submodules(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    place = Place(root, "src/a/d.rs", ProjectFiles())
    parsed = imports.parse(
        "pub(crate) use crate::a::{b::{self, Thing as T}, *};", "rust", place.relative, place
    )
    assert parsed == [
        Imported("src/a/b", "b"),
        Imported("src/a/b", "T", "Thing", "src/a/b/Thing"),
        Imported("src/a", "*"),
    ]
    assert imports.parse("use crate::root_fn;", "rust", place.relative, place) == [
        Imported("src/lib", "root_fn", "root_fn", "src/root_fn")
    ]
    assert imports.parse("mod inner;", "rust", place.relative, place) == [
        Imported("src/a/d/inner", "inner")
    ]
    outside = Place(tmp_path, "src/x.rs", ProjectFiles())  # no Cargo.toml above
    assert imports.parse("use crate::a::b;", "rust", "src/x.rs", outside) == []


def test_a_pub_use_facade_is_followed_one_level(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    lib = FILES["src/lib.rs"] + "\npub use a::b::Thing;\npub use crate::a::b;\npub use shapes::*;\n"
    write_package(root, {"src/lib.rs": lib})
    found = retrieve(root, "tests/it.rs", "use my_crate::Thing;\n\n")
    thing = "pub struct Thing\n    pub fn new(size: u32) -> Self"
    assert ("definition", "src/a/b.rs", thing) in found
    found = retrieve(root, "tests/it.rs", "use my_crate::{b, unit_circle};\n\n")
    assert any(kind == "imported module" and "pub fn make" in text for kind, _, text in found)
    assert ("definition", "src/shapes.rs", "pub fn unit_circle() -> Circle") in found


def test_path_dependencies_lead_into_the_other_crates_of_the_workspace(tmp_path: Path) -> None:
    root = write_package(
        tmp_path / "ws",
        {
            "Cargo.toml": (
                '[workspace]\nmembers = ["app", "crates/core"]\n\n'
                '[workspace.dependencies]\ncore-lib = { path = "crates/core" }\n'
            ),
            "app/Cargo.toml": (
                '[package]\nname = "app"\n\n[dependencies]\ncore-lib = { workspace = true }\n'
                'serde = "1"\nfar = { path = "../../far" }\n\n'
                '[dev-dependencies]\nutil = { path = "../util" }\n'
            ),
            "crates/core/Cargo.toml": '[package]\nname = "core-lib"\n',
            "crates/core/src/lib.rs": "pub mod store;\n",
            "crates/core/src/store.rs": "pub fn save(key: &str) -> bool {\n    true\n}\n",
            "util/Cargo.toml": '[package]\nname = "util"\n',
            "util/src/lib.rs": "pub fn helper(x: u8) -> u8 {\n    x\n}\n",
        },
    )
    text = "use core_lib::store::save;\nuse util::helper;\nuse serde::Serialize;\n\nfn main() {\n"
    found = kinds(retrieve(root, "app/src/main.rs", text))
    assert found[("definition", "crates/core/src/store.rs")] == "pub fn save(key: &str) -> bool"
    assert found[("definition", "util/src/lib.rs")] == "pub fn helper(x: u8) -> u8"
    assert {path.split("/")[0] for _, path in found} == {"crates", "util"}
    place = Place(root, "app/src/main.rs", ProjectFiles())
    crate = place.files.crate(root, place.relative)
    assert crate is not None
    assert [d.name for d in crate.dependencies] == ["core_lib", "util"]  # not serde, not far
