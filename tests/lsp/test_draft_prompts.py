"""`draft prompts`: the real server's prompts on editing sessions, recorded at the engine."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from copilot_lsp.bench.replay.prompts import record_prompts
from copilot_lsp.bench.replay.sessions import pick_sessions, split_files
from copilot_lsp.draft import corpus
from copilot_lsp.errors import ConfigError
from tests.unit.bench.test_replay_sessions import SOURCE

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("served_name", ["smollm2-135m", "qwen2.5-coder-32b"])
def test_every_few_keys_the_engine_gets_the_prompt_of_the_text_typed_so_far(
    served_name: str,
    isolated_process_env: dict[str, str],
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    for index in range(6):
        (root / f"m{index}.py").write_text(SOURCE + f"\nVERSION = {index}\n", encoding="utf-8")
    out = tmp_path / "prompts.jsonl"
    report = asyncio.run(
        record_prompts(
            [str(root)],
            out,
            served_name=served_name,
            train_per_kind=1,
            heldout_per_kind=0,
            every=4,
            log=print,
        )
    )
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert report["prompts"] == {"train": len(records)}
    assert {r["split"] for r in records} == {"train"}
    files = split_files(corpus.collect([root]), "train")
    sessions = pick_sessions(files, 1, 17)
    for session in sessions:
        prompts = [r["prompt"] for r in records if r["session"] == session.id]
        # One request at the start and one every 4 keys, each with its own prompt.
        assert len(prompts) == (len(session.target) + 3) // 4
        for ask, prompt in enumerate(prompts):
            typed = session.before + session.target[: ask * 4]
            # The code before the cursor (the cursor line's indentation may be held back) ends
            # the prompt for SmolLM2 (prefix only, no markers), and Qwen's middle: its
            # fill-in-the-middle layout puts the code after the cursor between the markers.
            if served_name.startswith("smollm2"):
                before, below = prompt, None
                assert "<fim_" not in prompt and "<|fim_" not in prompt
            else:
                # With the workspace indexed (the corpus is the root), Qwen's repository
                # format: `<|repo_name|>`, other files, then the current file's FIM block.
                head, marker, fim = prompt.partition("<|fim_prefix|>")
                assert marker and (not head or head.startswith("<|repo_name|>"))
                assert prompt.endswith("<|fim_middle|>")
                before, _, rest = fim.partition("<|fim_suffix|>")
                below = rest.removesuffix("<|fim_middle|>")
            assert before.rstrip().endswith(typed.rstrip()[-12:]), (session.id, ask)
            if below is not None:
                assert session.after.strip().startswith(below.strip()[:12]), (session.id, ask)


def test_a_corpus_without_the_sessions_asked_for_says_so(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "tiny.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="too few places"):
        asyncio.run(
            record_prompts(
                [str(root)],
                tmp_path / "p.jsonl",
                served_name="smollm2-135m",
                train_per_kind=1,
                heldout_per_kind=0,
            )
        )
