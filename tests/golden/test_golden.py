"""Golden cases: a source with a cursor (‸), what the model streams, the file after accept.

Each `*.cases` file holds cases separated by `=== name` lines; sections start with
`--- model`, `--- expect` (the document after accepting the suggestion, or the single word
NONE when no suggestion may be shown), `--- source`, and options `--- trigger: automatic`.
The engine is scripted; everything else is the real pipeline with the real grammar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from copilot_lsp.completion.pipeline import CompletionService
from copilot_lsp.context.syntax import SyntaxTree
from copilot_lsp.settings import Settings
from tests.fakes.scripted import ScriptedEngine

HERE = Path(__file__).parent
CURSOR = "‸"
LANGUAGES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "go": "go",
    "rust": "rust",
}


@dataclass
class Case:
    language: str
    name: str
    source: str = ""
    model: str = ""
    expect: str = ""
    options: dict[str, str] = field(default_factory=dict)


def load_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(HERE.glob("*.cases")):
        case: Case | None = None
        section = ""
        buffers: dict[str, list[str]] = {}
        lines = path.read_text(encoding="utf-8").split("\n")
        for line in [*lines, "=== END"]:
            if line.startswith("=== "):
                if case is not None:
                    for key, value in buffers.items():
                        # Blank lines separate cases; no section ends with a line break.
                        setattr(case, key, "\n".join(value).rstrip("\n"))
                    cases.append(case)
                case = Case(path.stem, line[4:].strip()) if line[4:].strip() != "END" else None
                buffers, section = {}, ""
            elif line.startswith("--- ") and case is not None:
                head = line[4:]
                if ":" in head:
                    option, _, setting = head.partition(":")
                    case.options[option.strip()] = setting.strip()
                    section = ""
                else:
                    section = head.strip()
                    buffers[section] = []
            elif section and case is not None:
                buffers[section].append(line)
    return cases


CASES = load_cases()


def test_enough_cases_across_the_five_languages() -> None:
    per_language = {language: 0 for language in LANGUAGES}
    for case in CASES:
        per_language[case.language] += 1
    assert sum(per_language.values()) >= 60, per_language
    assert all(count >= 8 for count in per_language.values()), per_language


@pytest.mark.parametrize("case", CASES, ids=[f"{c.language}:{c.name}" for c in CASES])
async def test_golden(case: Case) -> None:
    assert case.source.count(CURSOR) == 1, "exactly one cursor marker"
    before, after = case.source.replace("\\t", "\t").split(CURSOR)
    if case.options.get("eol") == "crlf":
        before, after = before.replace("\n", "\r\n"), after.replace("\n", "\r\n")
    text, offset = before + after, len(before)
    model = case.model.replace("\\t", "\t")
    chunks = [model[i : i + 3] for i in range(0, len(model), 3)] or [""]
    engine = ScriptedEngine(chunks)
    overrides: dict[str, dict[str, object]] = {"completion": {"debounce_ms": 0}}
    if "max_lines" in case.options:
        overrides["completion"]["max_lines"] = int(case.options["max_lines"])
    settings = Settings.model_validate(overrides)
    service = CompletionService(engine, lambda: settings)
    language = LANGUAGES[case.language]
    syntax = SyntaxTree.for_language(language, text)
    suggestion = await service.complete(
        "file:///golden",
        language,
        text,
        offset,
        automatic=case.options.get("trigger") == "automatic",
        tree=syntax.tree(text) if syntax else None,
    )
    expected = case.expect.replace("\\t", "\t")
    if expected.strip() == "NONE":
        assert suggestion is None, f"expected no suggestion, got {suggestion.text!r}"
        return
    assert suggestion is not None, "expected a suggestion"
    applied = text[: suggestion.offset] + suggestion.text + text[suggestion.end_offset :]
    if case.options.get("eol") == "crlf":
        expected = expected.replace("\n", "\r\n")
    assert applied == expected
