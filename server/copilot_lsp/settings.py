"""One typed settings tree, every field defaulted and documented.

Precedence, lowest first: defaults < the settings file (TOML) < environment variables
(`COPILOT_LSP_<SECTION>_<FIELD>`, e.g. `COPILOT_LSP_ENGINE_URL`) < LSP initializationOptions
< LSP workspace/configuration (section `copilotLsp`; lsp/configuration.py). Editors send
camelCase keys; files and the environment may use snake_case; both are accepted everywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from copilot_lsp import paths
from copilot_lsp.errors import ConfigError
from copilot_lsp.settings_features import ContextSettings, NextEditSettings
from copilot_lsp.settings_section import Section as _Section

DEFAULT_ENGINE_URL = "http://127.0.0.1:8000/v1"
SpeculativeMethod = Literal["eagle", "eagle3", "medusa", "draft_model", "ngram", "suffix"]
"""vLLM's speculative methods the profiles offer (`[speculative] method`)."""
ACCEPTANCE_THRESHOLD = 0.45
"""The seed's failover rule for learned drafts: acceptance rate (accepted / drafted tokens)."""
RECOVERY_MARGIN = 0.10
"""How far above the failover threshold a primary's acceptance must come back to recover."""
ACCEPTED_LENGTH_THRESHOLD = 1.10
"""Failover rule for n-gram and suffix decoding on an engine no profile describes: mean accepted
length (tokens per verification step). docs/speculative.md derives it ("Health per method")."""
LENGTH_RECOVERY_MARGIN = 0.25
"""How far above its failover threshold the mean accepted length must come back to recover."""


class EngineSettings(_Section):
    url: str | None = None
    """OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1. Unset: the embedded engine
    started by `copilot-lsp engine up`, else http://127.0.0.1:8000/v1."""
    api_key: SecretStr | None = None
    """Sent as `Authorization: Bearer …`; never logged."""
    model: str | None = None
    """Model name to request. Unset: the first model the engine lists at /v1/models."""
    connect_timeout_s: float = Field(default=2.0, gt=0)
    """Seconds to wait for a TCP connection to the engine."""
    read_timeout_s: float = Field(default=30.0, gt=0)
    """Seconds to wait between two chunks of a streamed answer."""

    # Endpoint pool, speculative-decoding health and failover (engine/router.py, health.py).
    endpoints: list[str] = Field(default_factory=list)
    """Base URLs of several engine replicas to spread completions over by load and health
    (each with its own acceptance monitor). Empty: `url` is the only primary."""
    replica_metrics: list[str] = Field(default_factory=list)
    """Base URLs of the engine replicas behind a router (vllm-router) at `url`: the speculative
    health is read from each replica's /metrics and pooled, since a router's own /metrics is
    one replica's at a time (or none). Empty: behind a router the health is not read at all
    (the log and `copilot/stats` say so) and completions never fail over for it."""
    fallback_url: str | None = None
    """A plain-decoding engine (no speculation) that takes the completions while the primaries'
    speculative decoding does not pay off (the health rule of their method). Unset: no
    failover."""
    speculative_method: Literal[
        "auto", "eagle", "eagle3", "medusa", "draft_model", "ngram", "suffix", "none"
    ] = "auto"
    """How the primaries speculate, which decides their health signal: learned drafts (`eagle`,
    `eagle3`, `medusa`, `draft_model`) by acceptance rate, `ngram` and `suffix` by mean
    accepted length, `none` never. `auto`: the embedded engine's profile as `engine up`
    recorded it (its `[speculative.health]` threshold too); for another engine the method is
    unknown and it is judged as a learned draft, which fails over healthy n-gram and suffix
    engines: set this for a team's engine."""
    acceptance_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Learned drafts: fail over when a primary's windowed acceptance rate (accepted / drafted
    tokens) stays below this. Unset: the embedded engine's profile's threshold, else 0.45."""
    recovery_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Learned drafts: return to a primary once its acceptance rate is back at or above this;
    at least the failover threshold (hysteresis). Unset: the profile's, else the failover
    threshold + 0.10 (0.55 with the defaults)."""
    min_accepted_length: float | None = None
    """N-gram and suffix decoding: fail over when a primary's windowed mean accepted length
    (tokens per verification step, 1 + accepted / drafts) stays below this; 1 or more. Unset:
    the embedded engine's profile's threshold, else 1.10."""
    recovery_accepted_length: float | None = None
    """N-gram and suffix decoding: return to a primary once its mean accepted length is back
    at or above this; at least the failover threshold. Unset: the profile's, else the failover
    threshold + 0.25."""
    acceptance_window_s: float = Field(default=60.0, gt=0)
    """Seconds of drafts the health signal is computed over."""
    min_window_drafts: int = Field(default=20, ge=1)
    """Drafts a window needs before it may trigger failover or recovery."""
    trip_after: int = Field(default=3, ge=1)
    """Consecutive low readings before failing over."""
    recover_after: int = Field(default=3, ge=1)
    """Consecutive good readings before returning to a primary."""
    metrics_interval_s: float = Field(default=5.0, gt=0)
    """Seconds between two scrapes of each endpoint's /metrics."""
    probe_interval_s: float = Field(default=10.0, gt=0)
    """While a primary is failed over, replay the latest request to it this often to measure
    whether its acceptance recovered."""
    retry_after_s: float = Field(default=10.0, gt=0)
    """Seconds an unreachable endpoint is skipped before it is tried again."""
    backoff_max_s: float = Field(default=8.0, ge=0, le=300)
    """After engine failures (refused, timeout, HTTP 429/5xx, broken stream) automatic
    completions skip the engine for 0.25 s, doubling per failure in a row up to this (a
    `Retry-After` header is honoured up to 60 s); the next success resets it. 0: no backoff."""
    tls_verify: bool = True
    """Verify the engine's TLS certificate (https URLs). Turning this off is for testing only:
    anyone on the network path can then read the API key and the source code sent."""
    ca_file: Path | None = None
    """A PEM file of CA certificates to trust for the engine (a private CA), instead of the
    system's and certifi's."""

    @field_validator("replica_metrics")
    @classmethod
    def _replicas_behind_one_router(cls, value: list[str], info: ValidationInfo) -> list[str]:
        endpoints = info.data.get("endpoints") or []
        if value and len(endpoints) > 1:
            raise ValueError(
                f"engine.replicaMetrics lists the replicas behind one router, but "
                f"engine.endpoints has {len(endpoints)} primaries: put the router's URL in "
                "engine.url (endpoints empty), or list the replicas themselves in "
                "engine.endpoints and drop replicaMetrics"
            )
        return [url.rstrip("/") for url in value]

    @field_validator("recovery_threshold")
    @classmethod
    def _recovery_not_below_failover(
        cls, value: float | None, info: ValidationInfo
    ) -> float | None:
        failover = info.data.get("acceptance_threshold")
        if value is not None and failover is not None and value < failover:
            raise ValueError(
                f"engine.recoveryThreshold ({value}) is below engine.acceptanceThreshold "
                f"({failover}), so a primary would flap between failing over and recovering: "
                f"set recoveryThreshold to {failover} or more, or leave it unset "
                f"({min(1.0, round(failover + RECOVERY_MARGIN, 4))})"
            )
        return value

    @field_validator("min_accepted_length")
    @classmethod
    def _length_at_least_one(cls, value: float | None) -> float | None:
        if value is not None and value < 1.0:
            raise ValueError(
                f"engine.minAcceptedLength ({value}) is below 1: every verification step "
                "yields at least one token, so it would never fail over; set 1 or more "
                f"(e.g. {ACCEPTED_LENGTH_THRESHOLD}), or leave it unset"
            )
        return value

    @field_validator("recovery_accepted_length")
    @classmethod
    def _length_recovery_not_below_failover(
        cls, value: float | None, info: ValidationInfo
    ) -> float | None:
        failover = info.data.get("min_accepted_length")
        floor = failover if failover is not None else 1.0
        if value is not None and value < floor:
            named = f"engine.minAcceptedLength ({failover})" if failover is not None else "1"
            raise ValueError(
                f"engine.recoveryAcceptedLength ({value}) is below {named}, so a primary "
                f"would flap between failing over and recovering: set it to {floor} or more, "
                "or leave it unset"
            )
        return value


class CompletionSettings(_Section):
    enable: bool = True
    """Serve inline completions at all."""
    debounce_ms: int = Field(default=40, ge=0, le=2000)
    """Wait this long after an automatic request; a newer keystroke cancels the wait."""
    adaptive_debounce_max_ms: int = Field(default=0, ge=0, le=2000)
    """While the engine is slow to answer (its recent time to first token far above the gaps
    between keystrokes), automatic requests wait a quarter of that time, up to this, before
    they are sent: a request the next keystroke cancels still costs the engine its whole
    prefill. 0 (the default), or not above `debounce_ms`: always wait `debounce_ms`. Off by
    default: on the embedded engine it delayed the first ghost text more than it saved
    (docs/benchmarks/replay/README.md); an engine shared by many typists and slow under their
    load may still gain from it (e.g. 250), trading time at a pause for less wasted prefill."""
    adopt_typed_streams: bool = True
    """A keystroke that types what the open engine stream has already produced keeps that
    stream for its own request instead of cancelling it: the suggestion minus the typed
    characters is the answer, with no new prompt for the engine to prefill. The request
    the editor cancels on that keystroke stays open for a moment (150 ms) so that the
    next one can take it over (completion/stream.py)."""
    multiline: Literal["auto", "never"] = "auto"
    """`auto`: multi-line when the cursor opens a block or sits on an empty line in one."""
    filters: bool = True
    """Drop lines that repeat the code below or loop, trim lines that break the syntax,
    and re-indent to the file's style. Off: only the block-end cut (for comparisons)."""
    max_tokens: int = Field(default=128, ge=1, le=4096)
    """Token cap for a multi-line completion."""
    single_line_max_tokens: int = Field(default=48, ge=1, le=1024)
    """Token cap for a single-line completion."""
    max_lines: int = Field(default=16, ge=1, le=200)
    """Most lines a multi-line completion may have."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature; 0 is greedy, which suits completion best. An engine whose
    speculative decoding samples wrongly (vLLM's CPU build, as `engine up` records) is sent 0."""
    prefix_lines: int = Field(default=40, ge=1, le=2000)
    """Lines above the cursor put into the prompt."""
    suffix_lines: int = Field(default=10, ge=0, le=2000)
    """Lines below the cursor put into the prompt (fill-in-the-middle formats only)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields merged into every /v1/completions request (e.g. `top_p`)."""
    max_inflight: int = Field(default=4, ge=1, le=256)
    """Most engine requests this server has open at once, over all documents (each document
    has at most one); more wait for a slot, and a newer keystroke cancels them meanwhile."""
    alternatives: int = Field(default=3, ge=1, le=8)
    """Suggestions an explicit request (invoke, or cycling in the editor) may return: the greedy
    one first, then up to this many minus one sampled beside it in one more engine request
    (`n`), each cut and fitted like the first, duplicates and empty ones dropped. Automatic
    requests always get one. 1: no alternatives. None from an engine `engine up` started on
    vLLM's CPU build with speculative decoding (the embedded default): it samples word salad
    there; greedy suggestions are exact."""
    alternatives_temperature: float = Field(default=0.4, gt=0.0, le=2.0)
    """Sampling temperature of the alternatives (the first suggestion stays at `temperature`)."""
    alternatives_wait_ms: int = Field(default=1000, ge=0, le=60_000)
    """How long an explicit request's answer may wait for its alternatives once the first
    suggestion is complete; choices still generating then are dropped (their engine request
    closed) and the finished ones kept. Sampled choices run beside the greedy one and may take
    longer: on a CPU engine about 2.5x as long."""


class PromptSettings(_Section):
    family: str | None = None
    """Prompt template and stop sequences: a file name in configs/models (`qwen2.5-coder`,
    `qwen2.5-coder-repo`, `starcoder2`, `deepseek-coder`, `codellama`, `codestral`, `smollm2`,
    `prefix-only`). Unset: the family that fits the model the engine serves (`/v1/models`),
    confirmed with its tokenizer; `prefix-only` for a model no family fits."""
    stop: list[str] = Field(default_factory=list)
    """Stop sequences sent to the engine on top of the family's own."""
    max_tokens: int | None = Field(default=None, ge=64, le=32_768)
    """Token budget of the whole prompt: prefix window, suffix window and snippets. Unset: the
    prompt family's (`prompt_tokens` in configs/models: 512 for the embedded `smollm2`, whose
    2-core CPU engine prefills ~500 tokens/s), else 1024."""
    tokenizer: Path | None = None
    """A `tokenizer.json` for exact token counts. Unset: the served model's own when the
    engine reads it from this machine (the embedded engine), else the engine's `/tokenize`,
    else an estimate from characters."""
    tokenize_deadline_ms: float = Field(default=25.0, ge=0, le=1000)
    """With counts from the engine's `/tokenize`: the longest a completion waits for lines not
    counted yet (they are estimated meanwhile and exact from the next keystroke on)."""
    snippets: bool = True
    """Add imports, enclosing definitions' headers and definitions of names used near the
    cursor (from this and other open documents) when the budget allows."""
    snippet_deadline_ms: float = Field(default=10.0, gt=0, le=1000)
    """Time allowed for gathering snippets; what is not found by then is left out."""
    repo_name: str = ""
    """Repository name for repository-level templates (default: the workspace folder's name)."""


class TelemetrySettings(_Section):
    log_path: Path | None = None
    """Per-completion JSON-lines log. Unset: `completions.jsonl` in the user's state dir."""
    enable_log: bool = True
    """Write the per-completion log at all."""
    log_source: bool = False
    """Also record the completion text in the log (off: no source code leaves the editor)."""
    window: int = Field(default=1000, ge=10, le=100_000)
    """Completions kept in memory for the rolling percentiles of `copilot/stats`."""


class EditorSettings(_Section):
    """How answers reach the editor; both features are off unless the client asks for them."""

    streaming: bool = False
    """Send `copilot/partialCompletion` notifications with the growing text of the current
    completion (our VS Code and Neovim extensions turn this on; see docs/protocol.md)."""
    early_answer_ms: int | None = Field(default=None, ge=0, le=10_000)
    """Once this many milliseconds have passed, answer with the complete lines streamed so far
    (at least one) instead of waiting for the end of the block; the rest is kept and served
    to the next request at the same position. Unset: answer with the whole completion."""
    partial_interval_ms: int = Field(default=16, ge=0, le=1000)
    """Least time between two `copilot/partialCompletion` notifications of one completion;
    text arriving faster is coalesced (the last state is always sent)."""


class Settings(_Section):
    engine: EngineSettings = Field(default_factory=EngineSettings)
    completion: CompletionSettings = Field(default_factory=CompletionSettings)
    prompt: PromptSettings = Field(default_factory=PromptSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    editor: EditorSettings = Field(default_factory=EditorSettings)
    next_edit_suggestions: NextEditSettings = Field(default_factory=NextEditSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)


def settings_file() -> Path:
    """`$COPILOT_LSP_SETTINGS_FILE`, else `settings.toml` in the user config dir."""
    override = os.environ.get("COPILOT_LSP_SETTINGS_FILE")
    return Path(override).expanduser() if override else paths.config_dir() / "settings.toml"


def apply_layer(settings: Settings, layer: Mapping[str, Any] | None, source: str) -> Settings:
    """`settings` with `layer` (camelCase or snake_case keys) merged over it.

    Raises ConfigError and leaves `settings` untouched when the layer is invalid, so a typo
    in an editor's configuration costs that layer only, never the defaults underneath.
    """
    if not layer:
        return settings
    if not isinstance(layer, Mapping):
        raise ConfigError(f"{source}: expected an object, got {type(layer).__name__}")
    merged = _deep_merge(settings.model_dump(), _snake_keys(layer))
    try:
        return Settings.model_validate(merged)
    except ValidationError as error:
        raise ConfigError(f"invalid {source}: {_describe(error)}") from None


def apply_layer_leniently(
    settings: Settings, layer: Mapping[str, Any] | None, source: str
) -> tuple[Settings, list[str]]:
    """Like `apply_layer`, but an invalid field costs only that field.

    Returns the merged settings and one message per dropped field, so the user hears what
    was ignored while everything valid in the same layer still applies.
    """
    if layer is not None and not isinstance(layer, Mapping):
        return settings, [f"{source}: expected an object, got {type(layer).__name__}"]
    remaining = _snake_keys(layer or {})
    problems: list[str] = []
    for _ in range(100):
        merged = _deep_merge(settings.model_dump(), remaining)
        try:
            return Settings.model_validate(merged), problems
        except ValidationError as error:
            for item in error.errors():
                problems.append(f"{source}: {_describe_one(item)}; ignored")
                if not _drop(remaining, item["loc"]):
                    return settings, problems
    return settings, problems


def _drop(layer: dict[str, Any], loc: tuple[int | str, ...]) -> bool:
    """Remove the top-most field named by `loc` that the layer itself set."""
    node: Any = layer
    for depth, key in enumerate(loc):
        if not isinstance(node, dict) or key not in node:
            return False
        if depth == len(loc) - 1 or not isinstance(node[key], dict):
            del node[key]
            return True
        node = node[key]
    return False


def _describe_one(item: Any) -> str:
    where = ".".join(str(part) for part in item["loc"])
    secret = any("key" in str(part).lower() for part in item["loc"])
    shown = "<redacted>" if secret else repr(item.get("input"))
    return f"{where}: {item['msg']} (got {shown})"


def _describe(error: ValidationError) -> str:
    return "; ".join(_describe_one(item) for item in error.errors())


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")

# Free-form tables whose keys are passed on verbatim (they are JSON fields for the engine).
_VERBATIM_KEYS = frozenset({"extra_body"})


def _snake_keys(value: Any) -> Any:
    """snake_case keys; `null` values dropped, since editors send them for "not set"."""
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                continue
            name = _CAMEL_BOUNDARY.sub(r"_\1", str(key)).lower()
            result[name] = item if name in _VERBATIM_KEYS else _snake_keys(item)
        return result
    return value


def _deep_merge(base: dict[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
