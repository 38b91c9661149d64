"""The next-edit quality suite's scenarios: a file, the user's recent edits, the cursor, and
the edit that should come next (or none).

Most are made from real Python source (the standard library of the Python that builds them)
by static transformations found with `ast`: the user's edit is applied as didChange steps and
the rest of the same change is what the model should propose. Each kind has a twin where the
right answer is no edit: the change is already complete (`*-done`), or the user's edit has no
consequence (`unrelated`). A small hand-written set adds a changed signature and its call
sites. `python -m copilot_lsp.bench.nextedit.scenarios` writes data/scenarios.json.gz again
(the same bytes from the same Python); the suite in the repository is the one benchmarked.

Offsets count code points. A step replaces `text[start:end]` of the buffer as it is when the
step comes; the cursor is an offset in the buffer after the last step.
"""

from __future__ import annotations

import ast
import sys
import sysconfig
from dataclasses import asdict
from pathlib import Path

from copilot_lsp.bench.nextedit.handwritten import hand_written
from copilot_lsp.bench.nextedit.patterns import FINDERS, Edit, Source, apply_edits, sequential
from copilot_lsp.bench.nextedit.suite import DATA, Scenario, apply_steps, save

WINDOW = 10
"""Lines above and below the cursor the server's window holds by default: every expected
edit lies inside it."""
MAX_CHANGED_LINES = 8
"""The server's default confidence rule (nextEditSuggestions.maxChangedLines): the next edit
is offered as one edit from its first change to its last, so their lines span at most this."""
CONTEXT_ABOVE, CONTEXT_BELOW = 25, 35
"""Lines of the source file kept around the cursor's line in a scenario's file."""
MODULES = (
    "argparse", "difflib", "textwrap", "configparser", "logging/__init__", "email/message",
    "http/cookiejar", "json/decoder", "pathlib", "shutil", "tarfile", "zipfile",
    "csv", "calendar", "fractions", "ftplib", "smtplib", "imaplib", "pprint", "sched",
    "inspect", "dataclasses", "tokenize", "gettext", "mailbox", "optparse", "pdb",
    "pickle", "random", "selectors", "statistics", "string", "subprocess", "tempfile",
    "threading", "trace", "uuid", "wave", "xml/dom/minidom", "cmd", "code", "codeop",
    "netrc", "plistlib", "queue", "shlex", "socketserver", "telnetlib", "timeit", "zipapp",
)  # fmt: skip
"""Standard-library files searched, in this order."""
QUOTAS = {
    "rename-param": 6,
    "rename-local": 6,
    "typo": 5,
    "new-field": 5,
    "repeated-edit": 4,
    "rename-param-done": 4,
    "rename-local-done": 3,
    "typo-done": 3,
    "new-field-done": 3,
    "unrelated": 10,
}
"""Generated scenarios per kind: with the hand-written set, about half want no edit."""
# --- Building -------------------------------------------------------------------------------


def _scenario(
    source: Source,
    kind: str,
    user: list[Edit],
    rest: list[Edit],
    *,
    cursor_edit: Edit,
    wants_edit: bool,
    before: str | None = None,
    note: str = "",
) -> Scenario | None:
    """A scenario cut from `source`: the user's edits `user` (in order), then `rest` is the
    next edit (`wants_edit`) or was done by the user too (appended to the steps)."""
    original = before if before is not None else source.text
    steps_edits = user if wants_edit else user + rest
    everything = user + rest
    line = source.line_of(cursor_edit.start)
    touched = {source.line_of(e.start) for e in everything} | {
        source.line_of(e.end) for e in everything
    }
    if any(abs(t - line) > WINDOW - 1 for t in touched):
        return None
    rest_lines = [source.line_of(e.start) for e in rest] + [source.line_of(e.end) for e in rest]
    if rest and max(rest_lines) - min(rest_lines) + 1 > MAX_CHANGED_LINES:
        return None  # one edit from the first change to the last: the server's gate says no
    first = max(0, line - CONTEXT_ABOVE)
    last = min(len(source.lines) - 1, line + CONTEXT_BELOW)
    base = source.starts[first]
    stop = source.starts[last] + len(source.lines[last])
    cut = original[base:stop] + "\n"

    def moved(edit: Edit) -> Edit:
        return Edit(edit.start - base, edit.end - base, edit.text)

    steps = sequential([moved(e) for e in steps_edits])
    shift = sum(len(e.text) - (e.end - e.start) for e in steps_edits if e.start < cursor_edit.start)
    cursor = cursor_edit.start - base + shift + len(cursor_edit.text)  # after the user's edit
    current = apply_steps(cut, steps)
    expected = apply_edits(cut, [moved(e) for e in everything]) if wants_edit else None
    if expected == current:
        return None
    return Scenario(
        id="",
        kind=kind,
        source=f"stdlib:{source.name}:{line + 1}",
        before=cut,
        steps=tuple(steps),
        cursor=cursor,
        expected=expected,
        note=note,
    )


def build(modules: tuple[str, ...] = MODULES) -> list[Scenario]:
    """The generated scenarios, then the hand-written ones, with ids."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    counts = dict.fromkeys(QUOTAS, 0)
    found: list[Scenario] = []
    for module in modules:
        text = (stdlib / f"{module}.py").read_text(encoding="utf-8")
        source = Source(module.removesuffix("/__init__").replace("/", "."), text)
        tree = ast.parse(text)
        for finder in FINDERS:
            made = list(finder(source, tree))
            if not made:
                continue
            kind, user, rest, note, misspelt = (
                made[0].kind,
                made[0].user,
                made[0].rest,
                made[0].note,
                made[0].text,
            )
            for wants_edit in (True, False):
                name = kind if wants_edit else f"{kind}-done"
                if kind == "unrelated":
                    name = kind
                if counts.get(name, QUOTAS.get(name, 0)) >= QUOTAS.get(name, 0):
                    continue
                from_source = Source(source.name, misspelt) if misspelt else source
                scenario = _scenario(
                    from_source,
                    name,
                    user,
                    rest,
                    cursor_edit=user[0],
                    wants_edit=wants_edit and kind != "unrelated",
                    note=note,
                )
                if scenario is not None:
                    counts[name] += 1
                    found.append(scenario)
                if kind == "unrelated":
                    break
    found.extend(hand_written())
    return [
        Scenario(**{**asdict(s), "steps": s.steps, "id": f"{index:02d}-{s.kind}"})
        for index, s in enumerate(found)
    ]


def main() -> None:
    scenarios = build()
    save(scenarios)
    kinds: dict[str, int] = {}
    for scenario in scenarios:
        kinds[scenario.kind] = kinds.get(scenario.kind, 0) + 1
    wanting = sum(s.wants_edit for s in scenarios)
    sys.stdout.write(f"{len(scenarios)} scenarios ({wanting} want an edit) -> {DATA}: {kinds}\n")


if __name__ == "__main__":
    main()
