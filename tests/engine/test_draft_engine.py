"""Draft heads in the real vLLM CPU engine: trained here, loaded there, greedy-exact.

A few training steps on a tiny corpus give heads that accept almost nothing but must load and
serve; the shipped EAGLE head accepts a lot, which exercises vLLM's accepted-token path. In
float32 every speculative output must equal plain decoding token for token (bf16 outputs can
differ with batch shape, numerics not a bug: docs/speculative.md, "Exactness"; so equality is
only asserted in float32).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from copilot_lsp.draft.datasets import shards
from copilot_lsp.draft.embedded import shipped_dir
from copilot_lsp.draft.export import MEDUSA_HEADS, SIDECAR
from copilot_lsp.draft.features import load
from copilot_lsp.draft.fingerprint import FINGERPRINT_KEY, target_fingerprint
from copilot_lsp.draft.target import Target
from copilot_lsp.draft.train import TrainOptions, evaluate_head, run
from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics
from copilot_lsp.errors import ConfigError
from copilot_lsp.serving import launcher
from copilot_lsp.serving.prepare import prepare_embedded_model
from copilot_lsp.serving.profiles import Profile
from tests.conftest import free_port

pytestmark = [pytest.mark.engine, pytest.mark.timeout(900)]

STDLIB_EMAIL = Path(os.__file__).parent / "email"
PROMPTS = [
    "def fibonacci(n):\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n",
]
TOKENS = 24


@pytest.fixture(scope="module")
def target() -> Path:
    return prepare_embedded_model("float32")


def _tiny(method: str, target: Path, out: Path, cache_dir: Path, **changes: Any) -> TrainOptions:
    """Training options for a few steps on a tiny corpus (the email package)."""
    options = TrainOptions(
        method=method,  # type: ignore[arg-type]
        target=target,
        out=out,
        corpus=(str(STDLIB_EMAIL),),
        seq_len=64,
        train_tokens=2048,
        heldout_tokens=512,
        heldout_percent=40,
        steps=3,
        batch_size=4,
        token_vocab=1024,
        cache_dir=cache_dir,
    )
    return replace(options, **changes)


@pytest.fixture(scope="module")
def tiny_drafts(tmp_path_factory: pytest.TempPathFactory, target: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("drafts")
    drafts = {}
    for method in ("eagle", "medusa"):
        options = _tiny(method, target, root / method, root / "features")
        report = run(options, log=lambda message: None)
        assert report["options"]["steps"] == 3
        drafts[method] = options.out
    return drafts


def test_tiny_training_writes_vllm_checkpoints_with_the_fingerprint(
    tiny_drafts: dict[str, Path], target: Path
) -> None:
    fingerprint = target_fingerprint(target)
    eagle = json.loads((tiny_drafts["eagle"] / "config.json").read_text())
    assert eagle["num_hidden_layers"] == 1
    assert eagle["architectures"] == ["LlamaForCausalLM"]
    assert eagle[FINGERPRINT_KEY] == fingerprint
    medusa = json.loads((tiny_drafts["medusa"] / "config.json").read_text())
    assert medusa["model_type"] == "medusa" and medusa["original_lm_head"] is True
    assert medusa[FINGERPRINT_KEY] == fingerprint
    # The heads alone are small; the servable folder carries the target's lm_head.
    heads = tiny_drafts["medusa"] / "heads" / MEDUSA_HEADS
    assert heads.stat().st_size < 5_000_000
    assert (tiny_drafts["medusa"] / "model.safetensors").stat().st_size > 50_000_000
    sidecar = json.loads((tiny_drafts["eagle"] / SIDECAR).read_text())
    assert sidecar["training"]["heldout"]["per_position"]


def test_training_resumes_from_its_checkpoint(tiny_drafts: dict[str, Path], target: Path) -> None:
    said: list[str] = []
    eagle = tiny_drafts["eagle"]
    options = _tiny("eagle", target, eagle, eagle.parent / "features", steps=4)
    run(options, log=said.append)
    assert any("resuming from step 3" in line for line in said)


def test_evaluate_reproduces_the_training_report_and_ranks_the_shipped_head_first(
    tiny_drafts: dict[str, Path], target: Path
) -> None:
    features = tiny_drafts["eagle"].parent / "features"
    tiny = evaluate_head(target, tiny_drafts["eagle"], features)
    trained = json.loads((tiny_drafts["eagle"] / SIDECAR).read_text())["training"]["heldout"]
    assert tiny["per_position"] == trained["per_position"]
    assert tiny["serving"] == trained["serving"]
    shipped = evaluate_head(target, shipped_dir("eagle"), features)
    assert shipped["serving"]["acceptance_rate"] > tiny["serving"]["acceptance_rate"] + 0.1


def _profile(name: str, speculative: dict[str, object] | None) -> Profile:
    data: dict[str, object] = {
        "name": name,
        "model": {
            "source": "embedded:float32",
            "served_name": "smollm2-135m",
            "dtype": "float32",
            "max_model_len": 1024,
        },
        "server": {"startup_timeout_s": 300, "args": ["--enforce-eager", "--max-num-seqs", "4"]},
        # One process: starts faster, and the test host is shared.
        "env": {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"},
    }
    if speculative is not None:
        data["speculative"] = speculative
    return Profile.model_validate(data)


def _greedy(profile: Profile, state_dir: Path) -> tuple[list[str], SpecDecodeCounters]:
    state = launcher.engine_up(profile, port=free_port(), state_dir=state_dir)
    root = state.url.removesuffix("/v1")
    try:
        texts = []
        for prompt in PROMPTS:
            body = {
                "model": "smollm2-135m",
                "prompt": prompt,
                "max_tokens": TOKENS,
                "temperature": 0.0,
                "ignore_eos": True,
            }
            answer = httpx.post(f"{root}/v1/completions", json=body, timeout=300).json()
            texts.append(answer["choices"][0]["text"])
        metrics = parse_metrics(httpx.get(f"{root}/metrics", timeout=10).text)
        return texts, SpecDecodeCounters.from_samples(metrics)
    finally:
        launcher.engine_down(state_dir=state_dir)


@pytest.fixture(scope="module")
def engine_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state folder of the engines these tests start: never the user's."""
    return tmp_path_factory.mktemp("draft-engine-state")


@pytest.fixture(scope="module")
def plain(engine_state: Path) -> list[str]:
    texts, counters = _greedy(_profile("plain", None), engine_state)
    assert counters.drafts == 0
    return texts


def test_tiny_medusa_loads_and_decodes_exactly_like_plain(
    plain: list[str], tiny_drafts: dict[str, Path], engine_state: Path
) -> None:
    spec = {"method": "medusa", "model": str(tiny_drafts["medusa"]), "num_speculative_tokens": 3}
    texts, counters = _greedy(_profile("tiny-medusa", spec), engine_state)
    assert counters.drafts > 0, "the engine never used the Medusa heads"
    assert texts == plain


@pytest.mark.parametrize(("method", "size_limit"), [("eagle", 10_000_000), ("eagle3", 25_000_000)])
def test_shipped_eagle_heads_accept_and_decode_exactly_like_plain(
    plain: list[str], method: str, size_limit: int, engine_state: Path
) -> None:
    spec = {"method": method, "model": f"embedded-draft:{method}", "num_speculative_tokens": 3}
    texts, counters = _greedy(_profile(method, spec), engine_state)
    assert counters.drafts > 0
    assert counters.accepted_tokens / counters.draft_tokens > 0.3, "the shipped head is untrained?"
    assert texts == plain
    assert (
        shipped_dir(f"embedded-draft:{method}") / "model.safetensors"
    ).stat().st_size < size_limit


def test_self_distilled_training_continues_the_shipped_head(
    tmp_path: Path, target: Path, tiny_drafts: dict[str, Path]
) -> None:
    # Half the sequences are the target's own greedy continuation of their first 16 tokens;
    # the head starts from the shipped one, so after one tiny step it already accepts a
    # lot on held-out text, where a fresh head accepts next to nothing.
    options = _tiny(
        "eagle",
        target,
        tmp_path / "eagle",
        tmp_path / "features",
        train_tokens=1024,
        steps=1,
        lr=1e-6,
        generated_share=0.5,
        generated_prompt=16,
        init=shipped_dir("eagle"),
    )
    report = run(options, log=lambda message: None)
    assert report["corpus"]["generated_share"] == 0.5
    generated = list((tmp_path / "features" / "generated" / "train").glob("*.safetensors"))
    assert generated, "the continuations are cached"
    assert report["heldout"]["acceptance_rate"] > 0.2
    fresh = json.loads((tiny_drafts["eagle"] / SIDECAR).read_text())["training"]["heldout"]
    assert fresh["acceptance_rate"] < 0.1


def test_fresh_windows_and_extra_features_add_training_data(
    tmp_path: Path, target: Path, tiny_drafts: dict[str, Path]
) -> None:
    first = tiny_drafts["eagle"].parent / "features"
    fresh = tmp_path / "fresh"
    # --skip-tokens: the windows after the first run's 2048 tokens; --steps 0 only caches them.
    run(_tiny("eagle", target, tmp_path / "cache-only", fresh, skip_tokens=2048, steps=0), print)
    own = {str(p.name) for p in (first / "train").glob("*.safetensors")}
    new = {str(p.name) for p in (fresh / "train").glob("*.safetensors")}
    assert new and not new & own, "the skipped windows are other text, cached apart"
    said: list[str] = []
    options = _tiny(
        "eagle",
        target,
        tmp_path / "both",
        tmp_path / "unused",
        features=first,
        extra_features=(fresh,),
        steps=1,
    )
    report = run(options, log=said.append)
    alone = run(replace(options, out=tmp_path / "alone", extra_features=()), log=lambda _: None)
    assert report["corpus"]["train_tokens"] == 2 * alone["corpus"]["train_tokens"]
    assert report["corpus"]["heldout_tokens"] == alone["corpus"]["heldout_tokens"]
    assert any(str(fresh) in line for line in said)


def test_a_head_grown_to_two_layers_loads_and_decodes_exactly_like_plain(
    plain: list[str], tmp_path: Path, target: Path, tiny_drafts: dict[str, Path]
) -> None:
    # The shipped head plus a second layer (input norm and all, as vLLM builds layers after
    # the first): one training step moves the new layer off the identity.
    options = _tiny(
        "eagle",
        target,
        tmp_path / "eagle-2",
        tiny_drafts["eagle"].parent / "features",
        init=shipped_dir("eagle"),
        layers=2,
        steps=1,
        lr=1e-4,
    )
    report = run(options, log=lambda message: None)
    config = json.loads((options.out / "config.json").read_text())
    assert config["num_hidden_layers"] == 2
    assert report["heldout"]["acceptance_rate"] > 0.2, "growing lost the shipped head's skill"
    spec = {"method": "eagle", "model": str(options.out), "num_speculative_tokens": 3}
    texts, counters = _greedy(_profile("eagle-2-layers", spec), tmp_path / "engine-state")
    assert counters.accepted_tokens / counters.draft_tokens > 0.3
    assert texts == plain


def test_tiny_eagle3_reads_the_targets_layers_loads_and_decodes_exactly_like_plain(
    plain: list[str], tmp_path: Path, target: Path, tiny_drafts: dict[str, Path]
) -> None:
    # EAGLE-3 on the text of the EAGLE head's cached features: the target's residual streams
    # after layers 2, 15 and 27 are computed for those tokens and cached apart.
    first = tiny_drafts["eagle"].parent / "features"
    options = _tiny(
        "eagle3", target, tmp_path / "eagle3", tmp_path / "aux", features=first, token_vocab=512
    )
    report = run(options, log=lambda message: None)
    assert report["aux_layers"] == [2, 15, 27]
    assert list((tmp_path / "aux" / "train").glob("*.safetensors")), "aux streams are cached"
    config = json.loads((options.out / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert config["draft_vocab_size"] == 512
    assert config[FINGERPRINT_KEY] == target_fingerprint(target)
    again = evaluate_head(target, options.out, tmp_path / "aux")
    assert again["per_position"] == report["heldout"]["per_position"]
    with pytest.raises(ConfigError, match="an EAGLE-3 head reads"):
        evaluate_head(target, options.out, first)  # EAGLE features: the last hidden state only
    # --init continues an EAGLE-3 head with its own draft vocabulary.
    said: list[str] = []
    run(replace(options, out=tmp_path / "again", init=options.out, steps=1), log=said.append)
    assert any("starting from the EAGLE-3 head" in line for line in said)
    assert json.loads((tmp_path / "again" / "config.json").read_text())["draft_vocab_size"] == 512
    spec = {"method": "eagle3", "model": str(options.out), "num_speculative_tokens": 3}
    texts, counters = _greedy(_profile("tiny-eagle3", spec), tmp_path / "engine-state")
    assert counters.drafts > 0, "the engine never used the EAGLE-3 head"
    assert texts == plain


def test_training_on_the_servers_prompts_continues_each_prompts_tail_with_the_target(
    tmp_path: Path, target: Path
) -> None:
    # Prompts as `draft prompts` records them: code cut where the user stopped typing.
    code = (STDLIB_EMAIL / "quoprimime.py").read_text(encoding="utf-8")
    cuts = range(1500, 1500 + 12 * 97, 97)
    records = [
        {"split": "heldout" if index % 4 == 0 else "train", "prompt": code[:cut]}
        for index, cut in enumerate(cuts)
    ]
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    options = _tiny(
        "eagle",
        target,
        tmp_path / "eagle",
        tmp_path / "features",
        corpus=(),
        prompts=prompts,
        seq_len=48,
        generated_prompt=32,
        steps=1,
        lr=1e-6,
        init=shipped_dir("eagle"),
    )
    report = run(options, log=lambda message: None)
    assert (report["corpus"]["train_prompts"], report["corpus"]["heldout_prompts"]) == (9, 3)
    data = load(shards(tmp_path / "features", "train"))
    encode = Target(target).encode
    tails = sorted(encode(r["prompt"])[-32:] for r in records if r["split"] == "train")
    assert sorted(data.tokens[:, :32].tolist()) == tails
    # After the prompt, each token is the target's greedy choice at the position before it.
    assert bool((data.argmax[:, 31:-1] == data.tokens[:, 32:]).all())
    # The shipped head, barely moved, drafts these continuations well.
    assert report["heldout"]["acceptance_rate"] > 0.2
    # The rounds after the prompt alone, as the report gives them and evaluate measures them.
    after = evaluate_head(target, options.out, tmp_path / "features", rounds_from=31)
    assert report["heldout_after_prompt"]["per_position"] == after["per_position"]
    assert report["heldout_after_prompt"] != report["heldout"]
