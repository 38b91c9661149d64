"""Every relative Markdown link in README.md and docs/ points at a file of the repository.

Inline links and images (`[text](target)`, `![alt](target)`) and reference definitions
(`[name]: target`) are read outside fenced code blocks and inline code; web and mail links
and in-page anchors are skipped. A link may carry a `#section` or a title: only the path is
checked, relative to the Markdown file that holds it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, vscode:, …


def markdown_files() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return [path for path in files if path.is_file()]


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line number, target) of each link outside code."""
    found = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        found += [(number, m.group(1)) for m in INLINE.finditer(prose)]
        reference = REFERENCE.match(prose)
        if reference:
            found.append((number, reference.group(1)))
    return found


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    broken = []
    for number, target in link_targets(path.read_text(encoding="utf-8")):
        if EXTERNAL.match(target) or target.startswith("#"):
            continue
        local = target.split("#", 1)[0].split("?", 1)[0]
        if not (path.parent / local).exists():
            broken.append(f"{path.relative_to(root)}:{number}: {target}")
    return broken


def test_the_link_reader_finds_relative_links_and_skips_code_and_the_web(tmp_path: Path) -> None:
    text = (
        'See [the plots](benchmarks/a.png#top), ![img](b.png "title") and [web](https://x.y).\n'
        "`[not a link](nowhere.md)` and [in page](#usage)\n"
        "```\n[inside a fence](fenced.md)\n```\n"
        "[ref]: ../c.md\n"
    )
    assert link_targets(text) == [
        (1, "benchmarks/a.png#top"),
        (1, "b.png"),
        (1, "https://x.y"),
        (2, "#usage"),
        (6, "../c.md"),
    ]
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    (tmp_path / "docs" / "there.md").write_text("x", encoding="utf-8")
    page.write_text("[ok](there.md#part) [gone](missing.md) [web](http://a)\n", encoding="utf-8")
    assert broken_links(page, root=tmp_path) == ["docs/page.md:1: missing.md"]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves_to_a_file_of_the_repository(path: Path) -> None:
    assert broken_links(path) == []


def test_every_plot_in_the_docs_is_shown_by_a_page() -> None:
    """A plot nothing links to is weight in every clone; a new run's unused plots go."""
    shown = {
        (path.parent / target.split("#", 1)[0]).resolve()
        for path in markdown_files()
        for _, target in link_targets(path.read_text(encoding="utf-8"))
        if not EXTERNAL.match(target)
    }
    plots = sorted((REPO / "docs").rglob("*.png"))
    assert plots, "the reader sees the plots"
    assert [str(p.relative_to(REPO)) for p in plots if p.resolve() not in shown] == []


def test_raw_benchmark_results_in_the_docs_are_compressed() -> None:
    """Per-request results run to megabytes a report: kept as the commands write them,
    `results.json.gz` (docs/benchmarks/README.md, "Raw results")."""
    benchmarks = REPO / "docs" / "benchmarks"
    assert sorted(benchmarks.rglob("results.json")) == []
    packed = sorted(benchmarks.rglob("results.json.gz"))
    assert packed, "the reader sees the raw results"
    assert all(path.read_bytes()[:2] == b"\x1f\x8b" for path in packed)
