"""PNG plots of the engine benchmark (matplotlib, drawn off-screen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOK_S = "tokens-per-second.png"
POSITIONS = "acceptance-by-position.png"
CDF = "latency-cdf.png"


def draw(data: dict[str, Any], summary: dict[str, Any], out_dir: Path) -> list[str]:
    """Draw the three plots into `out_dir`; returns their file names."""
    import matplotlib

    matplotlib.use("Agg")  # no display here, and none needed
    import matplotlib.pyplot as plt

    names = []
    profiles = list(summary["by_concurrency"])

    figure, axis = plt.subplots(figsize=(8, 4.5))
    levels = sorted({c for rows in summary["by_concurrency"].values() for c in rows})
    width = 0.8 / max(1, len(profiles))
    for i, profile in enumerate(profiles):
        rows = summary["by_concurrency"][profile]
        medians = [rows[c]["tok_s"]["median"] or 0.0 for c in levels]
        spreads = [rows[c]["tok_s_repeat_medians"] or [0.0] for c in levels]
        low = [m - min(s) for m, s in zip(medians, spreads, strict=True)]
        high = [max(s) - m for m, s in zip(medians, spreads, strict=True)]
        positions = [x + i * width for x in range(len(levels))]
        axis.bar(positions, medians, width, label=profile, yerr=[low, high], capsize=3)
    axis.set_xticks([x + width * (len(profiles) - 1) / 2 for x in range(len(levels))])
    axis.set_xticklabels([str(c) for c in levels])
    axis.set_xlabel("concurrent requests")
    axis.set_ylabel("tokens/s per request (median; bars: repeat spread)")
    axis.set_title("Tokens/s by profile and concurrency (temperature 0)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(out_dir / TOK_S, dpi=110)
    plt.close(figure)
    names.append(TOK_S)

    figure, axis = plt.subplots(figsize=(8, 4.5))
    drawn = False
    for profile, by_set in summary["acceptance_by_set"].items():
        for kind, style in (("flat", "-o"), ("nested", "--s")):
            acceptance = by_set.get(kind)
            if not acceptance:
                continue
            rates = acceptance["per_position"]
            axis.plot(range(1, len(rates) + 1), rates, style, label=f"{profile} ({kind})")
            drawn = True
    if drawn:
        axis.set_xlabel("draft position")
        axis.set_xticks(
            range(
                1,
                1
                + max(
                    len(a["per_position"])
                    for s in summary["acceptance_by_set"].values()
                    for a in s.values()
                    if a
                ),
            )
        )
        axis.set_ylabel("share of drafts accepted up to this position")
        axis.set_ylim(0, 1)
        axis.set_title("Acceptance by draft position (concurrency 1, greedy)")
        axis.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(out_dir / POSITIONS, dpi=110)
        names.append(POSITIONS)
    plt.close(figure)

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for profile in profiles:
        ttft, e2e = [], []
        for cell in data["cells"]:
            if cell["profile"] == profile and cell["concurrency"] == 1 and cell["temperature"] == 0:
                for request in cell["requests"]:
                    if request["ok"]:
                        ttft.append(request["ttft_ms"])
                        e2e.append(request["e2e_ms"])
        for axis, values in ((left, ttft), (right, e2e)):
            values.sort()
            if values:
                axis.step(
                    values, [(i + 1) / len(values) for i in range(len(values))], label=profile
                )
    left.set_xlabel("time to first token (ms)")
    right.set_xlabel("end-to-end latency (ms)")
    for axis in (left, right):
        axis.set_ylabel("share of requests")
        axis.legend(fontsize=8)
    figure.suptitle("Latency CDFs (concurrency 1, temperature 0)")
    figure.tight_layout()
    figure.savefig(out_dir / CDF, dpi=110)
    plt.close(figure)
    names.append(CDF)
    return names
