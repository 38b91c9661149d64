"""The workspace index: per-file definitions, module names, similar windows."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from copilot_lsp.context import repo_index
from copilot_lsp.context.file_summary import module_name, summarize, tokens
from copilot_lsp.context.module_api import API_LINES
from copilot_lsp.context.repo_index import RepoIndex
from copilot_lsp.context.retrieval import module_api
from copilot_lsp.context.topic import topic_of
from tests.unit.context.workspace_fixtures import FILES, indexed


def test_module_names_follow_packages() -> None:
    assert module_name("pkg/mod.py", "python") == "pkg.mod"
    assert module_name("pkg/__init__.py", "python") == "pkg"
    assert module_name("my-scripts/run.py", "python") is None
    assert module_name("src/util/index.ts", "typescript") == "src/util"


def test_definitions_are_top_level_and_class_members_not_locals() -> None:
    summary = summarize("pkg/mod.py", "python", FILES["pkg/mod.py"])
    names = {symbol.name: symbol for symbol in summary.symbols}
    assert names["compute_total"].top_level
    assert names["compute_total"].header.startswith("def compute_total(items: list[int]")
    assert names["add_entry"].container == "Ledger" and not names["add_entry"].top_level
    assert names["RATE"].header == "RATE = 0.2"
    assert "local_only" not in names


def test_module_api_lists_public_names_with_signatures() -> None:
    index = indexed()
    module = index.module("pkg.mod")
    assert module is not None and module.path == "pkg/mod.py"
    api = module_api(module)
    assert "RATE = 0.2" in api
    assert "def compute_total(items: list[int], tax: float = RATE) -> float: ..." in api
    assert "class Ledger:\n    def __init__(self, owner: str) -> None: ..." in api
    assert "_private_helper" not in api and "local_only" not in api


def _nodes_module() -> RepoIndex:
    """A module of 70 node classes, each with two methods: far more than API_LINES."""
    names = [f"Node{i}" for i in range(45)] + ["Mul", "Pow", "Add", "Neg"]
    names += [f"Extra{i}" for i in range(21)]
    text = "".join(
        f"class {name}(Base):\n    def as_const(self): ...\n    def iter_fields(self): ...\n"
        for name in names
    )
    return indexed({"nodes.py": text})


def test_a_large_module_lists_the_names_the_code_above_the_cursor_is_about() -> None:
    module = _nodes_module().module("nodes")
    assert module is not None
    plain = module_api(module).split("\n")
    assert len(plain) == API_LINES
    # Without a topic: a line per name in order, so the listing reaches further than the
    # first classes with their methods would.
    assert plain[:2] == ["class Node0(Base): ...", "class Node1(Base): ..."]
    assert "class Pow(Base): ..." not in plain
    near = topic_of("def parse_pow(self):\n    left = self.parse_unary()\n    if op == 'mul':\n")
    api = module_api(module, near=near).split("\n")
    assert len(api) == API_LINES
    # The name of the function being written first, then the names sharing a word with the
    # lines above: a prompt with little room keeps only the first lines.
    assert api[:3] == ["class Pow(Base): ...", "class Mul(Base): ...", "class Node0(Base): ..."]
    assert api[-1] == "class Node37(Base): ..."


def test_names_the_lines_above_show_already_come_last() -> None:
    module = indexed({"shapes.py": "def circle(r): ...\ndef square(a): ...\n"}).module("shapes")
    assert module is not None
    near = topic_of("import shapes\n\nsmall = shapes.circle(1)\n")
    assert module_api(module, near=near).split("\n") == ["def square(a): ...", "def circle(r): ..."]


def test_the_members_of_the_names_at_hand_come_once_every_name_has_its_line() -> None:
    text = "".join(f"def helper_{i}(x): ...\n" for i in range(30))
    text += "class Parser:\n" + "".join(f"    def parse_{i}(self): ...\n" for i in range(30))
    module = indexed({"parsing.py": text}).module("parsing")
    assert module is not None
    api = module_api(module, near=topic_of("def run_parser(source):\n    done = 0\n")).split("\n")
    assert len(api) == API_LINES
    # Its line, six of its members, the other names, then more members while lines are left.
    assert api[:10] == ["class Parser:"] + [f"    def parse_{i}(self): ..." for i in range(9)]
    assert api[10:] == [f"def helper_{i}(x): ..." for i in range(30)]


def test_a_module_that_fits_is_listed_whole_what_the_code_is_about_first() -> None:
    module = indexed().module("pkg.mod")
    assert module is not None
    about = module_api(module, near=topic_of("def close_ledger(book):\n    count = 0\n"))
    assert about.split("\n") == [
        "class Ledger:",
        "    def __init__(self, owner: str) -> None: ...",
        "    def add_entry(self, amount: int) -> None: ...",
        "RATE = 0.2",
        "def compute_total(items: list[int], tax: float = RATE) -> float: ...",
    ]
    assert sorted(about.split("\n")) == sorted(module_api(module).split("\n"))


def test_a_signature_over_several_lines_is_listed_on_one() -> None:
    text = "def request(\n    method: str,\n    # the target\n    url: str,\n) -> None:\n    pass\n"
    module = indexed({"api.py": text}).module("api")
    assert module is not None
    assert module_api(module) == "def request(method: str, url: str,) -> None: ..."


def test_a_module_is_found_by_the_end_of_its_name() -> None:
    index = RepoIndex()
    index.put(
        "file:///ws/src/pkg/mod.py",
        "src/pkg/mod.py",
        summarize("src/pkg/mod.py", "python", "def f():\n    pass\n"),
    )
    found = index.module("pkg.mod")
    assert found is not None and found.path == "src/pkg/mod.py"
    assert index.module("kg.mod") is None


def test_a_workspace_that_is_one_package_resolves_its_absolute_imports() -> None:
    # The user opened `pkg/` itself: its files are `mod.py`, `sub/deep.py`, and its code
    # imports them as `pkg.mod`, `pkg.sub.deep`.
    index = RepoIndex()
    for relative in ("mod.py", "sub/deep.py"):
        index.put(f"file:///pkg/{relative}", relative, summarize(relative, "python", "x = 1\n"))
    found = index.module("pkg.mod")
    assert found is not None and found.path == "mod.py"
    deep = index.module("pkg.sub.deep")
    assert deep is not None and deep.path == "sub/deep.py"
    assert index.module("pkg.other") is None and index.module("mod.py") is None


def test_putting_a_file_again_replaces_and_removing_forgets_it() -> None:
    index = indexed()
    uri = "file:///ws/pkg/x.py"
    assert uri in index.definitions("format_report")
    index.put(
        uri, "pkg/x.py", summarize("pkg/x.py", "python", "def renamed() -> None:\n    pass\n")
    )
    assert uri not in index.definitions("format_report")
    assert uri in index.definitions("renamed")
    index.remove(uri)
    assert not index.definitions("renamed")
    assert index.module("pkg.x") is None


def test_similar_windows_rank_by_shared_identifiers_one_per_file() -> None:
    files = {
        "a.py": "\n".join(f"invoice_total = invoice_lines + invoice_tax_{i}" for i in range(30)),
        "b.py": "\n".join(f"shipping_cost = parcel_weight * carrier_rate_{i}" for i in range(30)),
        "c.py": "def unrelated_function(alpha, beta, gamma):\n    return alpha\n",
    }
    index = indexed(files)
    query = tokens("total = invoice_total + invoice_lines + invoice_tax_3 + parcel_weight")
    found = index.similar(query, limit=3)
    assert [item.file.path for item in found][:2] == ["a.py", "b.py"]
    assert found[0].score > found[1].score
    assert len({item.file.path for item in found}) == len(found)
    assert index.similar(query, exclude=["file:///ws/a.py"])[0].file.path == "b.py"


def test_stats_count_definitions_as_files_come_and_go() -> None:
    index = indexed()
    before = index.stats()
    assert before["files"] == len(index) and before["definitions"] > 0
    uri = "file:///ws/pkg/x.py"
    removed = len(index.files[uri].summary.symbols)
    index.remove(uri)
    after = index.stats()
    assert after["definitions"] == before["definitions"] - removed
    assert after["windows"] < before["windows"]
    index.clear()
    assert index.stats() == {"files": 0, "definitions": 0, "windows": 0, "identifiers": 0}


def test_bm25_weighs_a_rare_shared_identifier_over_common_ones() -> None:
    files = {
        f"noise{i}.py": f"common_alpha = common_beta + noise_{i}_one + noise_{i}_two\n"
        for i in range(12)
    }
    files["rare.py"] = "".join(f"filler_{i} = 0\n" for i in range(12)) + "quaternion_spin = 1\n"
    files["short.py"] = "common_alpha = common_beta + short_one + short_two\n"
    index = indexed(files)
    query = frozenset({"quaternion_spin", "common_alpha", "common_beta"})
    jaccard = index.similar(query, limit=1, scoring="jaccard")
    bm25 = index.similar(query, limit=1)
    assert jaccard[0].file.path != "rare.py"  # two shared names of a short window win
    assert bm25[0].file.path == "rare.py"  # the one name few windows have wins
    assert bm25[0].score > 0


def test_bm25_scores_are_on_one_scale_for_every_query() -> None:
    files = {f"f{i}.py": f"alpha_{i} = beta_{i} + gamma_{i} + delta_{i}\n" for i in range(20)}
    files["all.py"] = "alpha_3 = beta_3 + gamma_3 + delta_3 + epsilon_3\n"
    index = indexed(files)
    whole = index.similar(tokens("alpha_3 beta_3 gamma_3 delta_3 epsilon_3"), limit=2)
    # The window holding the whole query scores about 1 (its length near the average).
    assert whole[0].file.path == "all.py" and 0.8 <= whole[0].score <= 1.3
    assert whole[1].score < whole[0].score
    # A name the index does not know weighs nothing: the window with the rest is whole.
    rest = index.similar(tokens("alpha_7 beta_7 gamma_7 delta_7 unknown_name"), limit=1)
    assert rest[0].file.path == "f7.py" and 0.8 <= rest[0].score <= 1.3
    assert index.similar(tokens("unknown_one unknown_two unknown_three"), limit=1) == []


def _churned_files() -> dict[str, str]:
    words = ["invoice", "parcel", "ledger", "carrier", "render", "socket", "token", "buffer"]
    return {
        f"m{i}.py": "\n".join(
            f"{words[(i + j) % 8]}_total = {words[(i * j) % 8]}_rate + {words[j % 8]}_{i % 3}"
            for j in range(25 + i)
        )
        for i in range(10)
    }


def _replayed(index: RepoIndex, order: Sequence[tuple[str, str | None]]) -> RepoIndex:
    for relative, text in order:
        uri = f"file:///ws/{relative}"
        if text is None:
            index.remove(uri)
        else:
            index.put(uri, relative, summarize(relative, "python", text))
    return index


def _answers(index: RepoIndex) -> list[list[tuple[str, int, float]]]:
    queries = [
        tokens("invoice_total = parcel_rate + ledger_1"),
        tokens("socket_total buffer_rate token_2 render_0 carrier_total"),
        tokens("ledger_total ledger_rate ledger_0 invoice_rate"),
    ]
    return [
        [(found.file.path, found.window.start, found.score) for found in index.similar(q, limit=5)]
        for q in queries
    ]


def _postings_are_exact(index: RepoIndex) -> bool:
    """Every identifier lists exactly the windows that hold it, ascending (the inverted
    index's invariant, which similar() relies on but a small index cannot show)."""
    expected: dict[str, list[int]] = {}
    for number, (_, window) in sorted(index._windows.items()):
        for token in window.tokens:
            expected.setdefault(token, []).append(number)
    return {token: list(posting) for token, posting in index._postings.items()} == expected


def test_files_put_again_and_removed_leave_the_same_index_as_a_fresh_one() -> None:
    files = _churned_files()
    order: list[tuple[str, str | None]] = [(path, text) for path, text in files.items()]
    # Edits (a file put again, longer), removals, and files that come back.
    order += [("m3.py", files["m3.py"] + "\nsocket_total = buffer_rate"), ("m5.py", None)]
    order += [("m0.py", None), ("m7.py", files["m2.py"]), ("m5.py", files["m5.py"])]
    order += [("m3.py", files["m3.py"]), ("m9.py", None), ("m9.py", files["m1.py"])]
    churned = _replayed(RepoIndex(), order)
    final: dict[str, str | None] = {}
    for path, text in order:
        final[path] = text
    fresh = _replayed(RepoIndex(), [(p, t) for p, t in sorted(final.items()) if t is not None])
    assert churned.stats() == fresh.stats()
    assert _answers(churned) == _answers(fresh)
    assert any(_answers(fresh))
    assert _postings_are_exact(churned)


def test_window_numbers_start_afresh_when_they_run_out(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _churned_files()
    fresh = _replayed(RepoIndex(), list(files.items()))
    monkeypatch.setattr(repo_index, "MAX_WINDOW_NUMBER", 3 * fresh.stats()["windows"] // 2)
    # Each round puts every file again: numbers run out in the second round.
    churned = _replayed(RepoIndex(), list(files.items()) * 3)
    assert churned.stats() == fresh.stats()
    assert _answers(churned) == _answers(fresh)
    assert _postings_are_exact(churned)
    assert max(churned._windows) < repo_index.MAX_WINDOW_NUMBER


def test_a_window_is_its_twenty_lines_without_blank_edges() -> None:
    lines = [f"value_{i} = other_{i} + third_{i}" for i in range(45)]
    lines[20:22] = ["", ""]  # the window at line 20 starts blank
    summary = summarize("w.py", "python", "\n".join(lines) + "\n")
    texts = {window.start: summary.window_text(window) for window in summary.windows}
    assert sorted(texts) == [0, 10, 20, 26]  # every 10 lines, and the file's last 20
    assert texts[0] == "\n".join(lines[:20])
    assert texts[10] == "\n".join(lines[10:30])
    assert texts[20] == "\n".join(lines[22:40])
    assert texts[26] == "\n".join(lines[26:45])


def test_a_long_signature_keeps_its_first_lines_and_its_closing_line() -> None:
    params = "".join(f"    option_{i}: int = {i},\n" for i in range(10))
    text = f"def configure(\n{params}) -> Settings:\n    return Settings()\n"
    summary = summarize("conf.py", "python", text)
    header = next(s.header for s in summary.symbols if s.name == "configure")
    assert header.split("\n") == [
        "def configure(",
        *[f"    option_{i}: int = {i}," for i in range(5)],
        "    ...",
        ") -> Settings:",
    ]
    module = indexed({"conf.py": text}).module("conf")
    assert module is not None
    listed = "def configure(" + " ".join(f"option_{i}: int = {i}," for i in range(5))
    assert module_api(module) == listed + " ...) -> Settings: ..."
    # Up to eight lines it is whole (five parameters, one a line, as formatters write them).
    short = "def echo(\n" + params.split("    option_5")[0] + ") -> None:\n    pass\n"
    header = summarize("e.py", "python", short).symbols[0].header
    assert header == short.split("\n    pass")[0]


def test_windows_of_minified_code_are_not_kept() -> None:
    minified = "var " + ",".join(f"alpha_{i}=beta_{i}(gamma_{i})" for i in range(400)) + ";"
    text = "\n".join(f"const value_{i} = compute_{i}(input_{i});" for i in range(30))
    summary = summarize("bundle.py", "python", minified + "\n" + text + "\n")
    starts = [window.start for window in summary.windows]
    assert 0 not in starts and starts  # the window holding the minified line is left out
    assert all(len(summary.window_text(window)) <= 4000 for window in summary.windows)
