"""The draft heads shipped with copilot-lsp for the embedded target (SmolLM2-135M-Instruct).

`embedded-draft:eagle` is the EAGLE head in `weights/smollm2-eagle/` (8 MB, bfloat16) and
`embedded-draft:eagle3` the EAGLE-3 head in `weights/smollm2-eagle3/` (20 MB: it carries its
own 8192-token output layer), both served from the package as they are.
`embedded-draft:medusa` is three Medusa blocks in `weights/smollm2-medusa/` (2 MB); vLLM wants
an output layer with them, which is the target's own lm_head, so a servable folder is assembled
in the cache on first use instead of being committed. All were trained by `copilot-lsp draft
train` (see docs/speculative.md); the folders' `copilot_lsp_draft.json` says how and what they
measured.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from copilot_lsp import paths
from copilot_lsp.errors import ConfigError

PREFIX = "embedded-draft:"
WEIGHTS = Path(__file__).resolve().parent / "weights"
_SHIPPED = {"eagle": "smollm2-eagle", "eagle3": "smollm2-eagle3", "medusa": "smollm2-medusa"}
_SERVED_AS_IS = ("eagle", "eagle3")


def is_embedded(spec: str | None) -> bool:
    return spec is not None and spec.startswith(PREFIX)


def shipped_dir(spec: str) -> Path:
    name = spec.removeprefix(PREFIX)
    if name not in _SHIPPED:
        known = ", ".join(PREFIX + key for key in _SHIPPED)
        raise ConfigError(f"unknown embedded draft {spec!r} (known: {known})")
    return WEIGHTS / _SHIPPED[name]


def draft_dir(spec: str, target_dir: Path) -> Path:
    """Where vLLM finds the draft for `spec` (it may still have to be assembled)."""
    shipped = shipped_dir(spec)
    if spec.removeprefix(PREFIX) in _SERVED_AS_IS:
        return shipped
    return paths.cache_dir() / "drafts" / f"{shipped.name}-for-{target_dir.name}"


def prepare_draft(spec: str, target_dir: Path, log: Callable[[str], None]) -> Path:
    """The servable folder for `spec`, assembling the Medusa one from the target if needed."""
    folder = draft_dir(spec, target_dir)
    shipped = shipped_dir(spec)
    if folder == shipped:
        if not (shipped / "config.json").exists():
            raise ConfigError(f"the embedded draft {spec} is missing from {shipped}")
        return folder
    from copilot_lsp.draft.export import MEDUSA_HEADS, assemble_medusa

    if not (shipped / MEDUSA_HEADS).exists():
        raise ConfigError(f"the embedded draft {spec} is missing from {shipped}")
    stamp = folder / ".assembled-from"
    source = (
        f"{(shipped / MEDUSA_HEADS).stat().st_size}:{(shipped / MEDUSA_HEADS).stat().st_mtime_ns}"
    )
    if stamp.exists() and stamp.read_text(encoding="utf-8") == source:
        return folder
    log(f"assembling {spec} with the target's lm_head into {folder}")
    assemble_medusa(shipped, target_dir, folder)
    stamp.write_text(source, encoding="utf-8")
    return folder
