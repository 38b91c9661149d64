"""Per-arm figures from the replay's raw records: what users feel, what the engine spent.

Latencies are milliseconds after the keystroke's request was sent:

* first ghost: the first non-empty ghost text of that request drawn while its version was
  the buffer's (a `copilot/partialCompletion` or the answer); first line: the ghost holds a
  complete first line (streamed text past a newline, or the finished suggestion); whole: the
  answer with the suggestion, whether or not the user had typed on.
* Drawn ghosts only exist for requests that lived long enough, so a slow engine looks fast
  on them (survivors). "At pauses" fixes that: the requests followed by at least `PAUSE_MS`
  without an edit (the same keystrokes for every arm, from the seeded schedule), with a
  ghost that never came counted as slower than any that did.

Tokens: the server's per-completion log gives each completion's generated tokens; those of
completions the user saw (ghost text drawn) are useful, the rest were cancelled, superseded,
filtered to nothing or answered after the user typed on. The engine's own counter
(`vllm:generation_tokens_total`) also counts what it generated before an abort reached it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

PAUSE_MS = 600.0
"""A request followed by this long without an edit is one the user waited on."""
QUANTILES = (50, 90, 99)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (inclusive method); inf values sort last; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return _round(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    below, above, part = ordered[low], ordered[high], rank - low
    if part == 0 or below == above:
        return _round(below)
    if math.isinf(above):
        return math.inf
    return _round(below + (above - below) * part)


def _round(value: float) -> float:
    return value if math.isinf(value) else round(value, 1)


def spread(values: Sequence[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(values)}
    for q in QUANTILES:
        out[f"p{q}"] = percentile(values, q)
    return out


def latency(
    records: Sequence[dict[str, Any]],
    typed_through: frozenset[str] = frozenset(),
    taken_over: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """`typed_through`: ids of completions the server answered from the suggestion already
    shown (the user typed what it showed), without asking the engine; `taken_over`: those
    answered from the engine stream an earlier keystroke opened (the user typed what it had
    produced), without a new engine request."""
    visible = [r for r in records if r["visible"] and r["first_ghost_ms"] is not None]
    generated = [r for r in visible if not _only(r, typed_through)]
    fresh = [r for r in generated if not _only(r, taken_over)]
    lines = [r["first_line_ms"] for r in visible if r["first_line_ms"] is not None]
    whole = [r["answered_ms"] for r in records if r["outcome"] == "items"]
    paused = [r for r in records if (r["gap_ms"] or 0.0) >= PAUSE_MS]
    return {
        "first_ghost_ms": spread([r["first_ghost_ms"] for r in visible]),
        "first_ghost_generated_ms": spread([r["first_ghost_ms"] for r in generated]),
        # How many keystrokes a suggestion is typed through depends on when the user takes
        # it, so the first lines answered at once can decide the median over all of them.
        "first_line_generated_ms": spread(
            [r["first_line_ms"] for r in generated if r["first_line_ms"] is not None]
        ),
        "typed_through": len(visible) - len(generated),
        "first_line_fresh_ms": spread(
            [r["first_line_ms"] for r in fresh if r["first_line_ms"] is not None]
        ),
        "taken_over": len(generated) - len(fresh),
        "first_line_ms": spread(lines),
        "whole_ms": spread(whole),
        "at_pauses": {
            "requests": len(paused),
            "ghost_share": _share(sum(_ghost_in_time(r) for r in paused), len(paused)),
            "first_ghost_ms": spread([_censored(r, "first_ghost_ms") for r in paused]),
            "first_line_ms": spread([_censored(r, "first_line_ms") for r in paused]),
        },
    }


def _only(record: dict[str, Any], ids: frozenset[str]) -> bool:
    """Whether every completion that answered `record` is among `ids`."""
    return bool(record["completion_ids"]) and set(record["completion_ids"]) <= ids


def _ghost_in_time(record: dict[str, Any]) -> bool:
    return record["visible"] and record["first_ghost_ms"] is not None


def _censored(record: dict[str, Any], name: str) -> float:
    value = record[name]
    return float(value) if record["visible"] and value is not None else math.inf


def outcomes(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    return {
        "requests": len(records),
        "visible": sum(1 for r in records if r["visible"]),
        "cancelled_by_editor": sum(1 for r in records if r["cancelled_by_editor"]),
        "answers": counts,
    }


def proxy(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The accepted-characters proxy over every suggestion drawn in full."""
    shown = [r for r in records if r["matched_chars"] is not None and r["shown_chars"]]
    total = sum(r["shown_chars"] for r in shown)
    matched = sum(r["matched_chars"] for r in shown)
    return {
        "suggestions": len(shown),
        "shown_chars": total,
        "matched_chars": matched,
        "matched_share": _share(matched, total),
        "mean_matched_chars": round(matched / len(shown), 2) if shown else None,
        "exact_share": _share(
            sum(1 for r in shown if r["matched_chars"] == r["shown_chars"]), len(shown)
        ),
    }


def accepts(records: Sequence[dict[str, Any]], typed: int, accepted: int) -> dict[str, Any]:
    return {
        "full": sum(1 for r in records if r["accepted"] == "full"),
        "partial": sum(1 for r in records if r["accepted"] == "partial"),
        "tab_missed": sum(1 for r in records if r["tab_missed"]),
        "typed_chars": typed,
        "accepted_chars": accepted,
        "accepted_share": _share(accepted, typed + accepted),
    }


def tokens(
    records: Sequence[dict[str, Any]],
    completions: Iterable[dict[str, Any]],
    engine_generated: int | None,
) -> dict[str, Any]:
    """Useful (drawn) versus wasted tokens, from the server's log and the engine's counter."""
    drawn = {cid for r in records if r["visible"] for cid in r["completion_ids"]}
    by_outcome: dict[str, int] = {}
    total = useful = 0
    for completion in completions:
        count = int(completion.get("tokens") or 0)
        outcome = str(completion.get("outcome"))
        by_outcome[outcome] = by_outcome.get(outcome, 0) + count
        total += count
        if completion.get("id") in drawn:
            useful += count
    out: dict[str, Any] = {
        "server_total": total,
        "useful": useful,
        "wasted": total - useful,
        "wasted_share": _share(total - useful, total),
        "by_outcome": by_outcome,
        "engine_generated": engine_generated,
    }
    if engine_generated is not None:
        out["engine_wasted"] = max(0, engine_generated - useful)
        out["engine_wasted_share"] = _share(max(0, engine_generated - useful), engine_generated)
    return out


def prefill(engine: dict[str, Any]) -> dict[str, Any]:
    """Prompt tokens the engine prefilled, those it computed and the share its prefix cache
    held: a prompt that changes near its start on every keystroke is computed whole each time.

    `prompt_tokens` is vLLM's `vllm:prompt_tokens` delta, which counts every prompt token of a
    completed prefill, computed or served from the cache (vLLM 0.32: `PromptTokenStats.total`);
    `prompt_tokens_cached` the cached part of those."""
    prefilled, cached = engine.get("prompt_tokens"), engine.get("prompt_tokens_cached")
    if prefilled is None or cached is None:
        return {"prompt_tokens": None, "computed": None, "cached": None, "cached_share": None}
    return {
        "prompt_tokens": prefilled,
        "computed": max(0, prefilled - cached),
        "cached": cached,
        "cached_share": _share(min(cached, prefilled), prefilled),
    }


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def summarise_run(run: dict[str, Any]) -> dict[str, Any]:
    """The figures of one (arm, repeat) run."""
    records = run["records"]

    def answered_as(mode: str) -> frozenset[str]:
        return frozenset(str(c.get("id")) for c in run["completions"] if c.get("mode") == mode)

    return {
        "latency": latency(records, answered_as("type-through"), answered_as("adopted")),
        "outcomes": outcomes(records),
        "proxy": proxy(records),
        "accepts": accepts(records, run["typed_chars"], run["accepted_chars"]),
        "tokens": tokens(records, run["completions"], run["engine"].get("generation_tokens")),
        "prefill": prefill(run["engine"]),
        "spec_decode": run["engine"].get("spec_decode"),
    }


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    """Per arm: every repeat pooled, each repeat's medians, and ratios to the reference arm."""
    arms: dict[str, Any] = {}
    for arm in data["arms"]:
        label = arm["label"]
        runs = [run for run in data["runs"] if run["arm"] == label]
        if not runs:
            continue
        pooled = {
            "records": [r for run in runs for r in run["records"]],
            "completions": [c for run in runs for c in run["completions"]],
            "typed_chars": sum(run["typed_chars"] for run in runs),
            "accepted_chars": sum(run["accepted_chars"] for run in runs),
            "engine": _pooled_engine(runs),
        }
        figures = summarise_run(pooled)
        figures["repeats"] = [_repeat_medians(run) for run in runs]
        arms[label] = figures
    reference = data.get("reference") or (data["arms"][0]["label"] if data["arms"] else None)
    return {"reference": reference, "arms": arms, "ratios": _ratios(arms, reference)}


def _repeat_medians(run: dict[str, Any]) -> dict[str, Any]:
    figures = latency(run["records"])
    return {
        "repeat": run["repeat"],
        "first_ghost_p50": figures["first_ghost_ms"]["p50"],
        "first_line_p50": figures["first_line_ms"]["p50"],
        "pause_first_line_p50": figures["at_pauses"]["first_line_ms"]["p50"],
    }


def _pooled_engine(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    generated = [run["engine"].get("generation_tokens") for run in runs]
    counters = [run["engine"].get("spec_decode") for run in runs]
    engine: dict[str, Any] = {
        "generation_tokens": None if None in generated else sum(g or 0 for g in generated),
        "spec_decode": None,
    }
    for name in ("prompt_tokens", "prompt_tokens_cached"):
        values = [run["engine"].get(name) for run in runs]
        engine[name] = None if None in values else sum(v or 0 for v in values)
    if counters and all(c is not None for c in counters):
        drafts = sum(c["drafts"] for c in counters if c)
        draft_tokens = sum(c["draft_tokens"] for c in counters if c)
        accepted = sum(c["accepted_tokens"] for c in counters if c)
        engine["spec_decode"] = {
            "drafts": drafts,
            "draft_tokens": draft_tokens,
            "accepted_tokens": accepted,
            "acceptance_rate": _share(accepted, draft_tokens),
            "mean_accepted_length": round(1 + accepted / drafts, 3) if drafts else None,
        }
    return engine


_RATIO_KEYS = (
    ("first_ghost_p50", ("latency", "first_ghost_ms", "p50")),
    ("first_line_p50", ("latency", "first_line_ms", "p50")),
    ("first_line_generated_p50", ("latency", "first_line_generated_ms", "p50")),
    ("first_line_fresh_p50", ("latency", "first_line_fresh_ms", "p50")),
    ("whole_p50", ("latency", "whole_ms", "p50")),
    ("pause_first_line_p50", ("latency", "at_pauses", "first_line_ms", "p50")),
)


def _dig(figures: dict[str, Any], path: Sequence[str]) -> Any:
    node: Any = figures
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _ratios(arms: dict[str, Any], reference: str | None) -> dict[str, Any]:
    """reference / arm for each latency median: above 1 means the arm is faster."""
    if reference is None or reference not in arms:
        return {}
    out: dict[str, Any] = {}
    for label, figures in arms.items():
        row: dict[str, Any] = {}
        for name, path in _RATIO_KEYS:
            base, value = _dig(arms[reference], path), _dig(figures, path)
            ok = isinstance(base, int | float) and isinstance(value, int | float)
            finite = ok and not (math.isinf(base) or math.isinf(value)) and value > 0
            row[f"speedup_{name}"] = round(base / value, 2) if finite else None
        out[label] = row
    return out


def median_or_none(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None and not math.isinf(v)]
    return round(statistics.median(present), 1) if present else None
