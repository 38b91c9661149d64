"""The training report as a short table for the terminal."""

from __future__ import annotations

from typing import Any


def render_report(report: dict[str, Any]) -> str:
    heldout = report["heldout"]
    corpus = report["corpus"]
    layers = report.get("options", {}).get("layers", 1)
    shape = f" ({layers} layers)" if report["method"] == "eagle" and layers != 1 else ""
    if report["method"] == "eagle3":
        aux = ", ".join(map(str, report.get("aux_layers", [])))
        vocab = report.get("options", {}).get("token_vocab")
        shape = f" (reads target layers {aux}; {vocab}-token draft vocabulary)"
    lines = [
        f"{report['method']} draft{shape} for {report['target']} ({report['target_fingerprint']})",
        f"data: {corpus['train_tokens']} train / {corpus['heldout_tokens']} held-out tokens "
        f"from {_source(corpus)}; "
        f"trained {report['train_seconds']:.0f} s",
        "",
        f"{'position':>9} {'step top-1':>11} {'P(accepted)':>12} {'in serving':>11}",
    ]
    serving = heldout.get("serving") or {}
    for k, (accuracy, accepted) in enumerate(
        zip(heldout["step_accuracy"], heldout["per_position"], strict=True), start=1
    ):
        rounds = serving.get("per_position", [])
        in_serving = f"{rounds[k - 1]:>11.3f}" if len(rounds) >= k else f"{'-':>11}"
        lines.append(f"{k:>9} {accuracy:>11.3f} {accepted:>12.3f} {in_serving}")
    lines += [
        "",
        f"held-out (teacher-forced) acceptance rate {heldout['acceptance_rate']:.3f}, "
        f"mean accepted length {heldout['mean_accepted_length']:.2f}",
    ]
    if serving:
        lines.append(
            f"in serving order (rounds as the engine runs them): acceptance rate "
            f"{serving['acceptance_rate']:.3f}, mean accepted length "
            f"{serving['mean_accepted_length']:.2f}"
        )
    after = report.get("heldout_after_prompt")
    if after:
        lines.append(
            f"after the prompt only (what a completion drafts): acceptance rate "
            f"{after['acceptance_rate']:.3f}, in serving order "
            f"{after['serving']['acceptance_rate']:.3f}, mean accepted length "
            f"{after['serving']['mean_accepted_length']:.2f}"
        )
    return "\n".join(lines)


def _source(corpus: dict[str, Any]) -> str:
    if "prompts" in corpus:
        return f"{corpus['prompts']} (server prompts)"
    return str(corpus.get("files", corpus.get("features")))
