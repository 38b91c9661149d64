"""The draft-head recipes: looked up by method or by an export's config, and the one
acceptance loop every head's hits go through."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
import torch

from copilot_lsp.draft import export
from copilot_lsp.draft.features import Features
from copilot_lsp.draft.objectives import Batch, acceptance
from copilot_lsp.draft.recipes import RECIPES, recipe_for, recipe_for_export
from copilot_lsp.draft.target import Target
from copilot_lsp.draft.train import TrainOptions, run
from copilot_lsp.errors import ConfigError

TARGET_CONFIG = {"model_type": "llama", "vocab_size": 40, "hidden_size": 16}


def test_every_method_has_a_recipe_and_an_unknown_one_is_refused_naming_the_known() -> None:
    assert sorted(RECIPES) == ["eagle", "eagle3", "medusa"]
    assert all(recipe_for(method).method == method for method in RECIPES)
    with pytest.raises(
        ConfigError, match=r"unknown draft method 'eagle2' \(known: eagle, eagle3, "
    ):
        recipe_for("eagle2")


def test_an_unknown_method_is_refused_before_any_work(tmp_path: Path) -> None:
    options = TrainOptions(
        method="lookahead",  # type: ignore[arg-type]
        target=tmp_path / "no-model",
        out=tmp_path / "out",
    )
    with pytest.raises(ConfigError, match="unknown draft method 'lookahead'"):
        run(options, log=lambda _: None)
    assert not (tmp_path / "out").exists()


def test_an_exported_head_finds_the_recipe_that_wrote_it() -> None:
    eagle = export.eagle_config(TARGET_CONFIG, "v1:abc", "bfloat16")
    eagle3 = export.eagle3_config(
        TARGET_CONFIG, "v1:abc", "bfloat16", aux_layers=(2, 3, 5), draft_vocab=8
    )
    medusa = export.medusa_config(16, 40, 3, "v1:abc", "bfloat16")
    assert recipe_for_export(eagle).method == "eagle"
    assert recipe_for_export(eagle3).method == "eagle3"
    assert recipe_for_export(medusa).method == "medusa"
    # A head from elsewhere is read as EAGLE, whose loader says if its weights are not one.
    assert recipe_for_export({"architectures": ["EagleLlamaForCausalLM"]}).method == "eagle"
    assert recipe_for_export({}).method == "eagle"


def test_medusa_heads_are_not_measured_by_evaluate_and_say_so(tmp_path: Path) -> None:
    medusa = recipe_for("medusa")
    config = export.medusa_config(16, 40, 3, "v1:abc", "bfloat16")
    # Refused before the target or the features are touched.
    no_target, no_data = cast(Target, None), cast(Features, None)
    with pytest.raises(ConfigError, match="measures EAGLE and EAGLE-3 heads"):
        medusa.load(tmp_path, config, no_target, no_data, 3)


def test_acceptance_chains_the_steps_over_the_rounds_every_step_covers() -> None:
    # Step 1 has a column for 5 round starts, step 2 for 4: rounds are the first 4.
    step1 = torch.tensor([[True, True, False, True, True]])
    step2 = torch.tensor([[True, False, True, True]])
    unused = Batch(torch.zeros(1, 1), torch.zeros(1, 1, 1), torch.zeros(1, 1))
    result = acceptance(lambda batch: [step1, step2], [unused], 2)
    # Chains by round: 2, 1, 0, 2 drafts accepted.
    assert result.per_position == [3 / 4, 2 / 4]
    # Each step's accuracy is over all its own columns.
    assert result.step_accuracy == pytest.approx([4 / 5, 3 / 4])
    # In serving order: a round at slot 0 accepts 2, the next starts at slot 3 and accepts 2.
    assert result.serving_per_position == [1.0, 1.0]
    assert result.mean_accepted_length == 2.25


def test_acceptance_after_a_prompt_counts_only_the_rounds_starting_there() -> None:
    step1 = torch.tensor([[True, True, False, True, True]])
    step2 = torch.tensor([[True, False, True, True]])
    unused = Batch(torch.zeros(1, 1), torch.zeros(1, 1, 1), torch.zeros(1, 1))
    # From slot 2 on: rounds at slots 2 and 3 (step 2 covers up to slot 3): 0 and 2 accepted.
    result = acceptance(lambda batch: [step1, step2], [unused], 2, start=2)
    assert result.per_position == [1 / 2, 1 / 2]
    assert result.step_accuracy == pytest.approx([2 / 3, 2 / 2])
    # In serving order: the round at slot 2 accepts none, the next (slot 3) accepts 2.
    assert result.serving_per_position == [1 / 2, 1 / 2]
