"""One recipe per draft-head type (build, loss, acceptance, export) behind `HeadRecipe`.

Training and evaluation look a recipe up here, by `--method` or by what an exported head's
config.json says, and never branch on the head type themselves.
"""

from __future__ import annotations

from typing import Any

from copilot_lsp.draft.recipes.base import DraftHead, HeadRecipe
from copilot_lsp.draft.recipes.eagle import EagleRecipe
from copilot_lsp.draft.recipes.eagle3 import Eagle3Recipe
from copilot_lsp.draft.recipes.medusa import MedusaRecipe
from copilot_lsp.errors import ConfigError

__all__ = ["RECIPES", "DraftHead", "HeadRecipe", "recipe_for", "recipe_for_export"]

RECIPES: dict[str, HeadRecipe] = {
    recipe.method: recipe for recipe in (EagleRecipe(), Eagle3Recipe(), MedusaRecipe())
}


def recipe_for(method: str) -> HeadRecipe:
    """The recipe of `--method` `method`."""
    if method not in RECIPES:
        raise ConfigError(f"unknown draft method {method!r} (known: {', '.join(RECIPES)})")
    return RECIPES[method]


def recipe_for_export(config: dict[str, Any]) -> HeadRecipe:
    """The recipe whose exports look like `config` (an exported head's config.json). A
    folder no recipe wrote is read as an EAGLE head, the format vLLM's EAGLE heads share; its
    weights then say clearly if it is not one."""
    for recipe in RECIPES.values():
        if recipe.wrote(config):
            return recipe
    return RECIPES["eagle"]
