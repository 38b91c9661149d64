"""The design brief's claims about speculative decoding, each answered from a summary.

Each answer is `holds` (True/False, or None when the run did not measure what the claim
needs) with the figures it rests on. The thresholds are stated in the text: a speed-up
"pays" above 1.05 (5 % is within what these shared machines wobble by between runs).
"""

from __future__ import annotations

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


def batch_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation stops paying only when the batch grows past 64.'"""
    claim = "Speculation keeps paying up to batch 64 and stops paying beyond it"
    parts, holds = [], True
    levels: list[int] = []
    for profile in _speculative(summary):
        rows = summary["by_concurrency"][profile]
        levels = sorted(rows)
        speedups = {c: _speedup(rows[c], "throughput") for c in levels}
        parts.append(
            f"{profile}: throughput ×" + ", ×".join(f"{_fmt(speedups[c])} at {c}" for c in levels)
        )
        stops = [c for c in levels if (speedups[c] or 0.0) < PAYS]
        if stops and stops[0] <= 64:
            holds = False
    if not parts or not levels or max(levels) < 16:
        return Answer(claim, None, "needs concurrency 16 and more; " + "; ".join(parts))
    return Answer(claim, holds, "; ".join(parts) + f" (pays = above ×{PAYS})")


def ttft_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation does not help time-to-first-token-critical work.'"""
    claim = "Speculation gives nothing to time-to-first-token-critical work"
    parts, any_faster = [], False
    for profile in _speculative(summary):
        row = summary["by_concurrency"][profile].get(1)
        ratio = _speedup(row, "ttft")
        parts.append(f"{profile}: median TTFT ×{_fmt(ratio)} of plain")
        if ratio is not None and ratio < 1 / PAYS:
            any_faster = True
    if not parts:
        return Answer(claim, None, "no speculative profile measured")
    return Answer(claim, not any_faster, "; ".join(parts) + " at concurrency 1")


def temperature_claim(summary: dict[str, Any]) -> Answer:
    """'Speculation stops paying above temperature 1.2.'"""
    claim = "Speculation stops paying above temperature 1.2 (and pays below it)"
    parts, holds, measured = [], True, False
    for profile in _speculative(summary):
        rows = summary["by_temperature"][profile]
        hot = [t for t in rows if t > 1.2]
        cool = [t for t in rows if t <= 1.2]
        if not hot:
            continue
        measured = True
        parts.append(
            f"{profile}: ×"
            + ", ×".join(f"{_fmt(_speedup(rows[t]))} at T={t:g}" for t in sorted(rows))
        )
        pays_cool = any((_speedup(rows[t]) or 0.0) >= PAYS for t in cool)
        pays_hot = any((_speedup(rows[t]) or 0.0) >= PAYS for t in hot)
        if pays_hot or not pays_cool:
            holds = False
    if not measured:
        return Answer(claim, None, "needs a temperature above 1.2 in the sweep")
    return Answer(claim, holds, "; ".join(parts) + " (median tokens/s vs plain, concurrency 1)")


def nested_claim(summary: dict[str, Any]) -> Answer:
    """'Medusa's acceptance falls from 74 % to 31 % on nested code.'"""
    claim = "Medusa's acceptance collapses on deeply nested code (74 % → 31 % in the brief)"
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
            # "Collapse" as the brief means it: nested keeps less than 60 % of flat's rate.
            holds = b is not None and b < 0.6 * a
    if holds is None:
        return Answer(
            claim, None, "needs a Medusa profile and both prompt sets; " + "; ".join(parts)
        )
    return Answer(claim, holds, "; ".join(parts) + " (acceptance rate, concurrency 1, greedy)")


def ordering_claim(summary: dict[str, Any]) -> Answer:
    """'Plain 28 → Medusa-2 52 → EAGLE-2 96 tok/s, EAGLE accepting 81.6 %.'"""
    claim = "EAGLE beats Medusa, which beats plain decoding (brief: 96 / 52 / 28 tok/s)"
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
