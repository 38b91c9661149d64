"""Context-engine latency on large real files: full parse, incremental re-parse after a
one-character edit, and prompt assembly (snippets included) after the first parse.

Targets (issue 3): context build p99 <= 10 ms after the first parse, incremental parse
<= 2 ms for a one-character edit. Printed as a table and written as JSON.
"""

from __future__ import annotations

import platform
import random
import re
import sysconfig
import time
from pathlib import Path
from typing import Any

from copilot_lsp.completion.assembly import Limits, OtherDocument, PromptRequest, build_prompt
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.templates import load_template
from copilot_lsp.context.documents import Document, DocumentStore, Edit
from copilot_lsp.context.index import DefinitionIndex
from copilot_lsp.models import embedded_tokenizer
from copilot_lsp.positions import position_at
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.stats import percentile

# Large, real, always-present files: the Python standard library's own sources.
DEFAULT_FILES = ("_pydecimal.py", "typing.py", "argparse.py", "inspect.py")


def default_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [stdlib / name for name in DEFAULT_FILES if (stdlib / name).is_file()]


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "p50": round(percentile(samples, 50), 3),
        "p90": round(percentile(samples, 90), 3),
        "p99": round(percentile(samples, 99), 3),
        "max": round(max(samples), 3),
    }


_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_.'\"])[A-Za-z_][A-Za-z0-9_]*")


def _identifier_end(text: str, rng: random.Random) -> int:
    """The end of a random identifier in `text` (searched from a random point)."""
    match = _IDENTIFIER.search(text, rng.randrange(len(text)))
    if match is None:
        match = _IDENTIFIER.search(text)
    assert match is not None, "a benchmark file without identifiers"
    return match.end()


def _has_error(document: Document) -> bool:
    assert document.syntax is not None
    return document.syntax.tree(document.text).root_node.has_error


def _timed_edit(
    store: DocumentStore, document: Document, version: int, start: int, end: int, text: str
) -> float:
    """Apply one edit as an LSP didChange would and re-parse: milliseconds for both."""
    begin = position_at(document.text, start, "utf-16", document.starts)
    finish = position_at(document.text, end, "utf-16", document.starts)
    started = time.perf_counter()
    store.change(document.uri, version, [Edit(text, begin, finish)], "utf-16")
    assert document.syntax is not None
    document.syntax.tree(document.text)
    return (time.perf_counter() - started) * 1000.0


def run_context_bench(files: list[Path], samples: int = 200, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    store = DocumentStore()
    index = DefinitionIndex(deadline_ms=1000.0)
    settings = Settings()
    # The embedded model's format and tokenizer: what `make demo` completes with.
    template, counter = load_template("smollm2"), TokenCounter(embedded_tokenizer())
    limits = Limits(
        max_tokens=template.budget(settings.prompt.max_tokens),
        prefix_lines=settings.completion.prefix_lines,
        suffix_lines=settings.completion.suffix_lines,
        snippets=True,
        snippet_deadline_ms=settings.prompt.snippet_deadline_ms,
    )
    full_parse: dict[str, float] = {}
    documents = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        started = time.perf_counter()
        document = store.open(path.as_uri(), "python", 1, text)
        full_parse[path.name] = round((time.perf_counter() - started) * 1000.0, 3)
        documents.append(document)
    main = documents[0]
    others = [OtherDocument(d.uri.rsplit("/", 1)[-1], index.lazy(d)) for d in documents[1:]]
    for other in others:
        other.definitions()  # index once, as an editor session would have by now
    index.lazy(main)()  # the first parse's full search; every build below is after it

    incremental: list[float] = []
    breaking: list[float] = []
    build: list[float] = []
    for version in range(2, samples + 2):
        # Typing: one character appended to an identifier. Any edit that leaves an error
        # behind (`if` -> `ifx`) is undone untimed, so every sample starts from a valid file:
        # errors piling up would make later samples measure error recovery, not typing.
        offset = _identifier_end(main.text, rng)
        incremental.append(_timed_edit(store, main, version * 3, offset, offset, "x"))
        if _has_error(main):
            _timed_edit(store, main, version * 3, offset, offset + 1, "")
        # ... and a bracket typed then deleted (the file breaks, then heals).
        offset = rng.randrange(len(main.text))
        breaking.append(_timed_edit(store, main, version * 3 + 1, offset, offset, "("))
        _timed_edit(store, main, version * 3 + 2, offset, offset + 1, "")
        assert main.syntax is not None
        tree = main.syntax.tree(main.text)
        assert not tree.root_node.has_error, "typing then deleting a bracket must heal the file"

        cursor = rng.randrange(len(main.text))
        started = time.perf_counter()
        request = PromptRequest(
            text=main.text,
            offset=cursor,
            starts=main.starts,
            language_id="python",
            path=main.uri.rsplit("/", 1)[-1],
            tree=tree,
            own_definitions=index.lazy(main),
            others=others,
        )
        build_prompt(request, template, counter, limits)
        build.append((time.perf_counter() - started) * 1000.0)

    return {
        "host": platform.node(),
        "files": {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in files},
        "tokenizer": counter.source,
        "full_parse_ms": full_parse,
        "incremental_parse_ms": _summary(incremental),
        "syntax_breaking_edit_ms": _summary(breaking),
        "context_build_ms": _summary(build),
        "targets": {"context_build_p99_ms": 10.0, "incremental_parse_ms": 2.0},
    }
