"""What the lines above the cursor are about: the words that rank a module's names."""

from __future__ import annotations

from copilot_lsp.context.file_summary import Symbol
from copilot_lsp.context.topic import NOTHING, descending, topic_of, words


def test_words_split_identifiers_and_leave_keywords_out() -> None:
    assert words("def parse_pow(self) -> PowNode: HTTPServer x1 ab") == {
        "parse",
        "pow",
        "node",
        "http",
        "server",
    }


def test_the_focus_is_the_nearest_definitions_name_in_each_language() -> None:
    assert topic_of("def outer():\n    pass\n\nasync def parse_pow(self):\n").focus == {
        "parse",
        "pow",
    }
    assert topic_of("func (p *Parser) ReadHeader(r io.Reader) error {\n").focus == {
        "read",
        "header",
    }
    assert topic_of("pub fn load_config(path: &Path) {\n").focus == {"load", "config"}
    assert topic_of("export function renderTable(rows) {\n").focus == {"render", "table"}
    assert topic_of("x = 1\n").focus == frozenset()


def test_names_rank_by_focus_then_unseen_then_shared_words() -> None:
    near = topic_of("def parse_pow(self):\n    left = self.parse_unary(Concat)\n")

    def key(name: str) -> tuple[int, int, int, float, int]:
        return descending(near.score(Symbol(name, f"class {name}:", 0, True)))

    names = ["Concat", "Other", "UnaryExpr", "Unary", "Pow"]
    assert sorted(names, key=key) == ["Pow", "Unary", "UnaryExpr", "Other", "Concat"]
    assert not NOTHING and NOTHING.score(Symbol("Pow", "class Pow:", 0, True)) == (0, 0, 0, 0, 0)
