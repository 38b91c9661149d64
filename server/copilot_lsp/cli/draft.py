"""`copilot-lsp draft …`: train, fingerprint and evaluate speculative draft heads.

The training options' defaults are `TrainOptions`' (draft/train.py): an option left out keeps
the dataclass's value, and `--help` shows it from there. draft/train.py imports torch, so it
is imported only when a draft command runs or its help is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from copilot_lsp.cli.output import HelpFormatter, say
from copilot_lsp.errors import CopilotLspError


class TrainHelpFormatter(HelpFormatter):
    """Shows `TrainOptions`' default for an option left unset on the command line."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = _train_defaults().get(action.dest) if action.default is None else None
        if default is None or default == () or action.help is None:
            return super()._get_help_string(action)
        shown = ",".join(default) if isinstance(default, tuple) else str(default)
        return f"{action.help} (default: {shown.replace('%', '%%')})"


def _train_defaults() -> dict[str, Any]:
    from copilot_lsp.draft.train import TrainOptions

    return {
        field.name: field.default
        for field in dataclasses.fields(TrainOptions)
        if field.default is not dataclasses.MISSING
    }


def add_parser(commands: Any) -> None:
    draft = commands.add_parser(
        "draft", help="train and inspect speculative draft heads", formatter_class=HelpFormatter
    )
    actions = draft.add_subparsers(dest="action", metavar="ACTION", required=True)
    train = actions.add_parser(
        "train",
        help="train an EAGLE, EAGLE-3 or Medusa head on target features (CPU, resumable)",
        formatter_class=TrainHelpFormatter,
    )
    train.add_argument("--method", choices=["eagle", "eagle3", "medusa"], required=True)
    train.add_argument(
        "--target", required=True, help="target model folder, or `embedded` for SmolLM2"
    )
    train.add_argument(
        "--corpus",
        nargs="+",
        help="`default` (stdlib + site-packages), `stdlib`, `site-packages` or folders",
    )
    train.add_argument("--out", type=Path, required=True, help="folder for the vLLM checkpoint")
    train.add_argument("--steps", type=int, help="optimizer steps")
    train.add_argument("--batch-size", type=int, help="sequences per step")
    train.add_argument("--seq-len", type=int, help="tokens per sequence")
    train.add_argument("--train-tokens", type=int, help="corpus tokens to train on")
    train.add_argument(
        "--skip-tokens", type=int, help="start the training windows after this many tokens"
    )
    train.add_argument("--heldout-tokens", type=int, help="held-out tokens to measure")
    train.add_argument("--lr", type=float, help="peak learning rate")
    train.add_argument("--draft-steps", type=int, help="EAGLE steps unrolled / Medusa heads")
    train.add_argument(
        "--token-vocab",
        type=int,
        help="token loss over the N commonest labels; 0 = all (EAGLE-3: its draft vocabulary)",
    )
    train.add_argument(
        "--token-loss",
        choices=["greedy", "distribution"],
        help="cross-entropy to the target's greedy token or to its distribution",
    )
    train.add_argument("--token-weight", type=float, help="token loss weight")
    train.add_argument("--seed", type=int)
    train.add_argument("--threads", type=int, help="torch threads (unset: all cores)")
    train.add_argument("--device", help="cpu or cuda")
    train.add_argument("--cache-dir", type=Path, help="where target features are cached")
    train.add_argument(
        "--features", type=Path, help="train on an earlier --cache-dir's shards, not the corpus"
    )
    train.add_argument(
        "--extra-features",
        type=Path,
        nargs="+",
        help="more cached folders whose train shards join --features' (held-out: --features')",
    )
    train.add_argument(
        "--generated-share",
        type=float,
        help="share of sequences the target continues itself after --generated-prompt tokens",
    )
    train.add_argument("--generated-prompt", type=int, help="corpus (or prompt) tokens kept")
    train.add_argument(
        "--prompts",
        type=Path,
        help="train on the server's own prompts (`draft prompts` output) instead of --corpus: "
        "each one's last --generated-prompt tokens, continued by the target",
    )
    train.add_argument("--init", type=Path, help="start from this exported EAGLE head folder")
    train.add_argument(
        "--layers",
        type=int,
        help="EAGLE decoder layers; with --init a head grows, new layers start as the identity",
    )
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    fingerprint = actions.add_parser(
        "fingerprint", help="print a target model's fingerprint", formatter_class=HelpFormatter
    )
    fingerprint.add_argument("model", help="model folder, or `embedded`")
    evaluate = actions.add_parser(
        "evaluate",
        help="held-out acceptance of an exported EAGLE or EAGLE-3 head on cached features",
        formatter_class=TrainHelpFormatter,
    )
    evaluate.add_argument("head", type=Path, help="the head's folder (as `draft train` wrote)")
    evaluate.add_argument("--target", default="embedded", help="target model folder, or `embedded`")
    evaluate.add_argument(
        "--features", type=Path, required=True, help="a `draft train --cache-dir` folder"
    )
    evaluate.add_argument("--draft-steps", type=int, help="draft steps to measure")
    evaluate.add_argument(
        "--rounds-from",
        type=int,
        default=0,
        help="count only draft rounds starting at this token or later (features of "
        "--prompts: --generated-prompt - 1, the rounds after the prompt)",
    )
    prompts = actions.add_parser(
        "prompts",
        help="record the server's own prompts on editing sessions (for draft train --prompts)",
        formatter_class=HelpFormatter,
    )
    prompts.add_argument("--out", type=Path, required=True, help="JSON-lines file to write")
    prompts.add_argument(
        "--corpus",
        nargs="+",
        default=["stdlib"],
        help="corpus roots as draft train takes them; training-split files give `train` "
        "prompts, held-out ones `heldout`",
    )
    prompts.add_argument("--sessions", type=int, default=20, help="training sessions of each kind")
    prompts.add_argument(
        "--heldout-sessions", type=int, default=4, help="held-out sessions of each kind"
    )
    prompts.add_argument(
        "--every", type=int, default=3, help="ask for a completion every N keystrokes"
    )
    prompts.add_argument("--seed", type=int, default=17)
    prompts.add_argument(
        "--profile",
        default="local-cpu",
        help="the engine profile whose served model the prompts are laid out for",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "fingerprint":
        from copilot_lsp.draft.fingerprint import target_fingerprint

        print(target_fingerprint(_target_dir(args.model)))
        return 0
    if args.action == "prompts":
        return _record_prompts(args)
    if args.action == "evaluate":
        from copilot_lsp.draft.train import evaluate_head

        steps = (
            args.draft_steps if args.draft_steps is not None else _train_defaults()["draft_steps"]
        )
        if args.rounds_from < 0:
            raise CopilotLspError("--rounds-from must be 0 or more")
        result = evaluate_head(
            _target_dir(args.target), args.head, args.features, steps, args.rounds_from
        )
        print(json.dumps(result, indent=2))
        return 0
    from copilot_lsp.draft.render import render_report
    from copilot_lsp.draft.train import TrainOptions, run, with_overrides

    options = with_overrides(
        TrainOptions(method=args.method, target=_target_dir(args.target), out=args.out),
        corpus=tuple(args.corpus) if args.corpus else None,
        steps=args.steps,
        batch_size=args.batch_size,
        seq_len=args.seq_len,
        train_tokens=args.train_tokens,
        skip_tokens=args.skip_tokens,
        heldout_tokens=args.heldout_tokens,
        lr=args.lr,
        draft_steps=args.draft_steps,
        token_vocab=args.token_vocab,
        token_loss=args.token_loss,
        token_weight=args.token_weight,
        seed=args.seed,
        threads=args.threads,
        device=args.device,
        cache_dir=args.cache_dir,
        features=args.features,
        extra_features=tuple(args.extra_features or ()),
        generated_share=args.generated_share,
        generated_prompt=args.generated_prompt,
        init=args.init,
        layers=args.layers,
        prompts=args.prompts,
    )
    report = run(options, log=say)
    print(json.dumps(report, indent=2) if args.json else render_report(report))
    return 0


def _record_prompts(args: argparse.Namespace) -> int:
    import asyncio

    from copilot_lsp.bench.replay.prompts import record_prompts
    from copilot_lsp.serving.profiles import load_profile

    report = asyncio.run(
        record_prompts(
            args.corpus,
            args.out,
            served_name=load_profile(args.profile).model.served_name,
            train_per_kind=args.sessions,
            heldout_per_kind=args.heldout_sessions,
            every=args.every,
            seed=args.seed,
            log=say,
        )
    )
    print(json.dumps(report, indent=2))
    return 0


def _target_dir(spec: str) -> Path:
    if spec == "embedded":
        from copilot_lsp.serving.prepare import prepare_embedded_model

        return prepare_embedded_model("bfloat16", log=say)
    return Path(spec)
