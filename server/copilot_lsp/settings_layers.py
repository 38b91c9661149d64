"""Settings layers merged field by field: a mistake costs that field, never the others.

The base layers are the settings file (TOML) and the environment (`COPILOT_LSP_<SECTION>_<FIELD>`);
the editor's layers (initializationOptions, workspace/configuration) come on top. Each layer
is merged leniently over the one below:

* a settings file that is not valid TOML is skipped as a whole (one message: file and line);
* a field of the wrong type or out of range is dropped alone (one message: field and source);
  for the environment the source is the variable's name;
* an unknown key gets one "did you mean …" warning;
* an unknown `prompt.family` is dropped like a wrong-typed field, listing the known families.

Everything else of every layer applies: one bad field in the file no longer makes the server
forget `COPILOT_LSP_ENGINE_URL`. The messages are returned, for the server to show in the
editor (once each) and for the command line to print.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from copilot_lsp import paths
from copilot_lsp.errors import ConfigError
from copilot_lsp.settings import Settings, _snake_keys, apply_layer_leniently, settings_file

ENV_PREFIX = "COPILOT_LSP_"
NOT_SETTINGS = frozenset({"SETTINGS_FILE", "STATE_DIR", "CONFIG_DIR", "CACHE_DIR", "CONFIGS"})
"""COPILOT_LSP_* variables that name folders and files of the tool, not settings fields."""
_TOML_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass
class Layered:
    """Merged settings and what was wrong on the way, one line per problem."""

    settings: Settings
    problems: list[str] = field(default_factory=list)
    """Values or files that were ignored."""
    warnings: list[str] = field(default_factory=list)
    """Unknown keys (ignored, with the nearest known name)."""

    @property
    def messages(self) -> list[str]:
        return self.problems + self.warnings


def load_base(environ: Mapping[str, str] | None = None) -> Layered:
    """Defaults < the settings file < the environment, each merged field by field."""
    result = Layered(Settings())
    path = settings_file()
    file_layer = _read_file(path, result)
    if file_layer is not None:
        apply(result, file_layer, f"settings file {path}")
    for name, layer in _environment_layers(os.environ if environ is None else environ, result):
        apply(result, layer, name)
    return result


def base_settings() -> Settings:
    """Defaults < settings file < environment; raises ConfigError naming what is wrong.

    For callers that must not run on a partly ignored configuration; the server merges the
    same layers leniently instead (`load_base`) and reports what it dropped.
    """
    loaded = load_base()
    if loaded.problems:
        raise ConfigError("; ".join(loaded.problems))
    return loaded.settings


def base_messages() -> list[str]:
    """What is wrong in the settings file and the environment (for `copilot-lsp complete`)."""
    return load_base().messages


def apply(result: Layered, layer: Any, source: str) -> None:
    """Merge `layer` over `result.settings` field by field, recording what was dropped."""
    if isinstance(layer, Mapping):
        layer = _snake_keys(layer)
        result.warnings += [f"{source}: {w}" for w in unknown_keys(layer, Settings)]
        _drop_unknown_family(layer, source, result)
    settings, dropped = apply_layer_leniently(result.settings, layer, source)
    result.settings = settings
    result.problems += dropped


def unknown_keys(layer: Mapping[str, Any], model: type[BaseModel], where: str = "") -> list[str]:
    """One warning per key `model` does not have, naming the closest known key."""
    found: list[str] = []
    fields = model.model_fields
    for key, value in layer.items():
        name = f"{where}{key}"
        if key not in fields:
            found.append(f"unknown key `{name}`{_did_you_mean(key, fields, where)}; ignored")
            continue
        inner = fields[key].annotation
        if isinstance(value, Mapping) and isinstance(inner, type) and issubclass(inner, BaseModel):
            found += unknown_keys(value, inner, f"{name}.")
    return found


def _did_you_mean(key: str, known: Iterable[str], where: str) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean `{where}{close[0]}`?)" if close else ""


def _drop_unknown_family(layer: dict[str, Any], source: str, result: Layered) -> None:
    prompt = layer.get("prompt")
    if not isinstance(prompt, dict):
        return
    family = prompt.get("family")
    if not isinstance(family, str):
        return
    known = _families()
    if family in known:
        return
    del prompt["family"]
    listed = ", ".join(known) or "none"
    result.problems.append(
        f"{source}: prompt.family: unknown model family {family!r} (known: {listed}); ignored"
    )


def _families() -> list[str]:
    return sorted(path.stem for path in (paths.configs_root() / "models").glob("*.toml"))


def _read_file(path: Path, result: Layered) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        result.problems.append(f"cannot read settings file {path}: {error}; the file is ignored")
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where = _TOML_LINE.search(str(error))
        line = f"line {where.group(1)}: " if where else ""
        reason = _TOML_LINE.sub("", str(error)).strip()
        result.problems.append(
            f"cannot read settings file {path}: {line}{reason} (not valid TOML); "
            "the whole file is ignored"
        )
        return None


def _environment_layers(
    environ: Mapping[str, str], result: Layered
) -> list[tuple[str, dict[str, Any]]]:
    """One layer per COPILOT_LSP_<SECTION>_<FIELD> variable, named after it. Section and
    field names hold underscores themselves (`NEXT_EDIT_SUGGESTIONS`), and a subsection's
    field is named through it (`COPILOT_LSP_NEXT_EDIT_SUGGESTIONS_ENGINE_API_KEY`)."""
    layers: list[tuple[str, dict[str, Any]]] = []
    for raw_name in sorted(environ):
        name = raw_name.upper()
        if not name.startswith(ENV_PREFIX) or name[len(ENV_PREFIX) :] in NOT_SETTINGS:
            continue
        rest = name[len(ENV_PREFIX) :].lower()
        found = _field_path(Settings, rest)
        if found is None:
            result.warnings.append(
                f"environment: unknown variable {name}{_env_hint(rest)}; ignored"
            )
            continue
        path, annotation = found
        value: Any = environ[raw_name]
        if len(path) == 1:  # the whole section as a JSON object, as pydantic-settings allowed
            value = _json(value)
            if not isinstance(value, dict):
                result.problems.append(f"{name}: expected a JSON object; ignored")
                continue
        elif _is_structured(annotation):
            value = _json(value)
            if value is _NOT_JSON:
                result.problems.append(f"{name}: not valid JSON (a list or object); ignored")
                continue
        layer: dict[str, Any] = {path[-1]: value}
        for key in reversed(path[:-1]):
            layer = {key: layer}
        layers.append((name, layer))
    return layers


def _field_path(model: type[BaseModel], rest: str) -> tuple[list[str], Any] | None:
    """The field (and its annotation) a variable's name after the prefix, lower case, names
    in `model`: one of its fields, else a field of one of its subsections."""
    fields = model.model_fields
    if rest in fields:
        return [rest], fields[rest].annotation
    for key, info in fields.items():
        inner = info.annotation
        if rest.startswith(f"{key}_") and isinstance(inner, type) and issubclass(inner, BaseModel):
            found = _field_path(inner, rest[len(key) + 1 :])
            if found is not None:
                return [key, *found[0]], found[1]
    return None


def _env_hint(rest: str) -> str:
    known = [
        f"{section}_{key}"
        for section, info in Settings.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
        for key in info.annotation.model_fields
    ]
    close = difflib.get_close_matches(rest, known, n=1, cutoff=0.6)
    return f" (did you mean {ENV_PREFIX}{close[0].upper()}?)" if close else ""


_NOT_JSON = object()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def _is_structured(annotation: Any) -> bool:
    """Lists and tables come from the environment as JSON, as with pydantic-settings."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True  # a subsection (`context.workspace`)
    kinds = {get_origin(annotation)} | {get_origin(arg) for arg in get_args(annotation)}
    return bool(kinds & {list, dict})
