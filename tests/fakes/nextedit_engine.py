"""A scripted engine for the VS Code end-to-end run's next-edit scenario
(editor-extensions/vscode/e2e/run.mjs with VSCODE_E2E_SCRIPTED=1): the embedded 135M model
cannot produce right next edits, this engine answers deterministic ones.

Next-edit prompts (the `plain` format: the window after "before the next edit:") are answered
with the window rewritten by `RENAMES` (the use of a renamed parameter follows the rename) and
`ANNOTATED` (a second parameter annotated like the first);
a window they do not touch comes back unchanged, which the server offers as no edit.
Completion prompts that end on a new line under one of the run's function headers
(`def scale_N(...)`: the fake model's prompt is the prefix) are answered with `BODY`, all
others with nothing, so that no ghost text covers a next edit.

    python -m tests.fakes.nextedit_engine [PORT]

prints `url <base URL>` once it listens, and serves until it is terminated.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from typing import Any

from copilot_lsp.testing.fake_engine import FakeEngine, Reply

WINDOW_HEAD = "before the next edit:\n"
WINDOW_END = "\n# end"
RENAMES = (("return x * factor", "return count * factor"),)
"""The user renames `x` to `count` in `def scale(x, factor):`; its use follows."""
ANNOTATED = "def area(width: int, height):"
"""The user annotates the first parameter; the next edit annotates the second, on the same
line after the cursor (an insertion: VS Code shows it as ghost text)."""
BODY = "return [item * factor for item in items]"
"""The completion under a `def scale_N(items, factor)` header of the regular tries."""
UNDER_HEADER = re.compile(r"def scale_\d+\([^\n]*:(\n[ \t]*)?\Z")
"""The prompt's end on the new line under a header (the server may leave out the line's blanks,
and then expects them from the model)."""


def route(body: dict[str, Any]) -> Reply:
    """The reply to one greedy request, from its prompt."""
    prompt = str(body.get("prompt", ""))
    if WINDOW_HEAD in prompt:
        window = prompt.rsplit(WINDOW_HEAD, 1)[1].split(WINDOW_END, 1)[0]
        if "def scale(count" in window:
            for old, new in RENAMES:
                window = window.replace(old, new)
        window = window.replace(ANNOTATED, ANNOTATED.replace("height)", "height: int)"))
        # Each line ended: the engine stops at the format's closing header, not sent.
        return Reply(chunks=[window + "\n"])
    if found := UNDER_HEADER.search(prompt):
        return Reply(chunks=[BODY if found.group(1) else f"\n    {BODY}"])
    return Reply(chunks=[])


async def serve(port: int) -> None:
    engine = FakeEngine()
    engine.keep_bodies = False  # a long run: no prompts kept
    engine.route = route
    await engine.start(port)
    print(f"url {engine.url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await engine.stop()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
