"""The speculative-decoding claims this project started from, each answered from a summary.

The claims, as they were put: plain decoding 28 tok/s → Medusa-2 52 → EAGLE-2 96 on
Qwen2.5-Coder-32B over 2×A100, EAGLE accepting 81.6 % (τ 3.4); Medusa's acceptance falls from
74 % to 31 % on deeply nested code; speculation keeps paying up to batch 64; it gives nothing to
time-to-first-token-critical work; it stops paying above temperature 1.2.

Each answer is `holds` (True/False, or None when the run did not measure what the claim
needs) with the figures it rests on. The thresholds are stated in the text: a speed-up
"pays" above 1.05 (5 % is within what these shared machines wobble by between runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PAYS = 1.05


@dataclass(frozen=True, slots=True)
class Answer:
    claim: str
    holds: bool | None
    evidence: str

    def as_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "holds": self.holds, "evidence": self.evidence}


def _speculative(summary: dict[str, Any]) -> list[str]:
    return [p for p in summary["by_concurrency"] if p != summary["plain"]]


def _speedup(row: dict[str, Any] | None, key: str = "tok_s") -> float | None:
    if row is None:
        return None
    value = row["speedup"][key]
    return float(value) if value is not None else None


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _stops(speedups: dict[Any, float | None]) -> Any | None:
    """The first level (of a sorted sweep) where speculation no longer pays."""
    return next((level for level, value in speedups.items() if (value or 0.0) < PAYS), None)


def _sweep(
    summary: dict[str, Any], table: str, key: str, level: Callable[[Any], str], everywhere: str
) -> tuple[list[str], list[Any]]:
    """Where along a sweep (concurrency, temperature) each speculative profile stops paying.

    Returns one sentence per profile, and the stopping level (None: never) of each profile
    that pays at the sweep's start; one that does not pay even there says nothing about
    where paying stops.
    """
    parts, stops = [], []
    for profile in _speculative(summary):
        rows = summary[table][profile]
        speedups = {x: _speedup(rows[x], key) for x in sorted(rows)}
        stop = _stops(speedups)
        listed = ", ×".join(f"{_fmt(v)} at {level(x)}" for x, v in speedups.items())
        if stop == min(speedups):
            parts.append(f"{profile} does not pay even at {level(stop)} (×{listed})")
            continue
        stops.append(stop)
        ending = everywhere if stop is None else f"stops paying at {level(stop)}"
        parts.append(f"{profile} {ending} (×{listed})")
    return parts, stops


def batch_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation stops paying only when the batch grows past 64.'"""
    claim = "Speculation keeps paying up to batch 64 (stops only beyond it)"
    parts, stops = _sweep(summary, "by_concurrency", "throughput", str, "pays at every level")
    if not stops:
        return Answer(
            claim,
            None,
            "no speculative profile pays at the lowest concurrency; " + "; ".join(parts),
        )
    evidence = "; ".join(parts) + f"; throughput vs plain, pays = above ×{PAYS}"
    if any(stop is not None and stop <= 64 for stop in stops):
        return Answer(claim, False, evidence)
    highest = max(max(summary["by_concurrency"][p]) for p in _speculative(summary))
    if highest < 64:  # paying so far says nothing about 64
        return Answer(claim, None, f"measured only up to concurrency {highest}; {evidence}")
    return Answer(claim, True, evidence)


def ttft_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation does not help time-to-first-token-critical work.'"""
    claim = "Speculation gives nothing to time-to-first-token-critical work"
    plain = summary["by_concurrency"][summary["plain"]].get(1)
    if plain is None or not plain["ttft_repeat_medians"]:
        return Answer(claim, None, "needs plain decoding at concurrency 1")
    fastest_plain = min(plain["ttft_repeat_medians"])
    parts, any_faster = [], False
    for profile in _speculative(summary):
        row = summary["by_concurrency"][profile].get(1)
        if row is None or not row["ttft_repeat_medians"]:
            continue
        medians = row["ttft_repeat_medians"]
        # Faster only when every repeat beat plain's best: a difference inside the spread
        # between repeats is no difference.
        faster = max(medians) < fastest_plain
        any_faster = any_faster or faster
        parts.append(
            f"{profile}: median TTFT ×{_fmt(_speedup(row, 'ttft'))} of plain "
            f"(repeats {min(medians):.0f}–{max(medians):.0f} ms)"
        )
    if not parts:
        return Answer(claim, None, "no speculative profile measured")
    plain_range = f"{fastest_plain:.0f}–{max(plain['ttft_repeat_medians']):.0f} ms"
    return Answer(
        claim,
        not any_faster,
        "; ".join(parts) + f"; plain {plain_range}, concurrency 1 (the first token comes from "
        "the target's prefill, which speculation cannot shorten; drafts add their own)",
    )


def temperature_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation stops paying above temperature 1.2.'"""
    claim = "Speculation pays up to temperature 1.2 and stops paying above it"
    if not any(t > 1.2 for rows in summary["by_temperature"].values() for t in rows):
        return Answer(claim, None, "needs a temperature above 1.2 in the sweep")
    parts, stops = _sweep(
        summary, "by_temperature", "tok_s", lambda t: f"T={t:g}", "pays at every temperature"
    )
    if not parts:
        return Answer(claim, None, "no speculative profile measured")
    if not stops:
        return Answer(
            claim,
            None,
            "no speculative profile pays at the lowest temperature; " + "; ".join(parts),
        )
    holds = all(stop is not None and stop > 1.2 for stop in stops)
    return Answer(claim, holds, "; ".join(parts) + "; median tokens/s vs plain, concurrency 1")


def nested_claim(summary: dict[str, Any]) -> Answer:
    """'Medusa's acceptance falls from 74 % to 31 % on nested code.'"""
    claim = "Medusa's acceptance collapses on deeply nested code (claimed: 74 % → 31 %)"
    medusa = [p for p in _speculative(summary) if "medusa" in p]
    parts, holds = [], None
    for profile in _speculative(summary):
        sets = summary["acceptance_by_set"][profile]
        flat, nested = sets.get("flat"), sets.get("nested")
        if not flat or not nested:
            continue
        a, b = flat["acceptance_rate"], nested["acceptance_rate"]
        parts.append(f"{profile}: flat {_fmt(a, 3)} → nested {_fmt(b, 3)}")
        if profile in medusa and a:
            # "Collapse" as the claim means it: nested keeps less than 60 % of flat's rate.
            holds = b is not None and b < 0.6 * a
    if holds is None:
        return Answer(
            claim, None, "needs a Medusa profile and both prompt sets; " + "; ".join(parts)
        )
    return Answer(claim, holds, "; ".join(parts) + " (acceptance rate, concurrency 1, greedy)")


def ordering_claim(summary: dict[str, Any]) -> Answer:
    """'Plain 28 → Medusa-2 52 → EAGLE-2 96 tok/s, EAGLE accepting 81.6 %.'"""
    claim = "EAGLE beats Medusa, which beats plain decoding (claimed: 96 / 52 / 28 tok/s)"
    rows = {p: r.get(1) for p, r in summary["by_concurrency"].items()}
    eagle = next(
        (p for p in rows if "medusa" not in p and "ngram" not in p and p != summary["plain"]), None
    )
    medusa = next((p for p in rows if "medusa" in p), None)
    plain = summary["plain"]

    def median(profile: str | None) -> float | None:
        row = rows.get(profile) if profile else None
        return None if row is None else row["tok_s"]["median"]

    e, m, p = median(eagle), median(medusa), median(plain)
    evidence = (
        f"median tok/s at concurrency 1: {eagle} {_fmt(e)}, {medusa} {_fmt(m)}, {plain} {_fmt(p)}"
    )
    if eagle and rows[eagle] and rows[eagle]["acceptance"]:
        evidence += f"; {eagle} acceptance {_fmt(rows[eagle]['acceptance']['acceptance_rate'], 3)}"
    if None in (e, m, p):
        return Answer(claim, None, evidence)
    assert e is not None and m is not None and p is not None
    return Answer(claim, e > m * PAYS and m > p * PAYS, evidence)


def answer_all(summary: dict[str, Any]) -> list[Answer]:
    return [
        ordering_claim(summary),
        nested_claim(summary),
        batch_claim(summary),
        ttft_claim(summary),
        temperature_claim(summary),
    ]
