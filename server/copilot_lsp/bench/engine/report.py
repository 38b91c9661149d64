"""From the benchmark's JSON to tables and answers: summaries per profile and concurrency,
acceptance per kind of code and per draft position, the temperature sweep, greedy equality,
and a measured yes or no for each of the speculative-decoding claims this project started
from (stated in claims.py).

Everything here reads the JSON document only, so a report can be regenerated from a saved
run (`bench engine --report-only`).
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from copilot_lsp.bench.engine.runner import MIXED
from copilot_lsp.telemetry.stats import percentile

Cells = list[dict[str, Any]]


def _ok(cells: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for cell in cells for r in cell["requests"] if r["ok"]]


def _stats(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "mean": None, "median": None, "p90": None, "p99": None}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 2),
        "median": round(statistics.median(values), 2),
        "p90": round(percentile(list(values), 90), 2),
        "p99": round(percentile(list(values), 99), 2),
    }


def _gaps(request: dict[str, Any]) -> list[float]:
    chunks = request["chunks"]
    gaps: list[float] = []
    for (before, tokens_before), (after, tokens_after) in itertools.pairwise(chunks):
        delivered = tokens_after - tokens_before
        if delivered > 0:
            gaps.extend([(after - before) / delivered] * delivered)
    return gaps


def relabel(data: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """The run with its profiles renamed (old name -> label) wherever a profile is named:
    for runs saved before profiles given as TOML paths were labelled by name."""
    if all(labels.get(name, name) == name for name in data["profiles"]):
        return data
    profiles = {}
    for name, info in data["profiles"].items():
        label = labels.get(name, name)
        profiles[label] = {**info, "name": label}
    cells = [
        {**cell, "profile": labels.get(cell["profile"], cell["profile"])} for cell in data["cells"]
    ]
    return {**data, "profiles": profiles, "cells": cells}


def plain_profile(data: dict[str, Any]) -> str:
    """The profile the others are compared with: the first without speculation."""
    for name, info in data["profiles"].items():
        if info.get("speculative") is None and "endpoint" not in info:
            return str(name)
    for name in data["profiles"]:
        if "baseline" in name or "plain" in name:
            return str(name)
    return str(next(iter(data["profiles"])))


def _select(
    data: dict[str, Any], profile: str, concurrency: int, temperature: float
) -> dict[int, Cells]:
    """The cells of one condition, by repeat. At concurrency 1 and temperature 0 the flat
    and nested cells together stand for the mixed set the sweeps use."""
    by_repeat: dict[int, Cells] = defaultdict(list)
    for cell in data["cells"]:
        if (cell["profile"], cell["concurrency"], cell["temperature"]) != (
            profile,
            concurrency,
            temperature,
        ):
            continue
        if cell["set"] in (MIXED, "flat", "nested"):
            by_repeat[cell["repeat"]].append(cell)
    return by_repeat


def condition_summary(cells_by_repeat: dict[int, Cells]) -> dict[str, Any]:
    cells = [cell for cells in cells_by_repeat.values() for cell in cells]
    requests = _ok(cells)
    all_requests = [r for cell in cells for r in cell["requests"]]
    per_repeat = []
    ttft_per_repeat = []
    throughput = []
    for repeat_cells in cells_by_repeat.values():
        rates = [r["tok_s"] for r in _ok(repeat_cells) if r["tok_s"]]
        if rates:
            per_repeat.append(statistics.median(rates))
        firsts = [r["ttft_ms"] for r in _ok(repeat_cells) if r["ttft_ms"] is not None]
        if firsts:
            ttft_per_repeat.append(statistics.median(firsts))
        wall = sum(cell["wall_s"] for cell in repeat_cells)
        tokens = sum(r["tokens"] for r in _ok(repeat_cells))
        if wall > 0:
            throughput.append(tokens / wall)
    return {
        "requests": len(all_requests),
        "failures": len(all_requests) - len(requests),
        "tok_s": _stats([r["tok_s"] for r in requests if r["tok_s"]]),
        "tok_s_repeat_medians": [round(v, 2) for v in per_repeat],
        "throughput_tok_s": round(statistics.median(throughput), 2) if throughput else None,
        "ttft_ms": _stats([r["ttft_ms"] for r in requests if r["ttft_ms"] is not None]),
        "ttft_repeat_medians": [round(v, 1) for v in ttft_per_repeat],
        "itl_ms": _stats([g for r in requests for g in _gaps(r)]),
        "e2e_ms": _stats([r["e2e_ms"] for r in requests if r["e2e_ms"] is not None]),
        "acceptance": combined_acceptance(cells),
    }


def combined_acceptance(cells: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """Counter windows added up: rates over the sum, per position weighted by drafts."""
    windows = [cell["acceptance"] for cell in cells if cell.get("acceptance")]
    drafts = sum(w["drafts"] for w in windows)
    if not drafts:
        return None
    draft_tokens = sum(w["draft_tokens"] for w in windows)
    accepted = sum(w["accepted_tokens"] for w in windows)
    positions = max(len(w["per_position"]) for w in windows)
    per_position = [
        sum(w["per_position"][k] * w["drafts"] for w in windows if k < len(w["per_position"]))
        / drafts
        for k in range(positions)
    ]
    return {
        "drafts": drafts,
        "acceptance_rate": round(accepted / draft_tokens, 4) if draft_tokens else None,
        "mean_accepted_length": round(1 + accepted / drafts, 3),
        "per_position": [round(rate, 4) for rate in per_position],
    }


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    plan = data["plan"]
    plain = plain_profile(data)
    profiles = list(data["profiles"])
    by_concurrency: dict[str, dict[int, Any]] = {}
    for profile in profiles:
        by_concurrency[profile] = {
            c: condition_summary(_select(data, profile, c, 0.0)) for c in plan["concurrency"]
        }
    temperatures = sorted(set(plan["temperatures"]) | {0.0})
    by_temperature = {
        profile: {t: condition_summary(_select(data, profile, 1, t)) for t in temperatures}
        for profile in profiles
    }
    tables: tuple[dict[str, dict[Any, Any]], ...] = (by_concurrency, by_temperature)
    for table in tables:
        for profile in profiles:
            for key, row in table[profile].items():
                row["speedup"] = _ratio(row, table[plain].get(key))
    by_set = {
        profile: {
            name: combined_acceptance(
                c
                for c in data["cells"]
                if c["profile"] == profile
                and c["set"] == name
                and c["concurrency"] == 1
                and c["temperature"] == 0.0
            )
            for name in plan["sets"]
        }
        for profile in profiles
    }
    by_set_timing = {
        profile: {
            name: condition_summary(
                {
                    repeat: [
                        c
                        for c in data["cells"]
                        if (c["profile"], c["set"], c["repeat"]) == (profile, name, repeat)
                        and c["concurrency"] == 1
                        and c["temperature"] == 0.0
                    ]
                    for repeat in range(plan["repeats"])
                }
            )
            for name in plan["sets"]
        }
        for profile in profiles
    }
    return {
        "plain": plain,
        "by_set": by_set_timing,
        "by_concurrency": by_concurrency,
        "by_temperature": by_temperature,
        "acceptance_by_set": by_set,
        "greedy_identical": greedy_identical(data, plain),
    }


def _ratio(row: dict[str, Any], reference: dict[str, Any] | None) -> dict[str, float | None]:
    """Speed-up against plain decoding: of the median request's tokens/s, of throughput,
    and of the median time to first token (below 1 is faster)."""

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    if reference is None:
        return {"tok_s": None, "throughput": None, "ttft": None}
    return {
        "tok_s": ratio(row["tok_s"]["median"], reference["tok_s"]["median"]),
        "throughput": ratio(row["throughput_tok_s"], reference["throughput_tok_s"]),
        "ttft": ratio(row["ttft_ms"]["median"], reference["ttft_ms"]["median"]),
    }


def greedy_identical(data: dict[str, Any], plain: str) -> dict[str, str]:
    """Per profile: outputs equal to plain decoding's, same prompt and repeat, greedy."""
    texts: dict[str, dict[tuple[str, int, str], str]] = defaultdict(dict)
    for cell in data["cells"]:
        if cell["concurrency"] != 1 or cell["temperature"] != 0.0:
            continue
        for request in cell["requests"]:
            if request["ok"] and request.get("text") is not None:
                key = (cell["set"], cell["repeat"], request["prompt"])
                texts[cell["profile"]][key] = request["text"]
    reference = texts.get(plain, {})
    result = {}
    for profile, outputs in texts.items():
        shared = [key for key in outputs if key in reference]
        same = sum(outputs[key] == reference[key] for key in shared)
        result[profile] = f"{same}/{len(shared)}"
    return result
