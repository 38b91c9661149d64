"""Latency percentiles per stage, over a rolling window or a whole log."""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from copilot_lsp.telemetry.timeline import STAGES

PERCENTILES = (50, 90, 99)
NEXT_EDIT_MODE = "next-edit"
"""The `mode` of a next-edit request's record (nextedit/service.py)."""


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def stage_table(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """{stage: {n, p50, p90, p99}} over the completions that reached each stage.

    Only completions whose text was shown count toward latency; a superseded request's
    `finished` time measures the typist, not us.
    """
    samples: dict[str, list[float]] = {stage: [] for stage in STAGES}
    for record in records:
        if record.get("outcome") != "shown":
            continue
        for stage, value in record.get("ms", {}).items():
            if stage in samples:
                samples[stage].append(float(value))
    table: dict[str, dict[str, float]] = {}
    for stage, values in samples.items():
        if values:
            row = {"n": float(len(values))}
            row.update({f"p{q}": round(percentile(values, q), 1) for q in PERCENTILES})
            table[stage] = row
    return table


def next_edit_table(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Next-edit requests (`textDocument/copilotInlineEdit`) apart from inline completions:
    how many, how many offered an edit (`shown`) or none (`quiet`), were shown and accepted
    by the editor (`displayed`, `accepted`), every outcome (`cancelled`, `error`, ...), and
    the time from request to answer (`latency_ms`, p50/p90/p99) over the answered ones, quiet
    included: a quiet answer is waited for like a shown one."""
    rows = list(records)
    counts = outcome_counts(rows)
    answered = [
        float(r["ms"]["finished"])
        for r in rows
        if r.get("outcome") in ("shown", "empty") and "finished" in r.get("ms", {})
    ]
    latency: dict[str, float] = {"n": float(len(answered))}
    if answered:
        latency.update({f"p{q}": round(percentile(answered, q), 1) for q in PERCENTILES})
    return {
        "requests": len(rows),
        "shown": counts.get("shown", 0),
        "quiet": counts.get("empty", 0),
        "displayed": counts.get("displayed", 0),
        "accepted": counts.get("accepted", 0),
        "outcomes": counts,
        "latency_ms": latency,
        "acceptance": acceptance(rows),
    }


def outcome_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for record in records:
        counts[str(record.get("outcome"))] += 1
        if record.get("feedback"):
            counts[str(record["feedback"])] += 1
            if int(record.get("accepted_rank", 1)) > 1:
                counts["accepted_alternative"] += 1
        if record.get("displayed"):
            counts["displayed"] += 1
    return dict(counts)


def acceptance(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """How much of what was offered the user took.

    The base is the completions the editor reported as displayed when it reports that
    (our extensions do), whatever their outcome (a streamed preview drawn, then accepted,
    before its stream ended cancelled or adopted counts), else those the server answered with
    text; `rate` counts partial accepts as accepts, `chars_rate` weighs them by the
    characters kept.
    """
    shown = displayed = taken = 0
    chars_offered = {"shown": 0, "displayed": 0}
    chars_taken = 0
    for record in records:
        if record.get("outcome") != "shown" and not record.get("displayed"):
            continue
        shown += 1
        # A preview's record may show 0 characters (its stream ended otherwise): at least
        # what was accepted of it was offered.
        chars = max(int(record.get("chars_shown", 0)), int(record.get("chars_accepted", 0)))
        chars_offered["shown"] += chars
        if record.get("displayed"):
            displayed += 1
            chars_offered["displayed"] += chars
        if record.get("feedback") in ("accepted", "partially_accepted"):
            taken += 1
            chars_taken += int(record.get("chars_accepted", 0))
    base = displayed or shown
    chars_base = chars_offered["displayed" if displayed else "shown"]
    return {
        "offered": float(base),
        "accepted": float(taken),
        "rate": round(taken / base, 4) if base else 0.0,
        "chars_rate": round(min(chars_taken / chars_base, 1.0), 4) if chars_base else 0.0,
    }


def format_table(table: Mapping[str, Mapping[str, float]]) -> str:
    """A fixed-width text table of `stage_table` output, ms since the request arrived."""
    header = f"{'stage (ms since request)':<26}{'n':>6}" + "".join(
        f"{'p' + str(q):>10}" for q in PERCENTILES
    )
    lines = [header, "-" * len(header)]
    for stage in STAGES:
        row = table.get(stage)
        if row is None:
            continue
        cells = "".join(f"{row[f'p{q}']:>10.1f}" for q in PERCENTILES)
        lines.append(f"{stage:<26}{int(row['n']):>6}{cells}")
    if len(lines) == 2:
        lines.append("(no completions shown yet)")
    return "\n".join(lines)


class RollingStats:
    """The last `window` completion records, for `copilot/stats`."""

    def __init__(self, window: int) -> None:
        self.window = window
        self._records: deque[dict[str, Any]] = deque(maxlen=window)

    def add(self, record: dict[str, Any]) -> None:
        self._records.append(record)

    def snapshot(self, recent: int = 20) -> dict[str, Any]:
        """Inline completions' figures (`stages`, `outcomes`, `acceptance`), next edits' apart
        (`next_edits`), and the newest records of both (`recent`)."""
        completions = [r for r in self._records if r.get("mode") != NEXT_EDIT_MODE]
        return {
            "stages": stage_table(completions),
            "outcomes": outcome_counts(completions),
            "acceptance": acceptance(completions),
            "next_edits": next_edit_table(
                r for r in self._records if r.get("mode") == NEXT_EDIT_MODE
            ),
            "recent": list(self._records)[-recent:],
        }
