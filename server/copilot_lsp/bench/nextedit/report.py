"""The next-edit suite's Markdown page."""

from __future__ import annotations

from typing import Any


def _row(name: str, row: dict[str, Any]) -> str:
    if not row.get("n"):
        return f"| {name} | 0 | | | | | | | |"
    quiet = "" if row["quiet"] is None else f"{row['quiet']:.2f}"
    return (
        f"| {name} | {row['n']} | {row['exact']:.2f} | {row['delta_chrf']:.3f} | "
        f"{row['shown']:.2f} | {quiet} | {row['reversal_ratio']:.3f} ({row['reversals']}) | "
        f"{row['p50_latency_ms']:.0f} | {row['p90_latency_ms']:.0f} |"
    )


def diagnosis_table(data: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Verdicts of the model's answers (--diagnose), for the scenarios that want an edit and
    for those that want none; `model right`: the answer's window is the expected one."""
    wants = {r["id"]: r["wants_edit"] for r in data["results"]}
    table: dict[str, dict[str, int]] = {}
    for row in data.get("diagnosis") or []:
        side = "want_edit" if wants.get(row["id"]) else "want_none"
        for key in (row["verdict"], "model right" if row["window_right"] else None):
            if key is not None:
                counts = table.setdefault(key, {"want_edit": 0, "want_none": 0})
                counts[side] += 1
    return table


GATED = ("offered", "not sure")
"""Verdicts of the answers the confidence gate judged."""


def latency_lines(figures: dict[str, Any], server: dict[str, Any]) -> list[str]:
    """Next-edit latency beside inline completion's, at the same cursors in the same run:
    as the client saw it, and as the server's `copilot/stats` counts it."""
    if not figures.get("n"):
        return []
    lines = [
        "",
        "Latency at the scenarios' cursors, request to answer (the client's clock; an "
        "inline completion asked after each next edit, automatic trigger, same document):",
        "",
        "| request | n | p50 ms | p90 ms |",
        "|---|---|---|---|",
        f"| next edit | {figures['n']} | {figures['p50_latency_ms']:.0f} | "
        f"{figures['p90_latency_ms']:.0f} |",
    ]
    if figures.get("completions"):
        lines.append(
            f"| inline completion | {figures['completions']} | "
            f"{figures['completion_p50_latency_ms']:.0f} | "
            f"{figures['completion_p90_latency_ms']:.0f} |"
        )
    edits = server.get("next_edits") or {}
    latency = edits.get("latency_ms") or {}
    finished = server.get("completion_finished") or {}
    if latency.get("n") or finished.get("n"):
        parts = []
        if latency.get("n"):
            parts.append(
                f"next edits {edits.get('requests', 0)} requests, {edits.get('shown', 0)} "
                f"shown, {edits.get('quiet', 0)} quiet, p50 {latency['p50']:.0f} ms, "
                f"p90 {latency['p90']:.0f} ms (answered)"
            )
        if finished.get("n"):
            parts.append(
                f"inline completions p50 {finished['p50']:.0f} ms, p90 {finished['p90']:.0f} "
                f"ms (shown ones, {int(finished['n'])})"
            )
        lines += ["", "The server's `copilot/stats` at the end: " + "; ".join(parts) + "."]
    return lines


def confidence_lines(data: dict[str, Any]) -> list[str]:
    """The confidence gate's scores of the diagnosed answers that reach it (every other rule
    passed: `offered` or `not sure`), by whether the scenario wants an edit and whether the
    model's window is the right one."""
    wants = {r["id"]: r["wants_edit"] for r in data["results"]}
    groups: dict[str, list[float]] = {}
    for row in data.get("diagnosis") or []:
        if row.get("confidence") is None or row["verdict"] not in GATED:
            continue
        side = "an edit is right" if wants.get(row["id"]) else "no edit is right"
        right = "right" if row["window_right"] else "wrong"
        groups.setdefault(f"{side}, {right} edit", []).append(float(row["confidence"]))
    if not groups:
        return []
    lines = [
        "",
        "Confidence (the gate's score: geometric-mean probability of the tokens that write "
        "the edit) of the answers that reach the gate, lowest first:",
        "",
    ]
    for name, scores in sorted(groups.items()):
        lines.append(f"- {name} ({len(scores)}): " + ", ".join(f"{s:.2f}" for s in sorted(scores)))
    return lines


def render(
    data: dict[str, Any],
    summary: dict[str, Any],
    diagnosis: dict[str, dict[str, int]] | None = None,
) -> str:
    run = data["run"]
    lines = [
        "# Next-edit quality suite",
        "",
        f"`{run['command']}` on {run['host']}, {run['date']}: engine {run['engine']}, "
        f"prompt format `{run['format'] or 'chosen by the server'}`, "
        f"{run['scenarios']} of the suite's {run['suite_size']} scenarios "
        f"({run['seconds']:.0f} s).",
        "",
        "Each scenario: a file opened, the user's recent edits replayed as didChange steps, "
        "then one `textDocument/copilotInlineEdit` at the cursor through the real server "
        "(next edits on, the server's gates included). exact: the buffer after the first "
        "offered edit equals the expected one (no edit offered, where none is right); "
        "delta chrF: chrF of the change made against the change expected; shown: an edit "
        "offered; quiet: none offered where none is right; reversal: the share of an offered "
        "edit's tokens undoing the user's edits (mean over offered edits; in brackets, how "
        "many undid anything); latency: request to answer, ms.",
        "",
        "| scenarios | n | exact | delta chrF | shown | quiet | reversal | p50 ms | p90 ms |",
        "|---|---|---|---|---|---|---|---|---|",
        _row("all", summary["all"]),
        _row("an edit is right", summary["want_edit"]),
        _row("no edit is right", summary["want_none"]),
    ]
    lines += [_row(f"`{kind}`", row) for kind, row in summary["kinds"].items()]
    lines += latency_lines(summary["all"], data.get("server_stats") or {})
    if diagnosis:
        lines += [
            "",
            "Diagnosis (`--diagnose`): each rewrite request sent straight to the engine, "
            "greedy, and what the server's rules make of the model's answer (offered, or why "
            "not); `model right`: the answer's window is the expected one.",
            "",
            "| verdict | an edit is right | no edit is right |",
            "|---|---|---|",
        ]
        lines += [
            f"| {verdict} | {counts['want_edit']} | {counts['want_none']} |"
            for verdict, counts in sorted(diagnosis.items(), key=lambda item: item[0])
        ]
        lines += confidence_lines(data)
    errors = summary["all"].get("errors", 0)
    if errors:
        lines += ["", f"{errors} request(s) failed or timed out (scored as no edit)."]
    return "\n".join(lines) + "\n"
