"""The base of every settings section: camelCase from editors, snake_case from files and the
environment, unknown keys left to the layer merge (settings_layers.py) to report."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        use_attribute_docstrings=True,
        validate_assignment=True,
    )
