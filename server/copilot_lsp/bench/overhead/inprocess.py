"""`bench overhead --profile FILE`: the same edits in this process, under cProfile.

What the server does per didChange and completion, without the protocol and the engine: the
workspace takes the edit, builds the request at the cursor, and the prompt is built from it
(in the embedded model's format, `smollm2`, with the approximate token counter: the scripted
engine's model has no format of its own). Only the measured steps are profiled; the stats
file reads with `python -m pstats FILE` or snakeviz.
"""

from __future__ import annotations

import cProfile
from collections.abc import Sequence
from pathlib import Path

from copilot_lsp.bench.overhead.edits import Step, large_file, plan
from copilot_lsp.completion.assembly import build_prompt
from copilot_lsp.completion.budget import TokenCounter
from copilot_lsp.completion.stages import limits
from copilot_lsp.completion.templates import load_template
from copilot_lsp.completion.workspace import Workspace
from copilot_lsp.context.documents import Edit
from copilot_lsp.positions import Position
from copilot_lsp.settings import Settings


def profile_edits(edits: Sequence[str], count: int, warmup: int, seed: int, out: Path) -> int:
    """Each class's steps (as `bench overhead` plans them) applied and prompted for in this
    process; the measured ones profiled into `out`. Returns the steps profiled."""
    settings = Settings()
    template, counter = load_template("smollm2"), TokenCounter()
    bounds = limits(settings, template)
    profiler = cProfile.Profile()
    profiled = 0
    for kind in edits:
        workspace = Workspace()
        workspace.set_root("file:///work")
        uri = f"file:///work/{kind}.py"
        workspace.open(uri, "python", 1, large_file())
        for version, step in enumerate(plan(kind, count, warmup, seed), start=2):
            if step.measured:
                profiler.enable()
            workspace.change(uri, version, [_edit(step)], "utf-16")
            request = workspace.request(
                uri,
                Position(*step.cursor),
                "utf-16",
                automatic=True,
                options=settings.completion,
            )
            if request is None:
                raise RuntimeError(f"{kind}: the document went out of sync at step {version}")
            build_prompt(request.prompt, template, counter, bounds)
            profiler.disable()
            profiled += step.measured
    out.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(str(out))
    return profiled


def _edit(step: Step) -> Edit:
    if step.start is None or step.end is None:
        return Edit(step.text)
    return Edit(step.text, Position(*step.start), Position(*step.end))
