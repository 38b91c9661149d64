"""The cross-file benchmark's figures per split and arm: the table, the Markdown, the plot."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

STAGES = ("prompt_built", "first_token", "finished")
"""Server timeline marks summed up (ms after the request arrived); the naive arm has
first_token (ms after the request was sent)."""
PLOT = "crossfile.png"


def _p(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    totals = [r["round_trip_ms"] for r in rows]
    figures: dict[str, Any] = {
        "n": n,
        "exact_match": round(sum(r["exact_match"] for r in rows) / n, 4),
        "identifier_match": round(sum(r["identifier_match"] for r in rows) / n, 4),
        "edit_similarity": round(statistics.mean(r["edit_similarity"] for r in rows), 4),
        "shown": round(sum(r["shown"] for r in rows) / n, 4),
        "p50_total_ms": _p(totals, 50),
        "p90_total_ms": _p(totals, 90),
    }
    figures |= _retrieved(rows)
    for stage in STAGES:
        figures[f"p50_{stage}_ms"] = _p(
            [r["ms"][stage] for r in rows if r.get("ms", {}).get(stage) is not None], 50
        )
    return figures


def _retrieved(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How often the prompt's head named the API (records with the prompt seen: server arms of
    runs since the tap), and the identifier match with it there and without."""
    seen = [r for r in rows if r.get("api_in_head") is not None]
    if not seen:
        return {}
    there = [r for r in seen if r["api_in_head"]]
    absent = [r for r in seen if not r["api_in_head"]]

    def rate(group: list[dict[str, Any]]) -> float | None:
        return round(sum(r["identifier_match"] for r in group) / len(group), 4) if group else None

    return {
        "api_in_head": round(len(there) / len(seen), 4),
        "identifier_match_api_in_head": rate(there),
        "identifier_match_api_not_in_head": rate(absent),
    }


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    """{split: {arm: figures}} and the same per kind of use ({split: {kind: {arm: …}}})."""
    records = data["records"]
    splits = sorted({r["split"] for r in records})
    arms = data["arms"]
    summary: dict[str, Any] = {"by_split": {}, "by_kind": {}}
    for split in splits:
        rows = [r for r in records if r["split"] == split]
        summary["by_split"][split] = {
            arm: _figures([r for r in rows if r["arm"] == arm])
            for arm in arms
            if any(r["arm"] == arm for r in rows)
        }
        kinds: dict[str, Any] = {}
        for kind in sorted({r["kind"] for r in rows}):
            kinds[kind] = {
                arm: _figures([r for r in rows if r["arm"] == arm and r["kind"] == kind])
                for arm in arms
                if any(r["arm"] == arm and r["kind"] == kind for r in rows)
            }
        summary["by_kind"][split] = kinds
    summary["differ"] = _differ(records, arms)
    return summary


def _differ(records: list[dict[str, Any]], arms: list[str]) -> dict[str, int]:
    """Tasks on which two arms' completions differ, per pair of arms: two arms that send the
    same prompt (the workspace arm where the server lacks the index) show the noise floor."""
    by_task: dict[str, dict[str, str]] = {}
    for record in records:
        by_task.setdefault(record["task_id"], {})[record["arm"]] = record["completion"]
    pairs: dict[str, int] = {}
    for i, first in enumerate(arms):
        for second in arms[i + 1 :]:
            pairs[f"{first} / {second}"] = sum(
                1
                for completions in by_task.values()
                if first in completions
                and second in completions
                and completions[first] != completions[second]
            )
    return pairs


def _ms(value: Any) -> str:
    return "–" if value is None else f"{value:.0f}"


def table(summary: dict[str, Any]) -> str:
    """The plain-text table printed at the end of a run."""
    lines = [
        f"{'split':<9}{'arm':<14}{'n':>5}{'exact':>8}{'ident':>8}{'edit sim':>10}{'shown':>8}"
        f"{'p50 ms':>9}{'p90 ms':>9}{'p50 prompt':>12}{'p50 1st tok':>13}"
    ]
    for split, arms in summary["by_split"].items():
        for arm, f in arms.items():
            lines.append(
                f"{split:<9}{arm:<14}{f['n']:>5}{f['exact_match']:>8.3f}"
                f"{f['identifier_match']:>8.3f}{f['edit_similarity']:>10.3f}{f['shown']:>8.2f}"
                f"{_ms(f['p50_total_ms']):>9}{_ms(f['p90_total_ms']):>9}"
                f"{_ms(f['p50_prompt_built_ms']):>12}{_ms(f['p50_first_token_ms']):>13}"
            )
    lines.append(
        "exact: the rest of the line; ident: starts with the API name; times: ms, total = the "
        "client's round trip, prompt/1st tok = the server's timeline (naive: 1st tok only)"
    )
    return "\n".join(lines)


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def markdown(data: dict[str, Any], summary: dict[str, Any]) -> str:
    features = data["features"]
    engine = data["engine"]
    lines = [
        "# Cross-file completions (`copilot-lsp bench crossfile`)",
        "",
        f"Run {data['started_at']}, {data['duration_s'] / 60:.1f} min on "
        f"{data['machine']['cpus']} CPUs; engine: {engine.get('profile') or engine.get('url')} "
        f"(`{engine.get('model')}`), greedy; seed {data['seed']}, up to {data['limit']} tasks "
        f"per split; server {data.get('server_commit') or 'this checkout'}.",
        "",
        "A task is a line of module A of an installed package that uses an API defined in "
        "another module B of the same package; the cursor sits before the API name (after "
        "`alias.`, or at the start of a name imported from B), the answer is the rest of the "
        "line, and the editor holds A with that rest removed. Arms: `naive` = the text "
        "before the cursor straight to the engine; `current-file` = the server with A only; "
        "`open-tabs` = the server with the defining modules open beside A; `workspace` = the "
        "server with `context.workspace.enabled` (rootUri = the package's folder in every arm).",
        "",
        f"Server features: workspace index "
        f"{'**present**' if features['workspace_index'] else '**absent**'} "
        f"({features['workspace_note']}).",
        "",
    ]
    for split, arms in summary["by_split"].items():
        lines += [
            f"## {split}",
            "",
            _row(
                [
                    "arm",
                    "tasks",
                    "exact match",
                    "identifier match",
                    "edit similarity",
                    "shown",
                    "total p50 / p90 ms",
                    "prompt built p50 ms",
                    "first token p50 ms",
                ]
            ),
            _row(["---"] * 9),
        ]
        for arm, f in arms.items():
            lines.append(
                _row(
                    [
                        f"`{arm}`",
                        f["n"],
                        f"{f['exact_match']:.3f}",
                        f"{f['identifier_match']:.3f}",
                        f"{f['edit_similarity']:.3f}",
                        f"{f['shown']:.2f}",
                        f"{_ms(f['p50_total_ms'])} / {_ms(f['p90_total_ms'])}",
                        _ms(f["p50_prompt_built_ms"]),
                        _ms(f["p50_first_token_ms"]),
                    ]
                )
            )
        lines += _head_lines(arms)
        lines += ["", "By kind of use (exact / identifier match, tasks):", ""]
        for kind, by_arm in summary["by_kind"][split].items():
            cells = [
                f"`{arm}` {f['exact_match']:.2f} / {f['identifier_match']:.2f}"
                for arm, f in by_arm.items()
            ]
            count = next(iter(by_arm.values()))["n"]
            lines.append(f"- {kind} ({count}): " + "; ".join(cells))
        lines.append("")
    lines += [
        "Total: the client's round trip; prompt built and first token: the server's timeline "
        "(ms after the request arrived; naive: after it was sent).",
        "",
        f"Notes: the naive prompt is the last {data.get('naive_prefix_chars', 2000)} "
        "characters before the cursor (from a line start), about the server's prompt budget "
        "for the embedded model (512 tokens); the server arms use their defaults with no "
        "debounce. On disk, file A keeps its whole line: a workspace index must take the "
        "open document's text over the file's, or the `workspace` arm could read the answer.",
        "",
        f"Tasks on which two arms' completions differ (of {len(data['tasks'])}): "
        + ", ".join(f"{pair} {count}" for pair, count in summary.get("differ", {}).items())
        + ". Arms that send the same prompt differ only by noise: deadlines the server "
        "keeps under load (snippets, token counts) and the engine.",
        "",
        "## Packages",
        "",
        _row(["split", "package", "version", "qualifying lines", "tasks"]),
        _row(["---"] * 5),
    ]
    used: dict[str, int] = {}
    for task in data["tasks"]:
        used[task["package"]] = used.get(task["package"], 0) + 1
    for split, packages in data["packages"].items():
        for package in packages:
            lines.append(
                _row(
                    [
                        split,
                        package["name"],
                        package["version"] or "not installed",
                        package["found"],
                        used.get(package["name"], 0),
                    ]
                )
            )
    lines += ["", f"![exact and identifier match per arm, latency]({PLOT})", ""]
    if any(data["server_messages"].values()):
        lines += ["What the servers told the user:", ""]
        for arm, messages in data["server_messages"].items():
            lines += [f"- `{arm}`: {message}" for message in messages[:3]]
        lines.append("")
    return "\n".join(lines)


def _head_lines(arms: dict[str, Any]) -> list[str]:
    """Whether the misses are the retrieval's or the model's, per server arm."""
    lines = []
    for arm, f in arms.items():
        if "api_in_head" not in f:
            continue
        with_it, without = (
            "–" if value is None else f"{value:.3f}"
            for value in (f["identifier_match_api_in_head"], f["identifier_match_api_not_in_head"])
        )
        lines.append(
            f"- `{arm}`: the API's name in the prompt's head (code from other files, the "
            f"file's own definitions) in {f['api_in_head']:.0%} of tasks; identifier match "
            f"{with_it} when it is there, {without} when not"
        )
    return ["", "Retrieval against the model:", "", *lines] if lines else []


def draw(summary: dict[str, Any], out: Path) -> str:
    """One PNG: exact and identifier match per arm and split, and the p50 round trip."""
    import matplotlib

    matplotlib.use("Agg")  # no display here, and none needed
    import matplotlib.pyplot as plt

    splits = list(summary["by_split"])
    arms = list(dict.fromkeys(arm for by_arm in summary["by_split"].values() for arm in by_arm))
    figure, axes = plt.subplots(1, 3, figsize=(13, 4))
    width = 0.8 / max(1, len(splits))
    panels = (
        ("identifier_match", "starts with the API name"),
        ("exact_match", "exact match of the line"),
        ("p50_total_ms", "p50 round trip (ms)"),
    )
    for axis, (key, title) in zip(axes, panels, strict=True):
        for i, split in enumerate(splits):
            values = [summary["by_split"][split].get(arm, {}).get(key) or 0 for arm in arms]
            axis.bar([x + i * width for x in range(len(arms))], values, width, label=split)
        axis.set_xticks([x + width * (len(splits) - 1) / 2 for x in range(len(arms))])
        axis.set_xticklabels(arms, rotation=15)
        axis.set_title(title)
    axes[0].legend()
    figure.suptitle("Cross-file completions per arm")
    figure.tight_layout()
    figure.savefig(out / PLOT, dpi=90)
    plt.close(figure)
    return PLOT
