"""Speculative decoding side by side: the same held-out code prompts, greedy, one stream.

For each profile in turn: start its engine (`engine up`, on its own port and state dir), send
every prompt once to warm up nothing but the process (a separate warm-up prompt), then each
prompt with temperature 0, streamed, one at a time. Reported per profile: decode tokens/s
(tokens after the first / time after the first token), end-to-end tokens/s, the acceptance rate,
mean accepted length and per-position acceptance from the engine's counter deltas, and whether
every output is token-for-token the first profile's (plain decoding, when listed first).

Prompts come from the held-out split of the draft corpus (draft/corpus.py), never from files
the drafts were trained on, and never from SAFIM.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from copilot_lsp.draft import corpus
from copilot_lsp.engine import launcher
from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics
from copilot_lsp.engine.monitor import Scrape, window_between
from copilot_lsp.engine.profiles import Profile

WARMUP = "import os\n\n\ndef main():\n"


def heldout_prompts(count: int, max_chars: int = 1200, heldout_percent: int = 5) -> list[str]:
    """Prefixes of held-out corpus files, cut after a line that opens a block or ends a def."""
    files = corpus.collect(corpus.default_roots())
    prompts: list[str] = []
    for source in files:
        if source.split(heldout_percent) != "heldout":
            continue
        text = corpus.read_text(source)
        if not text or len(text) < max_chars:
            continue
        head = text[:max_chars]
        cut = head.rfind(":\n")  # stop right after a block opener: the model writes its body
        if cut < max_chars // 3:
            continue
        prompts.append(head[: cut + 2])
        if len(prompts) == count:
            break
    return prompts


@dataclass(frozen=True)
class Run:
    text: str
    tokens: int
    first_token_s: float
    total_s: float


def complete(root: str, model: str, prompt: str, max_tokens: int) -> Run:
    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stream": True,
        "ignore_eos": True,
        "stream_options": {"include_usage": True},
    }
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    tokens = 0
    with httpx.stream("POST", f"{root}/v1/completions", json=body, timeout=600) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            for choice in event.get("choices") or []:
                if choice.get("text"):
                    first = first if first is not None else time.perf_counter()
                    parts.append(choice["text"])
            usage = event.get("usage")
            if usage:
                tokens = int(usage["completion_tokens"])
    ended = time.perf_counter()
    return Run("".join(parts), tokens, (first or ended) - started, ended - started)


def _counters(root: str) -> Scrape:
    samples = parse_metrics(httpx.get(f"{root}/metrics", timeout=10).text)
    return Scrape(time.monotonic(), SpecDecodeCounters.from_samples(samples))


def run_profile(
    profile: Profile, prompts: list[str], max_tokens: int, port: int, log: Any = print
) -> dict[str, Any]:
    state = launcher.engine_up(profile, port=port, log=log)
    root = state.url.removesuffix("/v1")
    try:
        complete(root, profile.model.served_name, WARMUP, 16)
        before = _counters(root)
        runs = [complete(root, profile.model.served_name, p, max_tokens) for p in prompts]
        after = _counters(root)
    finally:
        launcher.engine_down()
    window = window_between(before, after)
    decode_tokens = sum(max(0, r.tokens - 1) for r in runs)
    decode_s = sum(r.total_s - r.first_token_s for r in runs)
    return {
        "profile": profile.name,
        "speculative": profile.speculative_config(),
        "dtype": profile.model.dtype,
        "decode_tok_s": round(decode_tokens / decode_s, 2) if decode_s else None,
        "e2e_tok_s": round(sum(r.tokens for r in runs) / sum(r.total_s for r in runs), 2),
        "median_first_token_ms": round(sorted(r.first_token_s for r in runs)[len(runs) // 2] * 1e3),
        "tokens": sum(r.tokens for r in runs),
        "acceptance": window.as_dict() if window.drafts else None,
        "outputs": [r.text for r in runs],
    }


def compare(results: list[dict[str, Any]]) -> None:
    """Mark each result with how many outputs equal the first profile's, and its speed-up."""
    reference = results[0]
    for result in results:
        same = sum(a == b for a, b in zip(result["outputs"], reference["outputs"], strict=True))
        result["identical_to_first"] = f"{same}/{len(reference['outputs'])}"
        if reference["decode_tok_s"] and result["decode_tok_s"]:
            result["speedup"] = round(result["decode_tok_s"] / reference["decode_tok_s"], 2)


def render(results: list[dict[str, Any]]) -> str:
    header = (
        f"{'profile':<22}{'decode tok/s':>13}{'e2e tok/s':>10}{'speed-up':>9}{'accept':>8}"
        f"{'mean len':>9}  {'per position':<22}{'same as first':>14}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        acceptance = r["acceptance"] or {}
        per_position = " ".join(f"{p:.2f}" for p in acceptance.get("per_position", []))
        rate = acceptance.get("acceptance_rate")
        length = acceptance.get("mean_accepted_length")
        lines.append(
            f"{r['profile']:<22}{r['decode_tok_s']:>13}{r['e2e_tok_s']:>10}"
            f"{r.get('speedup', '-'):>9}{'-' if rate is None else f'{rate:.3f}':>8}"
            f"{'-' if length is None else f'{length:.2f}':>9}  {per_position or '-':<22}"
            f"{r['identical_to_first']:>14}"
        )
    return "\n".join(lines)


def write_report(results: list[dict[str, Any]], settings: dict[str, Any], path: Path) -> None:
    report = {
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
        "settings": settings,
        "results": results,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
