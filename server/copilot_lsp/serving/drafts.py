"""The draft a profile names, resolved to a folder, and checked against its target.

A draft head is trained on one target's hidden states. Served beside another target it loads
without complaint and accepts next to nothing, so before starting an engine we compare the
fingerprint the draft recorded (`copilot_lsp_target_fingerprint`) with the target's, and refuse
a mismatch unless the user overrides it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

from copilot_lsp.draft import embedded
from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY, target_fingerprint
from copilot_lsp.errors import ConfigError, LauncherError
from copilot_lsp.serving.profiles import Profile
from copilot_lsp.serving.suffix import require_suffix_decoding

logger = logging.getLogger(__name__)
_DRAFT_METHODS = ("eagle", "eagle3", "medusa")


def draft_path_for(profile: Profile, target: str) -> str | None:
    """The draft folder or id the command line names (nothing is built here)."""
    spec = profile.speculative
    if spec is None or spec.model is None:
        return None
    if embedded.is_embedded(spec.model):
        return str(embedded.draft_dir(spec.model, Path(target)))
    return spec.model


def install_draft(
    profile: Profile,
    target: str,
    *,
    allow_mismatch: bool = False,
    log: Callable[[str], None] = lambda message: None,
) -> str | None:
    """The draft folder to serve, assembled if needed and checked against `target`.

    Suffix decoding has no draft: what it needs (Arctic Inference) is checked instead.
    """
    spec = profile.speculative
    if spec is not None and spec.method == "suffix":
        require_suffix_decoding()
        return None
    if spec is None or spec.model is None or spec.method not in _DRAFT_METHODS:
        return spec.model if spec is not None else None
    try:
        if embedded.is_embedded(spec.model):
            path = str(embedded.prepare_draft(spec.model, Path(target), log))
        else:
            path = spec.model
    except ConfigError as error:
        raise LauncherError(str(error)) from None
    check_draft(Path(target), Path(path), allow_mismatch=allow_mismatch, log=log)
    return path


def recorded_fingerprint(draft: Path) -> str | None:
    for name in ("config.json", "copilot_lsp_draft.json"):
        try:
            data = json.loads((draft / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = data.get(FINGERPRINT_KEY) if isinstance(data, dict) else None
        if isinstance(value, str):
            return value
    return None


def check_draft(
    target: Path,
    draft: Path,
    *,
    allow_mismatch: bool = False,
    log: Callable[[str], None] = lambda message: None,
) -> None:
    """Raise LauncherError when `draft` was trained for another target than `target`."""
    if not draft.is_dir() or not target.is_dir():
        log(f"draft {draft} or target {target} is not a local folder: fingerprint not checked")
        return
    recorded = recorded_fingerprint(draft)
    if recorded is None:
        log(f"draft {draft} records no target fingerprint (not trained by copilot-lsp): unchecked")
        return
    try:
        actual = target_fingerprint(target)
    except ConfigError as error:
        log(f"cannot fingerprint the target {target} ({error}): draft not checked")
        return
    if actual == recorded:
        return
    message = (
        f"the draft {draft} was trained for a target with fingerprint {recorded}, but "
        f"{target} has fingerprint {actual}: its acceptance would collapse. Retrain it with "
        "`copilot-lsp draft train --target …`, or pass --allow-draft-mismatch to serve it anyway"
    )
    if not allow_mismatch:
        raise LauncherError(message)
    log("WARNING: " + message.split(". Retrain")[0] + " (served anyway: --allow-draft-mismatch)")
