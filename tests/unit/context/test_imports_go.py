"""Go imports followed to their packages: a package is a folder, found through go.mod."""

from __future__ import annotations

from pathlib import Path

from copilot_lsp.context import imports
from copilot_lsp.context.imported import Imported, Place
from copilot_lsp.context.project_files import ProjectFiles
from tests.unit.context.workspace_fixtures import retrieve, write_package

UTIL = """package util

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func helper() int { return 0 }

type Point struct {
	X, Y int
}

const DefaultScale = 2
"""
POINT = """package util

func NewPoint(x, y int) *Point { return &Point{x, y} }

func (p *Point) Scale(factor int) Point { return Point{p.X * factor, p.Y * factor} }

func (p Point) norm() int { return 0 }
"""
FILES = {
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "pkg/util/util.go": UTIL,
    "pkg/util/point.go": POINT,
    "pkg/util/util_test.go": "package util\n\nfunc TestMaxOnly(t *T) {}\n",
    "pkg/dot/dot.go": "package dot\n\nfunc DotFunc(s string) bool { return true }\n",
    "pkg/side/side.go": "package side\n\nfunc SideEffect() {}\n",
    "svc/go.mod": 'module "example.com/svc"\n',
    "svc/internal/db/db.go": (
        "package db\n\nfunc Open(dsn string) (*Conn, error) { return nil, nil }\n"
    ),
}
MAIN = """package main

import (
	"fmt"
	u "example.com/m/pkg/util"
	_ "example.com/m/pkg/side"
	. "example.com/m/pkg/dot"
	"github.com/other/lib"
)

func main() {
	fmt.Println(lib.X)
	p := u.
"""


def workspace(tmp_path: Path) -> Path:
    return write_package(tmp_path / "ws", FILES)


def test_an_aliased_package_brings_the_exported_api_of_all_its_files(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    found = retrieve(root, "cmd/app/main.go", MAIN)
    modules = {path: text for kind, path, text in found if kind == "imported module"}
    api = modules["pkg/util"]
    assert "func Max(a, b int) int" in api
    assert "func NewPoint(x, y int) *Point" in api
    assert "const DefaultScale = 2" in api
    # Methods under their type, though another file of the package defines them.
    assert "type Point struct {\n\tX, Y int\n}\nfunc (p *Point) Scale(factor int) Point" in api
    for hidden in ("helper", "norm", "TestMaxOnly"):
        assert hidden not in api
    # The dot import brings its package; the blank, standard and third-party ones nothing.
    assert "func DotFunc(s string) bool" in modules["pkg/dot"]
    assert set(modules) == {"pkg/util", "pkg/dot"}
    assert not any("SideEffect" in text for _, _, text in found)


def test_a_single_import_binds_the_last_element_and_comes_first_when_used(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    text = (
        'package main\n\nimport "example.com/m/pkg/dot"\nimport "example.com/m/pkg/util"\n\n'
        'func main() {\n\tdot.DotFunc("")\n\tutil.Max(1, 2)\n\tx := util.\n'
    )
    paths = [path for kind, path, _ in retrieve(root, "main.go", text) if kind == "imported module"]
    assert paths == ["pkg/util", "pkg/dot"]


def test_the_nearest_go_mod_decides_the_module_path(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    text = 'package main\n\nimport "example.com/svc/internal/db"\n\nfunc main() {\n\tdb.\n'
    found = retrieve(root, "svc/cmd/main.go", text)
    assert ("imported module", "svc/internal/db", "func Open(dsn string) (*Conn, error)") in found
    # From the outer module the same path is another module's: not in this workspace's.
    outer = retrieve(root, "cmd/main.go", text)
    assert not [kind for kind, _, code in outer if "Open" in code and kind != "similar code"]


def test_import_declarations_parse_to_package_folders(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    place = Place(root, "cmd/app/main.go", ProjectFiles())
    assert imports.parse(
        MAIN.split("func")[0].split("\n\n", 1)[1], "go", place.relative, place
    ) == [
        Imported("pkg/util", "u", package=True),
        Imported("pkg/dot", "*", package=True),
    ]
    assert imports.parse('import "example.com/m"', "go", place.relative, place) == [
        Imported("", "m", package=True)
    ]
    assert imports.parse('import yaml "gopkg.in/yaml.v3"', "go", place.relative, place) == []
    no_module = Place(tmp_path, "x/main.go", ProjectFiles())  # no go.mod above
    assert imports.parse('import "example.com/m/pkg/util"', "go", "x/main.go", no_module) == []


def test_project_files_are_read_once_until_forgotten(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    files = ProjectFiles()
    place = Place(root, "cmd/main.go", files)
    before = imports.parse('import "example.com/m/pkg/util"', "go", place.relative, place)
    assert before == [Imported("pkg/util", "util", package=True)]
    (root / "go.mod").write_text("module example.com/renamed\n")
    # Kept: a keystroke never reads go.mod again…
    assert imports.parse('import "example.com/m/pkg/util"', "go", place.relative, place) == before
    files.forget()  # …until the watched-files path says it changed.
    assert imports.parse('import "example.com/m/pkg/util"', "go", place.relative, place) == []
    assert imports.parse('import "example.com/renamed/pkg/util"', "go", place.relative, place)


STORE = "package store\n\nfunc Save(key string, value []byte) error { return nil }\n"
APP = 'package main\n\nimport "example.com/lib/store"\n\nfunc main() {\n\tstore.\n'


def _store_api(found: list[tuple[str, str, str]]) -> list[str]:
    return [path for kind, path, text in found if kind == "imported module" and "Save(" in text]


def test_a_go_work_module_is_followed_from_another_module(tmp_path: Path) -> None:
    root = write_package(
        tmp_path / "ws",
        {
            "go.work": "go 1.22\n\nuse (\n\t./app // the service\n\t./lib\n)\n",
            "app/go.mod": "module example.com/app\n\nrequire example.com/lib v0.1.0\n",
            "lib/go.mod": "module example.com/lib\n",
            "lib/store/store.go": STORE,
        },
    )
    assert _store_api(retrieve(root, "app/cmd/main.go", APP)) == ["lib/store"]
    (root / "go.work").write_text("go 1.22\n\nuse ./app\n")  # lib not in the go.work
    assert _store_api(retrieve(root, "app/cmd/main.go", APP)) == []


def test_a_local_replace_leads_into_the_workspace_others_do_not(tmp_path: Path) -> None:
    app_mod = (
        "module example.com/app\n\nrequire example.com/lib v0.1.0\n\n"
        "replace example.com/lib v0.1.0 => ../lib\n"
    )
    files = {"app/go.mod": app_mod, "lib/go.mod": "module example.com/lib\n"}
    files["lib/store/store.go"] = STORE
    root = write_package(tmp_path / "ws", files)
    assert _store_api(retrieve(root, "app/main.go", APP)) == ["lib/store"]
    for elsewhere in (
        "replace (\n\texample.com/lib => example.com/fork v1.0.0\n)\n",  # a module, not a folder
        "replace example.com/lib => ../../outside\n",  # out of the workspace
    ):
        (root / "app/go.mod").write_text("module example.com/app\n\n" + elsewhere)
        assert _store_api(retrieve(root, "app/main.go", APP)) == [], elsewhere
    # A block of replacements, the module path quoted.
    (root / "app/go.mod").write_text(
        'module example.com/app\n\nreplace (\n\t"example.com/lib" => ../lib\n)\n'
    )
    assert _store_api(retrieve(root, "app/main.go", APP)) == ["lib/store"]


def test_a_vendored_module_leads_to_its_copy_under_vendor(tmp_path: Path) -> None:
    files = {
        "app/go.mod": "module example.com/app\n\nrequire example.com/lib v0.1.0\n",
        "app/vendor/modules.txt": "# example.com/lib v0.1.0\nexample.com/lib/store\n",
        "app/vendor/example.com/lib/store/store.go": STORE,
    }
    root = write_package(tmp_path / "ws", files)
    assert _store_api(retrieve(root, "app/main.go", APP)) == ["app/vendor/example.com/lib/store"]
    place = Place(root, "app/main.go", ProjectFiles())
    # The standard library and modules not vendored stay outside.
    for path in ("fmt", "net/http", "example.com/lib/other", "example.com/elsewhere"):
        assert imports.parse(f'import "{path}"', "go", place.relative, place) == [], path
    # Without a vendor folder beside go.mod, nothing (as before).
    assert _store_api(retrieve(root, "cmd/main.go", APP)) == []
