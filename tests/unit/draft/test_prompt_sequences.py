"""Training sequences from recorded server prompts (`draft train --prompts`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copilot_lsp.draft.options import TrainOptions, check_options
from copilot_lsp.draft.prompt_sequences import PAD, prompt_sequences
from copilot_lsp.errors import ConfigError


def encode(text: str) -> list[int]:
    """One token per character: lengths and tails are easy to read."""
    return [ord(char) for char in text]


def write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_each_sequence_is_a_prompts_tail_then_room_for_the_continuation(tmp_path: Path) -> None:
    prompts = write(
        tmp_path / "p.jsonl",
        [
            {"split": "train", "session": "a", "prompt": "x = compute(y)"},
            # A keystroke later at the same place: another tail.
            {"split": "train", "session": "a", "prompt": "x = compute(y)\n"},
            # The same tail again (a repeated request): kept once.
            {"split": "train", "session": "b", "prompt": "zz = compute(y)\n"},
            {"split": "train", "session": "b", "prompt": "ab"},  # shorter than keep
            {"split": "heldout", "session": "c", "prompt": "return total"},
        ],
    )
    sequences, counts = prompt_sequences(
        prompts, encode, keep=4, seq_len=7, limits={"train": 10, "heldout": 10}
    )
    assert sequences["train"] == [encode("e(y)") + [PAD] * 3, encode("(y)\n") + [PAD] * 3]
    assert sequences["heldout"] == [encode("otal") + [PAD] * 3]
    assert counts == {"train_prompts": 2, "heldout_prompts": 1, "prompts_too_short": 1}


def test_more_prompts_than_wanted_are_thinned_evenly(tmp_path: Path) -> None:
    records: list[dict[str, object]] = [
        {"split": "train", "prompt": f"line {index:03d}"} for index in range(100)
    ]
    records.append({"split": "heldout", "prompt": "held out"})
    prompts = write(tmp_path / "p.jsonl", records)
    sequences, _ = prompt_sequences(
        prompts, encode, keep=3, seq_len=5, limits={"train": 10, "heldout": 10}
    )
    tails = ["".join(map(chr, s[:3])) for s in sequences["train"]]
    assert tails == [f"{index:03d}" for index in range(0, 100, 10)]


def test_bad_files_are_refused_with_the_line(tmp_path: Path) -> None:
    limits = {"train": 10, "heldout": 10}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"split": "train", "prompt": "abcdef"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: not JSON"):
        prompt_sequences(bad, encode, keep=3, seq_len=5, limits=limits)
    write(bad, [{"split": "test", "prompt": "abcdef"}])
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: each line needs `split`"):
        prompt_sequences(bad, encode, keep=3, seq_len=5, limits=limits)
    write(bad, [{"split": "train", "prompt": "abcdef"}])
    with pytest.raises(ConfigError, match="1 train and 0 held-out"):
        prompt_sequences(bad, encode, keep=3, seq_len=5, limits=limits)
    with pytest.raises(ConfigError, match="cannot read"):
        prompt_sequences(tmp_path / "absent.jsonl", encode, keep=3, seq_len=5, limits=limits)
    with pytest.raises(ConfigError, match="--generated-prompt"):
        prompt_sequences(bad, encode, keep=5, seq_len=5, limits=limits)


def test_prompts_exclude_cached_features_and_partial_generation(tmp_path: Path) -> None:
    base = TrainOptions(method="eagle", target=tmp_path, out=tmp_path, prompts=tmp_path / "p")
    check_options(base)
    with pytest.raises(ConfigError, match="give one"):
        check_options(TrainOptions(**{**base.__dict__, "features": tmp_path}))
    with pytest.raises(ConfigError, match="share 1"):
        check_options(TrainOptions(**{**base.__dict__, "generated_share": 0.5}))
    # A checkpoint written without --prompts keeps its resume key.
    assert "prompts" not in TrainOptions(method="eagle", target=tmp_path, out=tmp_path).resume_key()
    assert base.resume_key()["prompts"] == str(tmp_path / "p")
