"""Which engines sample correctly: `engine up` records it, the server follows it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from copilot_lsp.engine.endpoint import EngineUrl
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.engine.state import EngineState, read_state, write_state
from copilot_lsp.serving.launcher import samples_exactly
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.settings import EngineSettings

pytestmark = pytest.mark.usefixtures("repo_configs")


@pytest.mark.parametrize(
    ("profile", "exact"),
    [
        ("local-cpu-baseline", True),
        ("local-cpu", False),
        ("local-cpu-suffix", False),
        ("local-cpu-ngram", False),
        ("local-cpu-eagle3", False),
        ("gpu-smollm2-eagle", True),
        ("eagle-qwen2.5-coder-32b-2xa100", True),
    ],
)
def test_speculative_cpu_engines_are_recorded_as_sampling_wrongly(
    profile: str, exact: bool
) -> None:
    assert samples_exactly(load_profile(profile)) is exact


def state(url: str, exact: bool) -> EngineState:
    return EngineState(1, 8000, url, "local-cpu", "m", "/tmp/log", 0.0, samples_exactly=exact)


def test_the_server_follows_the_recorded_engine(tmp_path: Path) -> None:
    path = tmp_path / "engine.json"
    url = EngineUrl(path)
    assert url.samples_exactly(None)  # no engine started: nothing known against it
    write_state(state("http://127.0.0.1:8000/v1", False), path)
    assert not url.samples_exactly(None)
    assert not url.samples_exactly("http://127.0.0.1:8000/v1")  # configured, but the same
    assert url.samples_exactly("http://gpu-box:8000/v1")  # another engine: taken at its word
    provider = EngineProvider(EngineSettings(), state_file=path)
    assert not provider.samples_exactly
    provider.configure(EngineSettings(url="http://gpu-box:8000/v1"))
    assert provider.samples_exactly


def test_a_state_file_from_before_the_field_reads_as_exact(tmp_path: Path) -> None:
    path = tmp_path / "engine.json"
    old = asdict(state("http://127.0.0.1:8000/v1", True))
    del old["samples_exactly"]
    path.write_text(json.dumps(old), encoding="utf-8")
    recorded = read_state(path)
    assert recorded is not None and recorded.samples_exactly
