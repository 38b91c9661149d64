"""Greedy outputs of suffix decoding against plain decoding, token for token.

Both engines (the embedded model, plain and `local-cpu-suffix`) get the same code prompts,
several passes in a row, one at a time: from the second pass on the suffix tree holds the
earlier outputs and speculates long runs, which is where verification could round
differently. In float32 every output must equal plain decoding (tests/engine); in bfloat16
verifying many positions at once may change a token, and the share that differ is a figure
for the report:

    python -m copilot_lsp.bench.replay.greedy --dtype bfloat16 --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.bench.harness import started_engine, state_folder
from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics
from copilot_lsp.serving.profiles import Profile, load_profile

PROMPTS = (
    "def fibonacci(n):\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n",
    "import os\n\n\ndef list_python_files(root):\n",
    "def parse_key_values(text):\n    result = {}\n    for line in text.splitlines():\n",
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n"
    "    def distance(self, other):\n",
    "def merge_sorted(left, right):\n    merged = []\n    i = j = 0\n",
)
TOKENS = 48


def engine_profile(name: str, dtype: str) -> Profile:
    """The shipped profile `name` in `dtype`, lean enough for a shared test machine."""
    profile = load_profile(name).with_embedded_dtype(dtype)
    model = profile.model.model_copy(update={"max_model_len": 1024})
    server = profile.server.model_copy(
        update={"args": ["--enforce-eager", "--max-num-seqs", "4"], "startup_timeout_s": 300}
    )
    env = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    return profile.model_copy(update={"model": model, "server": server, "env": env})


def greedy_token_ids(
    profile: Profile,
    prompts: Sequence[str],
    passes: int,
    log: Callable[[str], None],
    state_dir: Path,
) -> tuple[list[list[int]], SpecDecodeCounters]:
    """Token ids of every (pass, prompt), pass-major, and the engine's counters afterwards."""
    with started_engine(profile, state_dir=state_dir, log=log) as state:
        root = state.url.removesuffix("/v1")
        outputs = []
        for _ in range(passes):
            for prompt in prompts:
                body = {
                    "model": profile.model.served_name,
                    "prompt": prompt,
                    "max_tokens": TOKENS,
                    "temperature": 0.0,
                    "ignore_eos": True,
                    "return_token_ids": True,
                }
                answer = httpx.post(f"{root}/v1/completions", json=body, timeout=300)
                answer.raise_for_status()
                outputs.append(list(answer.json()["choices"][0]["token_ids"]))
        metrics = parse_metrics(httpx.get(f"{root}/metrics", timeout=10).text)
        return outputs, SpecDecodeCounters.from_samples(metrics)


def compare(
    dtype: str,
    *,
    state_dir: Path,
    passes: int = 3,
    suffix_profile: str = "local-cpu-suffix",
    log: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """Plain versus suffix decoding on PROMPTS x passes in `dtype`; the engines record their
    state in `state_dir`."""
    plain, _ = greedy_token_ids(
        engine_profile("local-cpu-baseline", dtype), PROMPTS, passes, log, state_dir
    )
    suffix, counters = greedy_token_ids(
        engine_profile(suffix_profile, dtype), PROMPTS, passes, log, state_dir
    )
    differ = [
        {
            "pass": index // len(PROMPTS) + 1,
            "prompt": index % len(PROMPTS),
            "first_difference": next(
                (at for at, (a, b) in enumerate(zip(a_ids, b_ids, strict=False)) if a != b),
                min(len(a_ids), len(b_ids)),
            ),
        }
        for index, (a_ids, b_ids) in enumerate(zip(plain, suffix, strict=True))
        if a_ids != b_ids
    ]
    return {
        "dtype": dtype,
        "profile": suffix_profile,
        "speculative": load_profile(suffix_profile).speculative_config(),
        "prompts": len(PROMPTS),
        "passes": passes,
        "tokens": TOKENS,
        "outputs": len(plain),
        "identical": len(plain) - len(differ),
        "differ": differ,
        "spec_decode": counters.summary(),
    }


def _to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--profile", default="local-cpu-suffix")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with state_folder(prefix="copilot-lsp-greedy-") as state_dir:
        result = compare(
            args.dtype,
            state_dir=state_dir,
            passes=args.passes,
            suffix_profile=args.profile,
            log=_to_stderr,
        )
    text = json.dumps(result, indent=1)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
