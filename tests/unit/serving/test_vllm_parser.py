"""Every GPU profile's printed `vllm serve` line read back by vLLM's own argument parser, and
its speculative config built by vLLM's own `SpeculativeConfig` where the method needs no draft
model: correct by construction for the profiles no GPU here can serve. The installed vLLM is
the CPU build; its serving arguments are the CUDA build's (the same `cli_args` module)."""

from __future__ import annotations

import dataclasses
import json
import shlex
from argparse import Namespace
from functools import cache
from typing import Any

import pytest

from copilot_lsp.nextedit.prompt import choose_format
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.serving.vllm_command import command_line, served_paths
from tests.unit.serving.test_vllm_command import GPU_PROFILES, PRODUCTION

pytestmark = pytest.mark.usefixtures("repo_configs")

NEXT_EDIT = "ngram-sweep-next-edit-1.5b-1xgpu"


@cache
def _vllm() -> tuple[Any, type[Any]]:
    """vLLM's `serve` argument parser and its SpeculativeConfig (imported once: ~8 s)."""
    pytest.importorskip("vllm", reason="vLLM is not installed (make setup)")
    from vllm.config import SpeculativeConfig
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser()), SpeculativeConfig


def parsed(name: str) -> Namespace:
    """The printed line as `vllm serve` reads it (its positional model is `--model`); the key
    stays a shell reference in the line, a placeholder here."""
    argv = shlex.split(command_line(load_profile(name)).replace('"${VLLM_API_KEY:?}"', "KEY"))
    assert argv[:2] == ["vllm", "serve"]
    parser, _ = _vllm()
    args: Namespace = parser.parse_args(["--model", argv[2], *argv[3:]])
    return args


@pytest.mark.parametrize("name", GPU_PROFILES)
def test_vllms_parser_reads_every_gpu_profiles_line_as_the_profile_says(name: str) -> None:
    profile = load_profile(name)
    args = parsed(name)
    assert args.model == served_paths(profile)[0]
    assert args.served_model_name == [profile.model.served_name]
    assert (args.port, args.max_model_len) == (profile.server.port, profile.model.max_model_len)
    assert args.tensor_parallel_size == profile.server.tensor_parallel_size
    assert args.api_key == ["KEY"] and args.enable_prefix_caching is True
    expected = profile.speculative_config(served_paths(profile)[1])
    assert args.speculative_config == expected
    if expected is None:
        return
    _, speculative = _vllm()
    known = {field.name for field in dataclasses.fields(speculative)}
    assert set(expected) <= known, set(expected) - known
    if expected["method"] == "ngram":  # no draft to load: vLLM validates it whole here
        config = speculative(**expected)
        assert config.num_speculative_tokens == expected["num_speculative_tokens"]
        assert config.prompt_lookup_min <= config.prompt_lookup_max


def test_a_flag_or_key_vllm_does_not_know_is_refused() -> None:
    parser, speculative = _vllm()
    with pytest.raises(SystemExit):
        parser.parse_args(["--model", "/m", "--speculative-tokens", "3"])
    with pytest.raises(ValueError, match="prompt_lookup_min"):
        speculative(
            method="ngram", num_speculative_tokens=16, prompt_lookup_min=9, prompt_lookup_max=8
        )


def test_the_next_edit_profile_copies_long_runs_beside_the_completion_engine() -> None:
    args = parsed(NEXT_EDIT)
    assert args.model == "/models/sweep-next-edit-1.5B"
    assert args.max_model_len == 8192 and args.tensor_parallel_size == 1
    assert args.port not in {load_profile(name).server.port for name in PRODUCTION}
    assert args.speculative_config == {
        "method": "ngram",
        "num_speculative_tokens": 16,
        "prompt_lookup_min": 2,
        "prompt_lookup_max": 8,
    }
    # The server picks the next-edit format from the served name: Sweep's models, qwen-repo.
    [served] = args.served_model_name
    assert choose_format(None, [served], None).name == "qwen-repo"
    line = command_line(load_profile(NEXT_EDIT))
    assert json.dumps(args.speculative_config, separators=(",", ":")) in line


@pytest.mark.parametrize("name", PRODUCTION)
def test_the_32b_profiles_serve_next_edits_in_the_base_model_format(name: str) -> None:
    # No second model needed: the served name alone selects qwen-repo (docs/serving.md).
    served = load_profile(name).model.served_name
    assert choose_format(None, [served], None).name == "qwen-repo"
