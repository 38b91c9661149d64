"""The workspace index on a large folder, measured through the real server and in process.

1. `off`: the server over stdio with `context.workspace.enabled` off, the folder its root, the
   scripted engine answering at once, a 5,000-line file (outside the folder) edited and
   completed as `bench overhead` does: the server's own cost per completion without the index.
2. `on`: the same with the index on. From `initialize` the server discovers and indexes the
   folder in its worker process; the rounds go on all the while (`during`), `copilot/stats`
   (its `index` section) read every few rounds says when the first pass ends and how long it
   took, and the server's resident memory (and its worker's) is sampled; then the same rounds
   again on the built index (`after`). The `off` server stays up and takes its turn every
   READ_EVERY rounds (`during_off`, `after_off`): on a shared host the two see the same
   noise, so the ratio between them is what the index costs a keystroke.
3. `retrieval`: the same files summarized and indexed in this process (no server), their lines
   counted, and retrieval (context/retrieval.py `gather`) timed at sampled cursors in the
   indexed Python files, as a completion there would ask for it, without its deadline.

Nothing here is a timed assertion; the report says where the targets are met.
"""

from __future__ import annotations

import asyncio
import os
import platform
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_lsp.bench.overhead.edits import large_file, plan
from copilot_lsp.bench.overhead.run import OPTIONS, READ_EVERY, _read_marks, _round, _Samples
from copilot_lsp.bench.overhead.run import summary as summarize_ms
from copilot_lsp.client.driver import EditorSession
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

STEPS_PER_DOCUMENT = 2000
"""Rounds on one document before a fresh one is opened (while the index is built)."""
TARGETS = {"round_trip_p50_ms": 10.0, "round_trip_p99_ms": 25.0, "retrieval_p99_ms": 15.0}
"""Issue 28's: the server's own cost per completion, and retrieval, on a large workspace."""


def rss_mb(pid: int) -> float | None:
    """Resident memory of process `pid` (Linux /proc), MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    """Process `pid`'s descendants (Linux /proc)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            kids = [int(word) for word in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        for kid in kids:
            found += [kid, *children(kid)]
    return found


def _memory(pid: int) -> dict[str, Any]:
    """The server's RSS and its largest child's (the indexing worker)."""
    kids = [value for kid in children(pid) if (value := rss_mb(kid)) is not None]
    return {"server_mb": rss_mb(pid), "worker_mb": max(kids) if kids else None}


class _Typist:
    """Edit + completion rounds on fresh copies of the 5,000-line file, one after another."""

    def __init__(self, session: EditorSession, workdir: Path, label: str, kind: str, seed: int):
        self.session, self.workdir, self.label, self.kind = session, workdir, label, kind
        self.seed = seed
        self._documents = 0
        self._steps: list[Any] = []
        self._at = 0
        self._uri = ""
        self._unread: list[bool] = []

    def _open(self) -> None:
        if self._uri:
            self.session.close_document(self._uri)
        self._documents += 1
        path = self.workdir / f"{self.label}_{self._documents}.py"
        self._uri = self.session.open(path, large_file())
        self._steps = plan(self.kind, STEPS_PER_DOCUMENT, 0, self.seed + self._documents)
        self._at = 0

    async def rounds(
        self, samples: _Samples, gap_s: float, measured: int | None = None, until: Any = None
    ) -> None:
        """Rounds until `measured` measured ones (or until `until()`, checked every
        READ_EVERY rounds, is true); warm-up rounds are rounds with `samples` None-like."""
        done = 0
        while True:
            if not self._steps or self._at >= len(self._steps):
                await self._flush(samples)
                self._open()
            step = self._steps[self._at]
            self._at += 1
            elapsed = await _round(self.session, self._uri, self._at + 1, step, gap_s)
            if step.measured:
                samples.round_trip_ms.append(elapsed)
                done += 1
            self._unread.append(step.measured)
            if len(self._unread) >= READ_EVERY:
                await self._flush(samples)
                if until is not None and await until():
                    return
            if measured is not None and done >= measured:
                await self._flush(samples)
                return

    async def _flush(self, samples: _Samples) -> None:
        await _read_marks(self.session, self._unread, samples, self.label)
        self._unread = []


async def _server(engine: FakeEngine, root: Path, enabled: bool, max_files: int) -> EditorSession:
    options = {
        **OPTIONS,
        "engine": {"url": engine.url},
        "context": {"workspace": {"enabled": enabled, "maxFiles": max_files}},
    }
    return await EditorSession.start(root, initialization_options=options)


async def run_servers(
    root: Path,
    max_files: int,
    workdir: Path,
    *,
    count: int,
    warmup: int,
    seed: int,
    gap_s: float,
    kind: str,
    timeout_s: float,
) -> dict[str, Any]:
    """Phases `off` and `on` (see the module's notes)."""
    engine = await FakeEngine().start()
    engine.keep_bodies = False
    engine.default = Reply(chunks=["records.sort()\n"])
    report: dict[str, Any] = {}
    try:
        off_session = await _server(engine, root, False, max_files)
        try:
            alone = _Typist(off_session, workdir, "off", kind, seed)
            await alone.rounds(_Samples(), gap_s, warmup)
            off = _Samples()
            await alone.rounds(off, gap_s, count)
            report["off"] = {
                "keystrokes": _keystrokes(off),
                "memory": _memory(off_session.connection.pid),
                "index": (await off_session.stats()).get("index"),
            }
            plan = _Plan(workdir, count, warmup, seed, gap_s, kind, timeout_s)
            report["on"] = await _indexing(engine, root, max_files, alone, plan)
        finally:
            await off_session.close()
    finally:
        await engine.stop()
    return report


@dataclass(frozen=True, slots=True)
class _Plan:
    """How the rounds of phase `on` go (`run_servers`' options)."""

    workdir: Path
    count: int
    warmup: int
    seed: int
    gap_s: float
    kind: str
    timeout_s: float


async def _indexing(
    engine: FakeEngine, root: Path, max_files: int, alongside: _Typist, plan: _Plan
) -> dict[str, Any]:
    """Phase `on`, the index-off server's `alongside` typist taking turns with it."""
    gap_s, timeout_s = plan.gap_s, plan.timeout_s
    started = time.monotonic()
    session = await _server(engine, root, True, max_files)
    try:
        pid = session.connection.pid
        at_start = _memory(pid)
        peak: dict[str, float] = {}
        trace: list[dict[str, Any]] = []
        typist = _Typist(session, plan.workdir, "on", plan.kind, plan.seed)

        async def built() -> bool:
            index = (await session.stats()).get("index") or {}
            memory = _memory(pid)
            for key, value in memory.items():
                if value is not None:
                    peak[key] = max(peak.get(key, 0.0), value)
            if len(trace) < 400 or len(trace) % 10 == 0:
                trace.append(
                    {
                        "s": round(time.monotonic() - started, 2),
                        "files": index.get("files"),
                        **memory,
                    }
                )
            if time.monotonic() - started > timeout_s:
                raise TimeoutError(f"the index was not built in {timeout_s:.0f} s")
            return not index.get("indexing", False)

        during, during_off = _Samples(), _Samples()
        await _in_turns(typist, during, alongside, during_off, gap_s, until=built)
        seen_s = time.monotonic() - started
        index = (await session.stats()).get("index") or {}
        after_build = _memory(pid)
        await typist.rounds(_Samples(), gap_s, plan.warmup)
        after, after_off = _Samples(), _Samples()
        await _in_turns(typist, after, alongside, after_off, gap_s, count=plan.count)
        return {
            "index": index,
            "built_seen_s": round(seen_s, 2),
            "memory": {
                "at_start": at_start,
                "built": after_build,
                "after_rounds": _memory(pid),
                "peak": peak,
            },
            "memory_trace": trace,
            "during": _keystrokes(during),
            "during_off": _keystrokes(during_off),
            "after": _keystrokes(after),
            "after_off": _keystrokes(after_off),
        }
    finally:
        await session.close()


async def _in_turns(
    first: _Typist,
    first_samples: _Samples,
    second: _Typist,
    second_samples: _Samples,
    gap_s: float,
    *,
    until: Any = None,
    count: int | None = None,
) -> None:
    """READ_EVERY measured rounds of `first`, then of `second`, in turns: until `until()` is
    true (checked after each pair of turns), or `count` measured rounds of each."""
    while True:
        turn = READ_EVERY
        if count is not None:
            turn = min(turn, count - len(first_samples.round_trip_ms))
        await first.rounds(first_samples, gap_s, turn)
        await second.rounds(second_samples, gap_s, turn)
        if until is not None and await until():
            return
        if count is not None and len(first_samples.round_trip_ms) >= count:
            return


def _keystrokes(samples: _Samples) -> dict[str, Any]:
    return {
        "round_trip_ms": summarize_ms(samples.round_trip_ms),
        "prompt_built_ms": summarize_ms(samples.prompt_built_ms),
        "outcomes": dict(samples.outcomes),
        "max_ms": round(max(samples.round_trip_ms), 2) if samples.round_trip_ms else None,
        "over_25ms": sum(value > 25.0 for value in samples.round_trip_ms),
    }


def run_retrieval(root: Path, max_files: int, cursors: int, seed: int) -> dict[str, Any]:
    """Phase `retrieval`: the folder indexed in this process, then `gather` at `cursors`
    sampled cursors."""
    import tree_sitter

    from copilot_lsp.context.file_summary import summarize_file
    from copilot_lsp.context.languages import grammar
    from copilot_lsp.context.repo_index import RepoIndex
    from copilot_lsp.context.retrieval import Cursor, gather
    from copilot_lsp.context.workspace_files import Limits, discover, language_of

    limits = Limits(max_files=max_files)
    rss_before = rss_mb(os.getpid())
    started = time.perf_counter()
    found = discover(root, limits)
    discovered_s = time.perf_counter() - started
    index = RepoIndex()
    lines = size = 0
    python: list[str] = []
    for relative in found:
        language = language_of(relative)
        assert language is not None
        summary = summarize_file(root, relative, language, None, False, limits)
        if summary is None:
            continue
        uri = (root / relative).as_uri()
        index.put(uri, relative, summary)
        data = (root / relative).read_bytes()
        lines += data.count(b"\n")
        size += len(data)
        if language == "python" and data.count(b"\n") > 20:
            python.append(relative)
    built_s = time.perf_counter() - started
    rss_after = rss_mb(os.getpid())

    rng = random.Random(seed)
    parser = tree_sitter.Parser(grammar("python"))
    times: list[float] = []
    kinds: dict[str, int] = {}
    complete = 0
    for relative in rng.sample(python, min(cursors, len(python))) if python else []:
        text = (root / relative).read_text(encoding="utf-8", errors="replace")
        all_lines = text.split("\n")
        line = rng.randrange(10, len(all_lines))
        above = "\n".join(all_lines[:line]) + "\n"
        tree = parser.parse(text.encode("utf-8", "surrogatepass"))
        cursor = Cursor((root / relative).as_uri(), relative, "python", above, line, tree)
        began = time.perf_counter()
        got, whole = gather(index, cursor, began + 10.0)
        times.append((time.perf_counter() - began) * 1000.0)
        complete += whole
        for item in got:
            kinds[item.kind] = kinds.get(item.kind, 0) + 1
    return {
        "files": len(index),
        "discovered": len(found),
        "lines": lines,
        "bytes": size,
        "discover_s": round(discovered_s, 2),
        "build_s": round(built_s, 2),
        "files_per_s": round(len(index) / built_s, 1) if built_s else None,
        "lines_per_s": round(lines / built_s) if built_s else None,
        "index": index.stats(),
        "process_rss_mb": {"before": rss_before, "after": rss_after},
        "retrieval_ms": {
            **summarize_ms(times),
            "max": round(max(times), 2) if times else None,
        },
        "retrieval_complete": complete,
        "retrieved_kinds": kinds,
    }


async def run_index(
    root: Path,
    max_files: int,
    workdir: Path,
    *,
    count: int = 300,
    warmup: int = 20,
    seed: int = 1,
    gap_s: float = 0.025,
    kind: str = "typing",
    cursors: int = 500,
    timeout_s: float = 3600.0,
    servers: bool = True,
) -> dict[str, Any]:
    report: dict[str, Any] = {
        "host": platform.node(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_before": [round(value, 2) for value in os.getloadavg()],
        "root": str(root),
        "max_files": max_files,
        "git_ceiling": os.environ.get("GIT_CEILING_DIRECTORIES"),
        "file_lines": len(large_file().split("\n")),
        "edit": kind,
        "count": count,
        "warmup": warmup,
        "gap_ms": round(gap_s * 1000, 1),
        "targets": TARGETS,
    }
    if servers:
        report.update(
            await run_servers(
                root,
                max_files,
                workdir,
                count=count,
                warmup=warmup,
                seed=seed,
                gap_s=gap_s,
                kind=kind,
                timeout_s=timeout_s,
            )
        )
    report["load_mid"] = [round(value, 2) for value in os.getloadavg()]
    report["retrieval"] = await asyncio.to_thread(run_retrieval, root, max_files, cursors, seed)
    report["load_after"] = [round(value, 2) for value in os.getloadavg()]
    on = report.get("on")
    if on and on["index"].get("first_pass_s"):
        seconds = on["index"]["first_pass_s"]
        same = report["retrieval"]["files"] == on["index"].get("files")
        report["server_rate"] = {
            "files_per_s": round(on["index"]["files"] / seconds, 1),
            "lines_per_s": round(report["retrieval"]["lines"] / seconds) if same else None,
            "same_files_as_in_process": same,
        }
    return report
