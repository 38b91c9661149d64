"""Prompt sets for the engine benchmark, cut from held-out code.

`flat` and `nested` are prefixes of held-out corpus files (draft/corpus.py: never trained on,
never SAFIM), each cut right after a line that opens a block: at indentation depth 0 or 1 for
`flat` (a function or method body follows), at depth 3 or more for `nested` (the body of a
loop inside a condition inside a function…), which is where Medusa's acceptance is claimed to
collapse. `longform` is three long generation tasks written for this benchmark: the three
prompts the claims came with are not available here, so these stand in for them (same kind:
a long, self-contained piece of code to write from a short description). `nextedit` is the
next-edit suite's rewrite requests (bench/nextedit/prompts.py: the prompt, token limit and stop
strings the server sends for a scenario, in the embedded model's format, `fenced`): each runs
to its stop string (or to where the server stops reading it), so its end-to-end time is the
time to the whole edit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from copilot_lsp.draft import corpus

SETS = ("flat", "nested", "longform", "nextedit")

LONGFORM = (
    '"""An LRU cache with a time-to-live per entry, thread safe, with hit/miss statistics."""\n'
    "\nimport threading\nimport time\nfrom collections import OrderedDict\n\n\n"
    "class TTLCache:\n",
    '"""A tokenizer and recursive-descent parser for arithmetic expressions with variables,\n'
    'unary minus, exponentiation and function calls; errors carry the column."""\n'
    "\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Token:\n",
    '"""Command-line tool: walk a directory, group files by content hash, report duplicates\n'
    'as JSON or as a table, optionally hard-link them."""\n'
    "\nimport argparse\nimport hashlib\nimport json\nimport os\n\n\n"
    "def parse_args(argv=None):\n",
)


_OPENER = re.compile(
    r"\s*(async\s+)?(def|class|if|elif|else|for|while|with|try|except|finally|match|case)\b.*:$"
)


@dataclass(frozen=True, slots=True)
class Prompt:
    set: str
    name: str
    text: str
    max_tokens: int | None = None
    """This prompt's own token limit (None: the plan's)."""
    stop: tuple[str, ...] = ()
    """Stop strings: the answer runs to one of them (or the limit) instead of a fixed length."""
    cut: Callable[[str], int | None] | None = None
    """Where the answer so far is left (the length kept), as the server stops reading a
    next-edit rewrite that ran past its window; None: read on."""


def _depth(line: str) -> int:
    expanded = line.expandtabs(4)
    return (len(expanded) - len(expanded.lstrip(" "))) // 4


def _cut(text: str, wanted: str, min_chars: int, max_chars: int) -> str | None:
    """The text up to the last block opener of the wanted kind before `max_chars`."""
    lines = text[:max_chars].split("\n")[:-1]
    end = sum(len(line) + 1 for line in lines)
    for line in reversed(lines):
        stripped = line.rstrip()
        if end < min_chars:
            return None
        if _OPENER.match(stripped):
            depth = _depth(line)
            if (wanted == "flat" and depth <= 1) or (wanted == "nested" and depth >= 3):
                return text[:end]
        end -= len(line) + 1
    return None


def prompt_sets(per_set: int, max_chars: int = 1500, heldout_percent: int = 5) -> list[Prompt]:
    """`per_set` flat and nested prompts (fewer if the held-out split runs out) and the
    long-form ones (at most `per_set`)."""
    found: dict[str, list[Prompt]] = {"flat": [], "nested": []}
    for source in corpus.collect(corpus.default_roots()):
        if all(len(prompts) >= per_set for prompts in found.values()):
            break
        if source.split(heldout_percent) != "heldout":
            continue
        text = corpus.read_text(source)
        if not text:
            continue
        for wanted, prompts in found.items():
            if len(prompts) >= per_set:
                continue
            # Nested blocks sit deeper in a file: look further for them.
            cut = _cut(text, wanted, max_chars // 3, max_chars * (4 if wanted == "nested" else 1))
            if cut is not None:
                prompts.append(Prompt(wanted, source.path.name, cut[-max_chars:]))
                break  # one prompt per file: the sets do not share a file
    longform = [Prompt("longform", f"longform-{i + 1}", text) for i, text in enumerate(LONGFORM)]
    return found["flat"] + found["nested"] + longform[:per_set] + nextedit_prompts(per_set)


def nextedit_prompts(count: int) -> list[Prompt]:
    """`count` rewrite requests of the next-edit suite, the scenarios that want an edit first
    and taken across kinds in turn."""
    from copilot_lsp.bench.nextedit.prompts import rewrite_request
    from copilot_lsp.bench.nextedit.suite import Scenario, load

    scenarios = sorted(load(), key=lambda s: not s.wants_edit)
    by_kind: dict[str, list[Scenario]] = {}
    for scenario in scenarios:
        by_kind.setdefault(scenario.kind, []).append(scenario)
    order: list[Scenario] = []
    while any(by_kind.values()):
        for queue in by_kind.values():
            if queue:
                order.append(queue.pop(0))
    prompts = []
    for scenario in order[:count]:
        request = rewrite_request(scenario)
        prompts.append(
            Prompt(
                "nextedit",
                request.scenario,
                request.prompt,
                request.max_tokens,
                request.stop,
                request.cut,
            )
        )
    return prompts
