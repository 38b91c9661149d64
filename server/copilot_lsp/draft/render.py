"""The training report as a short table for the terminal."""

from __future__ import annotations

from typing import Any


def render_report(report: dict[str, Any]) -> str:
    heldout = report["heldout"]
    corpus = report["corpus"]
    lines = [
        f"{report['method']} draft for {report['target']} ({report['target_fingerprint']})",
        f"data: {corpus['train_tokens']} train / {corpus['heldout_tokens']} held-out tokens "
        f"from {corpus.get('files', corpus.get('features'))}; "
        f"trained {report['train_seconds']:.0f} s",
        "",
        f"{'position':>9} {'step top-1':>11} {'P(accepted)':>12}",
    ]
    for k, (accuracy, accepted) in enumerate(
        zip(heldout["step_accuracy"], heldout["per_position"], strict=True), start=1
    ):
        lines.append(f"{k:>9} {accuracy:>11.3f} {accepted:>12.3f}")
    lines += [
        "",
        f"held-out (teacher-forced) acceptance rate {heldout['acceptance_rate']:.3f}, "
        f"mean accepted length {heldout['mean_accepted_length']:.2f}",
    ]
    return "\n".join(lines)
