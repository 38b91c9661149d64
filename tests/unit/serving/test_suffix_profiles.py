"""Suffix decoding as a profile: its settings, vLLM's keys, and a clear refusal without it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.errors import ConfigError, LauncherError
from copilot_lsp.serving import suffix
from copilot_lsp.serving.drafts import install_draft as prepare_draft
from copilot_lsp.serving.profiles import Profile, load_profile
from tests.conftest import REPO

SUFFIX_PROFILES = [
    "local-cpu-suffix",
    "gpu-smollm2-suffix",
    "suffix-qwen2.5-coder-32b-2xa100",
]


pytestmark = pytest.mark.usefixtures("repo_configs")


def profile(speculative: dict[str, Any]) -> Profile:
    return Profile.model_validate(
        {"name": "t", "model": {"source": "/m", "served_name": "m"}, "speculative": speculative}
    )


@pytest.mark.parametrize("name", SUFFIX_PROFILES)
def test_shipped_suffix_profiles_give_vllms_suffix_decoding_keys(name: str) -> None:
    loaded = load_profile(name)
    argv = loaded.command(loaded.model.source)
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["method"] == "suffix" and "model" not in config
    assert config["num_speculative_tokens"] >= 8
    assert set(config) >= {
        "suffix_decoding_max_tree_depth",
        "suffix_decoding_max_cached_requests",
        "suffix_decoding_max_spec_factor",
        "suffix_decoding_min_token_prob",
    }


def test_suffix_settings_default_to_vllms_and_are_checked() -> None:
    config = profile({"method": "suffix", "num_speculative_tokens": 24}).speculative_config()
    assert config == {
        "method": "suffix",
        "num_speculative_tokens": 24,
        "suffix_decoding_max_tree_depth": 24,
        "suffix_decoding_max_cached_requests": 10000,
        "suffix_decoding_max_spec_factor": 1.0,
        "suffix_decoding_min_token_prob": 0.1,
    }
    with pytest.raises(ValueError, match="min_token_prob"):
        profile({"method": "suffix", "num_speculative_tokens": 8, "suffix": {"min_token_prob": 2}})
    with pytest.raises(ValueError, match="no draft model"):
        profile({"method": "suffix", "model": "/d", "num_speculative_tokens": 8})
    with pytest.raises(ValueError, match=r"speculative\.suffix"):
        profile({"method": "ngram", "num_speculative_tokens": 3, "suffix": {}})
    with pytest.raises(ValueError, match="at most 5 for eagle"):
        profile({"method": "eagle", "model": "/d", "num_speculative_tokens": 16})
    with pytest.raises(ValueError, match="at most 5 for draft_model"):
        profile({"method": "draft_model", "model": "/d", "num_speculative_tokens": 6})
    # n-gram looks its drafts up in the prompt: a long run costs no draft passes.
    long_lookup = profile({"method": "ngram", "num_speculative_tokens": 16}).speculative_config()
    assert long_lookup == {"method": "ngram", "num_speculative_tokens": 16}
    with pytest.raises(ValueError, match=r"speculative.suffix\]"):
        profile(
            {
                "method": "suffix",
                "num_speculative_tokens": 8,
                "options": {"suffix_decoding_max_tree_depth": 8},
            }
        )


def test_a_bad_suffix_profile_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\n[model]\nsource = "/m"\nserved_name = "m"\n'
        '[speculative]\nmethod = "suffix"\nnum_speculative_tokens = 100\n'
    )
    with pytest.raises(ConfigError, match="num_speculative_tokens"):
        load_profile(str(path))


def test_engine_up_without_arctic_inference_says_how_to_build_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.import_module

    def missing(name: str, *args: Any) -> Any:
        if name.startswith("arctic_inference"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(LauncherError) as error:
        prepare_draft(load_profile("local-cpu-suffix"), "/models/target")
    message = str(error.value)
    assert "pip install --no-deps --no-build-isolation arctic-inference==0.3.0" in message
    assert "nanobind==2.9.2" in message and "make setup" in message
    assert "Traceback" not in message


def test_with_the_extension_there_is_no_draft_to_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suffix, "require_suffix_decoding", lambda: None)
    monkeypatch.setattr("copilot_lsp.serving.drafts.require_suffix_decoding", lambda: None)
    assert prepare_draft(load_profile("local-cpu-suffix"), "/models/target") is None


def test_makefile_builds_arctic_inference_without_failing_setup() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "SUFFIX_BUILD_TOOLS := nanobind==2.9.2 cmake ninja" in makefile
    assert "--no-deps --no-build-isolation $(ARCTIC_INFERENCE)" in makefile
    assert '|| echo "arctic-inference was not built' in makefile


def test_the_default_engine_is_suffix_decoding_and_eagle_without_its_extension(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from copilot_lsp.cli import engine

    monkeypatch.setattr(suffix, "suffix_decoding_installed", lambda: True)
    assert engine.default_profile() == "local-cpu-suffix"
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(suffix, "suffix_decoding_installed", lambda: False)
    assert engine.default_profile() == "local-cpu"
    message = capsys.readouterr().err
    assert "suffix decoding is not installed" in message and "starting local-cpu (EAGLE)" in message
    # Both are real profiles of the embedded model.
    assert load_profile(engine.DEFAULT_PROFILE).speculative is not None
    fallback = load_profile(engine.FALLBACK_PROFILE).speculative
    assert fallback is not None and fallback.method == "eagle"


def test_suffix_decoding_installed_follows_the_import(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def missing(name: str, *args: Any) -> Any:
        if name.startswith("arctic_inference"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", lambda name, *a: None)
    assert suffix.suffix_decoding_installed()
    monkeypatch.setattr(importlib, "import_module", missing)
    assert not suffix.suffix_decoding_installed()
