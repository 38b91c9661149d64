"""Suffix decoding in the real vLLM CPU engine: it speculates, and greedy outputs equal plain.

Float32 only: in bfloat16, verifying many positions at once can round differently, so equality
holds only in float32 (how often bf16 differs is measured by `python -m
copilot_lsp.bench.replay.greedy --dtype bfloat16`: docs/benchmarks/replay/suffix-greedy-bf16.json).
Each prompt is sent three times, so from the second pass on the suffix tree holds the
earlier outputs and proposes long runs: the path where a wrong acceptance would show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.bench.replay.greedy import PROMPTS, compare

pytest.importorskip(
    "arctic_inference.suffix_decoding", reason="arctic-inference is not built (make setup)"
)
pytestmark = [pytest.mark.engine, pytest.mark.timeout(1200)]


def test_suffix_decoding_speculates_and_decodes_exactly_like_plain_in_float32(
    tmp_path: Path,
) -> None:
    result = compare("float32", state_dir=tmp_path, passes=3)
    assert result["outputs"] == 3 * len(PROMPTS)
    spec = result["spec_decode"]
    assert spec["drafts"] > 0 and spec["accepted_tokens"] > 0, "the suffix tree never proposed"
    # Repeated prompts are its best case: runs of several tokens accepted per step.
    assert spec["mean_accepted_length"] > 2.0
    assert result["differ"] == [], f"outputs differ from plain decoding: {result['differ']}"
