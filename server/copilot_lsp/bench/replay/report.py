"""The replay report: Markdown tables and PNG plots from the run's JSON and its summary."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from copilot_lsp.bench.replay.figures import PAUSE_MS

LATENCY_PLOT = "latency-cdf.png"
TOKENS_PLOT = "tokens.png"


def _ms(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "none"
    return f"{value:.0f}"


def _share(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _ratio(value: Any) -> str:
    return "–" if value is None else f"×{value:.2f}"


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _header(names: list[str]) -> list[str]:
    return [_row(names), _row(["---"] * len(names))]


def render(data: dict[str, Any], summary: dict[str, Any], plots: list[str]) -> str:
    arms = summary["arms"]
    ratios = summary["ratios"]
    reference = summary["reference"]
    plan = data["plan"]
    sessions = data["sessions"]
    kinds: dict[str, int] = {}
    for session in sessions:
        kinds[session["kind"]] = kinds.get(session["kind"], 0) + 1
    lines = [
        "# Replay: editing sessions typed into the real server",
        "",
        f"Run {data['started_at']} on {data['machine']['cpus']} CPUs "
        f"({data['machine']['processor']}), {data['duration_s'] / 60:.1f} min; "
        f"{plan['repeats']} repeat(s), seed {plan['seed']}; "
        f"{len(sessions)} sessions ("
        + ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        + f"), {sum(s['target_chars'] for s in sessions)} characters to type per arm and "
        "repeat. Server settings: the defaults plus what our editor extensions send "
        f"(`{plan['today_settings']}`), and each arm's own below. Ratios: "
        f"`{reference}` time / arm time (above 1: the arm is faster).",
        "",
        "## What the user waits for (ms after the keystroke; every repeat pooled)",
        "",
        *_header(
            [
                "arm",
                "first ghost p50 / p90 / p99",
                "first line p50 / p90 / p99",
                "whole suggestion p50 / p90 / p99",
                "first line × ref",
                "first ghost × ref",
                "from the engine: first ghost p50 / p90 (typed through)",
                "from the engine: first line p50 / p90",
                "first line from the engine × ref",
                "from a new engine request: first line p50 / p90 (taken over)",
            ]
        ),
    ]
    for label, figures in arms.items():
        latency = figures["latency"]
        lines.append(
            _row(
                [
                    f"`{label}`",
                    _triple(latency["first_ghost_ms"]),
                    _triple(latency["first_line_ms"]),
                    _triple(latency["whole_ms"]),
                    _ratio(ratios.get(label, {}).get("speedup_first_line_p50")),
                    _ratio(ratios.get(label, {}).get("speedup_first_ghost_p50")),
                    f"{_pair(latency['first_ghost_generated_ms'])} ({latency['typed_through']})",
                    _pair(latency["first_line_generated_ms"]),
                    _ratio(ratios.get(label, {}).get("speedup_first_line_generated_p50")),
                    f"{_pair(latency['first_line_fresh_ms'])} ({latency['taken_over']})",
                ]
            )
        )
    lines += [
        "",
        "Typed through: the user typed what the ghost showed, and the server answered from "
        "that suggestion at once, without the engine; the last three columns leave those "
        "out. How many keystrokes a suggestion is typed through depends on when the user "
        "takes it (Tab), so the medians over all requests move with that too. Taken over: the "
        "user typed what the engine stream opened for an earlier keystroke had produced so "
        "far, and that stream went on for this keystroke (completion.adoptTypedStreams); the "
        "last column leaves those out too.",
        "",
        "Ghost text only counts while its keystroke is still the latest, so a slow arm's "
        "figures above come from the requests that survived. At pauses (a keystroke followed "
        f"by at least {PAUSE_MS:.0f} ms without an edit; the same keystrokes for every arm) "
        "a ghost that never came counts as slower than any that did (`none`: more than half "
        "never came):",
        "",
        *_header(
            [
                "arm",
                "pauses",
                "ghost shown",
                "first ghost p50 / p90",
                "first line p50 / p90",
                "first line × ref",
            ]
        ),
    ]
    for label, figures in arms.items():
        pauses = figures["latency"]["at_pauses"]
        lines.append(
            _row(
                [
                    f"`{label}`",
                    pauses["requests"],
                    _share(pauses["ghost_share"]),
                    _pair(pauses["first_ghost_ms"]),
                    _pair(pauses["first_line_ms"]),
                    _ratio(ratios.get(label, {}).get("speedup_pause_first_line_p50")),
                ]
            )
        )
    lines += [
        "",
        "## What the suggestions were worth",
        "",
        "Proxy: characters of each suggestion drawn in full that match what the buffer reads "
        "after the cursor once the user is done. Accepts: the scripted user takes a "
        "suggestion (Tab) when it is exactly what they are about to type, or its first "
        "lines/words (partial accept); tab missed: they typed ahead to take one and it was "
        "gone at Tab.",
        "",
        *_header(
            [
                "arm",
                "requests",
                "drawn",
                "proxy matched",
                "exact",
                "accepts full / partial",
                "chars accepted",
                "tab missed",
            ]
        ),
    ]
    for label, figures in arms.items():
        proxy, accepts, outcomes = figures["proxy"], figures["accepts"], figures["outcomes"]
        lines.append(
            _row(
                [
                    f"`{label}`",
                    outcomes["requests"],
                    outcomes["visible"],
                    f"{_share(proxy['matched_share'])} ({proxy['matched_chars']} of "
                    f"{proxy['shown_chars']})",
                    _share(proxy["exact_share"]),
                    f"{accepts['full']} / {accepts['partial']}",
                    f"{_share(accepts['accepted_share'])} ({accepts['accepted_chars']})",
                    accepts["tab_missed"],
                ]
            )
        )
    lines += [
        "",
        "## What the engine spent",
        "",
        "Useful: tokens of completions whose ghost text was drawn; wasted: cancelled, "
        "superseded, filtered to nothing, or answered after the user typed on (the server's "
        "per-completion log). The engine's own counter also holds what it generated before an "
        "abort reached it.",
        "",
        *_header(
            [
                "arm",
                "engine generated",
                "server-side total",
                "useful",
                "wasted (server)",
                "wasted (engine)",
                "acceptance",
                "mean accepted length",
                "prompt tokens computed of those prefilled (share from the prefix cache)",
            ]
        ),
    ]
    for label, figures in arms.items():
        tokens, spec = figures["tokens"], figures.get("spec_decode") or {}
        lines.append(
            _row(
                [
                    f"`{label}`",
                    tokens["engine_generated"] if tokens["engine_generated"] is not None else "–",
                    tokens["server_total"],
                    tokens["useful"],
                    f"{tokens['wasted']} ({_share(tokens['wasted_share'])})",
                    _engine_wasted(tokens),
                    _share(spec.get("acceptance_rate")),
                    spec.get("mean_accepted_length") or "–",
                    _prefill(figures.get("prefill") or {}),
                ]
            )
        )
    lines += ["", "## Each repeat (medians, ms)", ""]
    # With the sessions' packages in the workspace: what was indexed, and the prefix warm-ups
    # (sent: answered / closed by a completion).
    indexed = data.get("plan", {}).get("workspace") == "package" or any(
        run.get("index_files") for run in data["runs"]
    )
    runs = {(run["arm"], run["repeat"]): run for run in data["runs"]}
    lines += _header(
        ["arm", "repeat", "first ghost p50", "first line p50", "at pauses: first line"]
        + (["files indexed", "prefix warm-ups sent: done / closed"] if indexed else [])
    )
    for label, figures in arms.items():
        for repeat in figures["repeats"]:
            run = runs.get((label, repeat["repeat"]), {})
            warm = run.get("prefix_warm_ups") or {}
            lines.append(
                _row(
                    [
                        f"`{label}`",
                        repeat["repeat"] + 1,
                        _ms(repeat["first_ghost_p50"]),
                        _ms(repeat["first_line_p50"]),
                        _ms(repeat["pause_first_line_p50"]),
                    ]
                    + (
                        [
                            run.get("index_files", "–"),
                            f"{warm.get('sent', 0)}: {warm.get('done', 0)} / "
                            f"{warm.get('cancelled', 0)}",
                        ]
                        if indexed
                        else []
                    )
                )
            )
    lines += ["", "## Arms", ""]
    lines += _header(
        ["arm", "profile", "server", "server settings", "speculative", "engine start (s)"]
    )
    for arm in data["arms"]:
        engine = arm.get("engine") or {}
        lines.append(
            _row(
                [
                    f"`{arm['label']}`",
                    f"`{arm['profile']}`",
                    f"commit {arm['checkout']}" if arm.get("checkout") else "this checkout",
                    f"`{arm['settings']}`" if arm["settings"] else "today's",
                    f"`{engine.get('speculative')}`" if engine.get("speculative") else "–",
                    engine.get("start_s", "–"),
                ]
            )
        )
    lines += ["", "## Sessions", ""]
    lines += _header(["session", "kind", "file", "line", "characters"])
    for session in sessions:
        lines.append(
            _row(
                [
                    session["id"],
                    session["kind"],
                    f"`{session['path']}`",
                    session["line"],
                    session["target_chars"],
                ]
            )
        )
    if plots:
        lines += ["", *[f"![{name}]({name})" for name in plots]]
    return "\n".join(lines) + "\n"


def _triple(spread: dict[str, Any]) -> str:
    return f"{_ms(spread['p50'])} / {_ms(spread['p90'])} / {_ms(spread['p99'])} (n={spread['n']})"


def _pair(spread: dict[str, Any]) -> str:
    return f"{_ms(spread['p50'])} / {_ms(spread['p90'])}"


def _prefill(prefill: dict[str, Any]) -> str:
    if prefill.get("prompt_tokens") is None:
        return "–"
    return (
        f"{prefill['computed']} of {prefill['prompt_tokens']} ({_share(prefill['cached_share'])})"
    )


def _engine_wasted(tokens: dict[str, Any]) -> str:
    if tokens.get("engine_wasted") is None:
        return "–"
    return f"{tokens['engine_wasted']} ({_share(tokens['engine_wasted_share'])})"


def draw(data: dict[str, Any], summary: dict[str, Any], out: Path) -> list[str]:
    """The latency CDFs and the token bars; returns the file names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(summary["arms"])
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for axis, name, title in (
        (axes[0], "first_ghost_ms", "keystroke → first ghost text"),
        (axes[1], "first_line_ms", "keystroke → first complete line"),
    ):
        for label in labels:
            values = sorted(
                r[name]
                for run in data["runs"]
                if run["arm"] == label
                for r in run["records"]
                if r["visible"] and r[name] is not None
            )
            if values:
                shares = [(index + 1) / len(values) for index in range(len(values))]
                axis.step(values, shares, where="post", label=label)
        axis.set_title(title)
        axis.set_xlabel("ms")
        axis.set_xscale("log")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("share of drawn suggestions")
    if axes[1].get_legend_handles_labels()[0]:
        axes[1].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / LATENCY_PLOT, dpi=110)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(8, 4))
    useful = [summary["arms"][label]["tokens"]["useful"] for label in labels]
    wasted = [summary["arms"][label]["tokens"]["wasted"] for label in labels]
    axis.bar(labels, useful, label="drawn (useful)")
    axis.bar(labels, wasted, bottom=useful, label="cancelled / discarded")
    axis.set_ylabel("generated tokens (server log)")
    axis.set_title("engine tokens per arm, every repeat")
    axis.legend()
    plt.setp(axis.get_xticklabels(), rotation=20, ha="right", fontsize=8)
    figure.tight_layout()
    figure.savefig(out / TOKENS_PLOT, dpi=110)
    plt.close(figure)
    return [LATENCY_PLOT, TOKENS_PLOT]
