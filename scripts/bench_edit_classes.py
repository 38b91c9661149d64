"""Server overhead per class of edit: "an edit, then a completion at the cursor" on the
5,000-line Python file of `bench overhead`, for each class of edit an editor sends.

Classes (the same seeded sequence of edits goes to every server; each starts from the file
as `bench overhead` builds it, and but for two rounds of `typing` leaves it without syntax
errors, as code mostly is between keystrokes):

* typing       `value = compute(items, 3)` typed a character per round on a new line at a
               random place, brackets paired as editors pair them (the new line, and taking
               the statement out again afterwards, are set up unmeasured)
* enter        a line break with the line's indentation at the end of a random line; the
               completion is on the new line
* delete_line  a blank line or a statement (not a block's first) deleted; the completion at
               the end of the line above
* paste        a block of whole definitions (20 lines or a few more) inserted before a
               top-level statement
* undo_range   undo of a large change as a range edit: 200 lines of whole definitions cut,
               then put back
* undo_full    the same as whole-document replacements (an editor that sends the full text)

and, on request (`--classes typing_unpaired`), typing without paired brackets: from `(` to
`)` the file has a syntax error there.

Two layers:

* `server` (default): the real server over stdio, the scripted engine answering at once,
  debounce 0, as `bench overhead` runs it. The round trip is measured at the client; the
  server's own `prompt_built` mark comes from `copilot/stats` after each round. With
  `--base CHECKOUT` a second server runs from that checkout and the rounds alternate between
  the two, so both see the same machine load.
* `inprocess`: the workspace and the prompt builder called directly (what the server does
  per didChange and completion, without the protocol), for profiling (`--profile FILE`
  writes cProfile stats).

    PYTHONPATH=server python scripts/bench_edit_classes.py --rounds 60 \
        --base ../wt-base --out edit-classes.json

Prints a table and writes the JSON report to `--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from copilot_lsp.bench.overhead.run import large_file
except ImportError:  # a checkout from before bench/ had a folder per benchmark
    from copilot_lsp.bench.overhead import large_file  # type: ignore[attr-defined,no-redef]

CLASSES = ("typing", "enter", "delete_line", "paste", "undo_range", "undo_full")
EXTRA_CLASSES = ("typing_unpaired",)
TYPED = "value = compute(items, 3)"
"""What `typing` writes, one character per round, at a new line of a random place."""
CLOSERS = {"(": ")", "[": "]", "{": "}"}
BLOCK = 20
LARGE = 200


@dataclass(frozen=True)
class Step:
    """One edit (a range in the text before it, or the whole text when `start` is None) and
    the cursor of the completion after it."""

    text: str
    start: tuple[int, int] | None
    end: tuple[int, int] | None
    cursor: tuple[int, int]
    measured: bool = True


class Shadow:
    """The document's text as the editor holds it, to place each step's edit."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def apply(self, step: Step) -> None:
        if step.start is None or step.end is None:
            self.lines = step.text.split("\n")
            return
        (l0, c0), (l1, c1) = step.start, step.end
        head, tail = self.lines[l0][:c0], self.lines[l1][c1:]
        self.lines[l0 : l1 + 1] = (head + step.text + tail).split("\n")


def _indent(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "    " if line.rstrip().endswith(":") else indent


def _top_level(line: str) -> bool:
    """A line that starts a top-level statement (this file has no top-level comments)."""
    return bool(line) and not line[0].isspace()


def _deletable(lines: list[str], index: int) -> bool:
    """Deleting the line leaves valid code: a blank line, or a statement that neither opens a
    block nor is the first of one."""
    line, above = lines[index], lines[index - 1]
    if not line.strip():
        return True
    indent = len(line) - len(line.lstrip())
    return (
        indent > 0
        and not line.rstrip().endswith(":")
        and not above.rstrip().endswith(":")
        and len(above) - len(above.lstrip()) == indent
    )


def _units(lines: list[str], start: int, at_least: int) -> int:
    """The first top-level line at least `at_least` lines after `start` (or the end)."""
    end = start + at_least
    while end < len(lines) and not _top_level(lines[end]):
        end += 1
    return end


def _typing(line: int, indent: str, paired: bool) -> Iterator[Step]:
    """`TYPED` typed on a new line after `line`, a character per step (with `paired`, an
    opening bracket brings its closer and typing the closer only moves the cursor)."""
    written = ""
    for char in TYPED:
        column = len(indent) + len(written)
        written += char
        if paired and char in CLOSERS.values():
            continue  # typed over the closer the editor inserted
        text = char + CLOSERS[char] if paired and char in CLOSERS else char
        at = (line + 1, column)
        yield Step(text, at, at, (line + 1, column + 1))


def steps(kind: str, shadow: Shadow, rng: random.Random) -> Iterator[Step]:
    """The edits of one class, forever (each applied to `shadow` before the next is made).
    Every class but `typing_unpaired` leaves the file without syntax errors after each round
    (typing has two rounds of `value =` without its right-hand side)."""
    while True:
        lines = shadow.lines
        count = len(lines)
        line = rng.randrange(20, count - LARGE - 20)
        current = lines[line]
        tops = [i for i in range(line, min(count, line + 60)) if _top_level(lines[i])]
        top = tops[0] if tops else None
        if kind in ("typing", "typing_unpaired"):
            end, indent = len(current), _indent(current)
            yield Step("\n" + indent, (line, end), (line, end), (line + 1, len(indent)), False)
            yield from _typing(line, indent, paired=kind == "typing")
            yield Step(
                "", (line, len(current)), (line + 1, len(indent) + len(TYPED)), (line, end), False
            )
        elif kind == "enter":
            end, indent = len(current), _indent(current)
            yield Step("\n" + indent, (line, end), (line, end), (line + 1, len(indent)))
        elif kind == "delete_line":
            while not _deletable(lines, line):
                line += 1
            above = len(lines[line - 1])
            yield Step("", (line, 0), (line + 1, 0), (line - 1, above))
        elif kind == "paste" and top is not None:
            source = rng.randrange(20, count - LARGE - 20)
            while not _top_level(lines[source]):
                source += 1
            block = "\n".join(lines[source : _units(lines, source, BLOCK)]) + "\n"
            pasted = block.count("\n")
            yield Step(block, (top, 0), (top, 0), (top + pasted, 0))
        elif kind in ("undo_range", "undo_full") and top is not None:
            end = _units(lines, top, LARGE)
            above = len(lines[top - 1])
            block = "\n".join(lines[top:end]) + "\n"
            if kind == "undo_range":
                yield Step("", (top, 0), (end, 0), (top - 1, above))
                yield Step(block, (top, 0), (top, 0), (end, 0))
            else:
                before = shadow.text
                yield Step("\n".join(lines[:top] + lines[end:]), None, None, (top - 1, above))
                yield Step(before, None, None, (end, 0))


def plan(kind: str, rounds: int, warmup: int, seed: int) -> list[Step]:
    """`warmup` + `rounds` measured steps of `kind` (and the unmeasured ones between)."""
    shadow = Shadow(large_file())
    out: list[Step] = []
    measured = 0
    for step in steps(kind, shadow, random.Random(f"{seed}-{kind}")):
        if measured >= warmup + rounds:
            break
        shadow.apply(step)
        warm = step.measured and measured < warmup
        out.append(Step(step.text, step.start, step.end, step.cursor, step.measured and not warm))
        measured += step.measured
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(statistics.median(values), 2),
        "p90": round(percentile(values, 90), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
    }


# --- the server over stdio ---------------------------------------------------------------


async def run_server(
    classes: list[str], rounds: int, warmup: int, seed: int, base: Path | None
) -> dict[str, Any]:
    from lsprotocol import types

    from copilot_lsp.client.driver import EditorSession
    from copilot_lsp.testing.fake_engine import FakeEngine, Reply

    names = ["current"] + (["base"] if base is not None else [])
    base_server = base / "server" if base is not None else None
    engines: dict[str, FakeEngine] = {}
    sessions: dict[str, EditorSession] = {}
    results: dict[str, dict[str, dict[str, list[float]]]] = {
        kind: {
            name: {"round_trip_ms": [], "prompt_built_ms": [], "finished_ms": []} for name in names
        }
        for kind in classes
    }
    workdir = Path(tempfile.mkdtemp(prefix="edit-classes-"))
    try:
        for name in names:
            engines[name] = engine = await FakeEngine().start()
            engine.keep_bodies = False
            engine.default = Reply(chunks=["records.sort()\n"])
            command = None
            if name == "base":
                command = ["env", f"PYTHONPATH={base_server}", sys.executable, "-m", "copilot_lsp"]
                command.append("--stdio")
            sessions[name] = await EditorSession.start(
                workdir,
                server_command=command,
                initialization_options={
                    "completion": {"debounceMs": 0},
                    "telemetry": {"enableLog": False},
                    "engine": {"url": engine.url},
                },
            )
        for kind in classes:
            uris = {
                name: session.open(workdir / f"{name}_{kind}.py", large_file())
                for name, session in sessions.items()
            }
            version = 1
            for index, step in enumerate(plan(kind, rounds, warmup, seed)):
                version += 1
                if step.start is None or step.end is None:
                    change: Any = types.TextDocumentContentChangeWholeDocument(step.text)
                else:
                    change = types.TextDocumentContentChangePartial(
                        types.Range(types.Position(*step.start), types.Position(*step.end)),
                        step.text,
                    )
                order = names if index % 2 == 0 else list(reversed(names))
                for name in order:
                    session = sessions[name]
                    started = time.perf_counter()
                    session.client.text_document_did_change(
                        types.DidChangeTextDocumentParams(
                            types.VersionedTextDocumentIdentifier(version=version, uri=uris[name]),
                            [change],
                        )
                    )
                    await session.complete(uris[name], *step.cursor)
                    elapsed = (time.perf_counter() - started) * 1000.0
                    if step.measured:
                        # Whether or not the reply fits there, the prompt must have been built.
                        record = (await session.stats())["recent"][-1]
                        built = record.get("ms", {}).get("prompt_built")
                        if built is None:
                            raise RuntimeError(f"{name}: no prompt for {kind} step {index}")
                        results[kind][name]["round_trip_ms"].append(elapsed)
                        results[kind][name]["prompt_built_ms"].append(built)
                        # From the request's arrival to its reply: the document's update and
                        # the request's building (tree, line starts) come before it.
                        results[kind][name]["finished_ms"].append(record["ms"]["finished"])
            for name, session in sessions.items():
                session.close_document(uris[name])
    finally:
        for session in sessions.values():
            await session.close()
        for engine in engines.values():
            await engine.stop()
    return {
        kind: {
            name: {metric: summary(values) for metric, values in data.items()}
            for name, data in per_server.items()
        }
        for kind, per_server in results.items()
    }


# --- in process -----------------------------------------------------------------------------


def run_inprocess(
    classes: list[str], rounds: int, warmup: int, seed: int, profile: Path | None, clock: str
) -> dict[str, Any]:
    import cProfile

    from copilot_lsp.completion.assembly import Limits, build_prompt
    from copilot_lsp.completion.budget import TokenCounter
    from copilot_lsp.completion.templates import load_template
    from copilot_lsp.completion.workspace import Workspace
    from copilot_lsp.context.documents import Edit
    from copilot_lsp.positions import Position
    from copilot_lsp.settings import Settings

    settings = Settings()
    template = load_template("smollm2")
    counter = TokenCounter()
    limits = Limits(
        max_tokens=template.budget(settings.prompt.max_tokens),
        prefix_lines=settings.completion.prefix_lines,
        suffix_lines=settings.completion.suffix_lines,
        snippets=settings.prompt.snippets,
        snippet_deadline_ms=settings.prompt.snippet_deadline_ms,
    )
    profiler = cProfile.Profile() if profile is not None else None
    # CPU time of this thread: on a machine shared with other work, what the code costs
    # rather than how long it waited for a core.
    now = time.thread_time if clock == "cpu" else time.perf_counter
    report: dict[str, Any] = {}
    for kind in classes:
        workspace = Workspace()
        workspace.set_root("file:///work")
        uri = f"file:///work/{kind}.py"
        workspace.open(uri, "python", 1, large_file())
        times: list[float] = []
        for version, step in enumerate(plan(kind, rounds, warmup, seed), start=2):
            if step.start is None or step.end is None:
                edit = Edit(step.text)
            else:
                edit = Edit(step.text, Position(*step.start), Position(*step.end))
            if profiler is not None and step.measured:
                profiler.enable()
            started = now()
            workspace.change(uri, version, [edit], "utf-16")
            request = workspace.request(
                uri,
                Position(*step.cursor),
                "utf-16",
                automatic=True,
                options=settings.completion,
            )
            assert request is not None
            build_prompt(request.prompt, template, counter, limits)
            elapsed = (now() - started) * 1000.0
            if profiler is not None:
                profiler.disable()
            if step.measured:
                times.append(elapsed)
        report[kind] = {"current": {f"edit_and_prompt_{clock}_ms": summary(times)}}
    if profiler is not None and profile is not None:
        profiler.dump_stats(str(profile))
    return report


def render(report: dict[str, Any]) -> str:
    rows = []
    for kind, per_server in report["classes"].items():
        for name, metrics in per_server.items():
            cells = [f"{kind:<12}", f"{name:<8}"]
            for metric in metrics.values():
                if metric.get("n"):
                    cells.append(f"{metric['p50']:>8.2f}{metric['p90']:>8.2f}{metric['p99']:>8.2f}")
                else:
                    cells.append(f"{'-':>24}")
            rows.append(" ".join(cells))
    first = next(iter(report["classes"].values()))
    metrics = list(next(iter(first.values())))
    header = f"{'class':<12} {'server':<8} " + " ".join(
        f"{m[:-3] + ' p50/p90/p99 ms':>24}" for m in metrics
    )
    return "\n".join(
        [
            f"{report['layer']}: {report['rounds']} rounds per class after {report['warmup']} "
            f"warm-up ones, {report['file_lines']}-line Python file",
            header,
            *rows,
            "target: p50 <= 10 ms, p99 <= 25 ms round trip",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layer", choices=["server", "inprocess"], default="server")
    parser.add_argument(
        "--classes", nargs="*", default=list(CLASSES), choices=CLASSES + EXTRA_CLASSES
    )
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--base", type=Path, help="a checkout to run beside this one (server)")
    parser.add_argument("--profile", type=Path, help="cProfile stats file (inprocess)")
    parser.add_argument(
        "--clock", choices=["wall", "cpu"], default="wall", help="what inprocess times"
    )
    parser.add_argument("--out", type=Path, help="the JSON report")
    args = parser.parse_args()
    if args.layer == "server":
        base = args.base.absolute() if args.base is not None else None
        classes = asyncio.run(run_server(args.classes, args.rounds, args.warmup, args.seed, base))
    else:
        classes = run_inprocess(
            args.classes, args.rounds, args.warmup, args.seed, args.profile, args.clock
        )
    report = {
        "layer": args.layer,
        "load_average": os.getloadavg(),
        "host": platform.node(),
        "python": platform.python_version(),
        "file_lines": len(large_file().split("\n")),
        "rounds": args.rounds,
        "warmup": args.warmup,
        "seed": args.seed,
        "base_checkout": str(args.base) if args.base else None,
        "classes": classes,
    }
    print(render(report))  # noqa: T201
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
