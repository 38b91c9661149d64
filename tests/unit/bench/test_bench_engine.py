"""The engine benchmark: its plan, its runner against a scripted engine (chunks carrying
several tokens, failures of every kind), its summaries, the claims and the report folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from copilot_lsp.bench.engine import claims, command, report
from copilot_lsp.bench.engine.prompts import Prompt
from copilot_lsp.bench.engine.run import with_capacity
from copilot_lsp.bench.engine.runner import MIXED, CellSpec, Plan, run_cell
from copilot_lsp.bench.harness import save_results
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.testing.fake_engine import FakeEngine, Reply

PROMPTS = [
    Prompt("flat", "f1", "def a():\n"),
    Prompt("flat", "f2", "def b():\n"),
    Prompt("nested", "n1", "        if x:\n"),
    Prompt("nested", "n2", "        for y in z:\n"),
    Prompt("longform", "l1", "class Cache:\n"),
]


def test_plan_runs_each_set_alone_then_both_sweeps_on_mixed_prompts() -> None:
    plan = Plan(["flat", "nested", "longform"], [1, 4, 64], [0.0, 1.3], repeats=2, max_tokens=8)
    cells = plan.cells(PROMPTS)
    first = [c for c in cells if c.repeat == 0]
    assert [(c.set, c.concurrency, c.temperature, c.requests) for c in first] == [
        ("flat", 1, 0.0, 2),
        ("nested", 1, 0.0, 2),
        ("longform", 1, 0.0, 1),
        (MIXED, 1, 1.3, 4),
        (MIXED, 4, 0.0, 8),  # two waves
        (MIXED, 64, 0.0, 64),  # one full wave
    ]
    assert len(cells) == 2 * len(first)


def test_a_benchmark_engine_has_room_for_the_highest_concurrency() -> None:
    profile = with_capacity(load_profile("local-cpu"), 64)
    assert profile.server.args[profile.server.args.index("--max-num-seqs") + 1] == "64"
    gpu = with_capacity(load_profile("eagle-qwen2.5-coder-32b-2xa100"), 16)
    assert gpu.server.max_num_seqs == 64  # already more than asked: kept


def _metrics(drafts: int, accepted: int, first: int) -> str:
    return (
        f'vllm:spec_decode_num_drafts_total{{engine="0"}} {drafts}\n'
        f'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} {3 * drafts}\n'
        f'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",position="0"}} {first}\n'
    )


def _event(text: str, tokens: int) -> str:
    return json.dumps(
        {"choices": [{"index": 0, "text": text}], "usage": {"completion_tokens": tokens}}
    )


@pytest.mark.asyncio
async def test_cell_records_chunks_counts_failures_and_reads_counter_deltas() -> None:
    engine = await FakeEngine().start()
    # A speculative step delivers three tokens in one chunk; then four kinds of failure.
    engine.replies = [
        Reply(raw_events=[_event("a", 1), _event("bcd", 4), _event("", 4), "[DONE]"], delay_s=0.02),
        Reply(status=500),
        Reply(chunks=["x", "y", "z"], cut_after=1),
        Reply(raw_events=["{not json"]),
        Reply(raw_events=["[DONE]"]),
    ]
    engine.metrics_text = _metrics(10, 12, 8)
    done = 0

    def advance() -> None:  # counters move while the cell runs, as a real engine's do
        nonlocal done
        done += 1
        engine.metrics_text = _metrics(10 + 5 * done, 12 + 4 * done, 8 + 3 * done)

    try:
        async with httpx.AsyncClient() as client:
            spec = CellSpec("flat", 1, 0.0, 0, 5)
            root = engine.url.removesuffix("/v1")
            cell = await run_cell(client, root, "fake", "p", spec, PROMPTS, 16, advance)
    finally:
        await engine.stop()
    good, http_error, cut, malformed, empty = cell.records
    assert good.ok and good.tokens == 4 and good.text == "abcd"
    assert [tokens for _, tokens in good.chunks] == [1, 4]
    assert good.ttft_ms is not None and good.e2e_ms is not None and good.e2e_ms >= good.ttft_ms
    assert good.tok_s is not None and good.tok_s > 0
    assert not http_error.ok and http_error.error is not None and "500" in http_error.error
    assert not malformed.ok and "JSONDecodeError" in (malformed.error or "")
    assert not empty.ok and empty.error == "the stream ended without a token"
    # A cut stream delivered one token and then ended: recorded as what it is.
    assert cut.tokens == 1
    body = engine.requests[0].body
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert body["ignore_eos"] is True and body["temperature"] == 0.0
    assert cell.acceptance is not None
    assert cell.acceptance["drafts"] == 25 and cell.acceptance["accepted_tokens"] == 20
    assert cell.acceptance["mean_accepted_length"] == pytest.approx(1.8)


def _request(prompt: str, tok_s: float, ttft: float, text: str | None = None) -> dict[str, Any]:
    e2e = 1000.0 * 10 / tok_s
    return {
        "prompt": prompt,
        "ok": True,
        "error": None,
        "ttft_ms": ttft,
        "e2e_ms": e2e,
        "tokens": 10,
        "chunks": [[ttft, 1], [e2e, 10]],
        "text": text,
        "tok_s": tok_s,
    }


def _cell(
    profile: str,
    kind: str,
    concurrency: int,
    temperature: float,
    tok_s: float,
    acceptance: float | None,
    ttft: float = 100.0,
) -> dict[str, Any]:
    window = None
    if acceptance is not None:
        window = {
            "drafts": 100,
            "draft_tokens": 300,
            "accepted_tokens": round(300 * acceptance),
            "per_position": [acceptance + 0.2, acceptance, acceptance - 0.2],
        }
    requests = [
        _request("p1", tok_s, ttft, "same" if temperature == 0 and concurrency == 1 else None),
        _request("p2", tok_s, ttft, "same" if temperature == 0 and concurrency == 1 else None),
    ]
    return {
        "profile": profile,
        "set": kind,
        "concurrency": concurrency,
        "temperature": temperature,
        "repeat": 0,
        "requests": requests,
        "wall_s": 20 / tok_s / concurrency,
        "acceptance": window,
    }


def _synthetic() -> dict[str, Any]:
    """Plain at 10 tok/s; EAGLE twice as fast at low concurrency and temperature, slower at
    64 and at T=1.3; Medusa's acceptance halves on nested code."""
    cells = []
    for profile, speed, rate_flat, rate_nested in (
        ("plain", 10.0, None, None),
        ("eagle", 20.0, 0.7, 0.6),
        ("medusa", 13.0, 0.6, 0.25),
    ):
        cells.append(
            _cell(
                profile, "flat", 1, 0.0, speed, rate_flat, ttft=100 if profile == "plain" else 130
            )
        )
        cells.append(
            _cell(
                profile,
                "nested",
                1,
                0.0,
                speed,
                rate_nested,
                ttft=100 if profile == "plain" else 130,
            )
        )
        cells.append(_cell(profile, MIXED, 16, 0.0, speed * 0.8, rate_flat))
        slow = speed if profile == "plain" else 9.0
        cells.append(_cell(profile, MIXED, 64, 0.0, slow, rate_flat))
        cells.append(_cell(profile, MIXED, 1, 1.3, slow, rate_flat))
    return {
        "machine": {"platform": "test", "processor": "x", "cpus": 2},
        "started_at": "2026-11-29T00:00:00Z",
        "duration_s": 1.0,
        "plan": {
            "sets": ["flat", "nested"],
            "concurrency": [1, 16, 64],
            "temperatures": [0.0, 1.3],
            "repeats": 1,
            "max_tokens": 10,
        },
        "profiles": {
            "plain": {"speculative": None},
            "eagle": {"speculative": {"method": "eagle"}},
            "medusa": {"speculative": {"method": "medusa"}},
        },
        "prompts": [{"set": "flat", "name": "p1", "chars": 9}],
        "cells": cells,
    }


def test_summary_speedups_acceptance_and_greedy_equality() -> None:
    summary = report.summarise(_synthetic())
    assert summary["plain"] == "plain"
    eagle = summary["by_concurrency"]["eagle"]
    assert eagle[1]["tok_s"]["median"] == pytest.approx(20.0)
    assert eagle[1]["speedup"]["tok_s"] == pytest.approx(2.0)
    assert eagle[64]["speedup"]["tok_s"] == pytest.approx(0.9)
    assert eagle[1]["speedup"]["ttft"] == pytest.approx(1.3)
    medusa = summary["acceptance_by_set"]["medusa"]
    assert medusa["flat"]["acceptance_rate"] == pytest.approx(0.6)
    assert medusa["nested"]["acceptance_rate"] == pytest.approx(0.25)
    assert medusa["flat"]["mean_accepted_length"] == pytest.approx(1 + 180 / 100)
    assert summary["greedy_identical"]["eagle"] == "4/4"


def test_claims_are_answered_from_the_measurements() -> None:
    ordering, nested, batch, ttft, temperature = claims.answer_all(report.summarise(_synthetic()))
    assert ordering.holds is True  # 20 > 13 > 10
    assert nested.holds is True  # Medusa 0.6 -> 0.25
    assert batch.holds is False  # stops paying at 64 already, not beyond it
    assert ttft.holds is True  # 1.3x slower to the first token
    assert temperature.holds is True  # pays at 0, not at 1.3


def test_report_folder_is_regenerated_from_saved_results(tmp_path: Path) -> None:
    save_results(tmp_path, _synthetic())
    args = argparse.Namespace(report_only=True, out=tmp_path)
    text = command.run(args, tmp_path / "state")
    assert "| eagle | 1 |" in text and "×2.00" in text
    for name in ("report.md", "summary.json", "tokens-per-second.png", "latency-cdf.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "acceptance-by-position.png").read_bytes()[:4] == b"\x89PNG"


def test_report_only_without_results_is_a_clear_error(tmp_path: Path) -> None:
    from copilot_lsp.errors import CopilotLspError

    with pytest.raises(CopilotLspError, match=r"results\.json"):
        command.run(argparse.Namespace(report_only=True, out=tmp_path), tmp_path / "state")


def test_running_endpoints_are_benchmarked_repeat_by_repeat(tmp_path: Path) -> None:
    import asyncio
    import threading

    from copilot_lsp.bench.engine.run import run_benchmark

    # Two scripted engines stand for two profiles already running; they live on their own
    # event loop because run_benchmark drives its own.
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    engines = [
        asyncio.run_coroutine_threadsafe(FakeEngine().start(), loop).result(5) for _ in range(2)
    ]
    try:
        for engine in engines:
            engine.default = Reply(chunks=["a", "b"])
        plan = Plan(["flat"], [1, 2], [0.0], repeats=2, max_tokens=4)
        data = run_benchmark(
            ["one", "two"],
            plan,
            PROMPTS[:2],
            endpoints={"one": engines[0].url, "two": engines[1].url},
            port=0,
            state_dir=tmp_path,
        )
    finally:
        for engine in engines:
            asyncio.run_coroutine_threadsafe(engine.stop(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
    order = [(cell["repeat"], cell["profile"]) for cell in data["cells"]]
    assert order == [(0, "one"), (0, "one"), (0, "two"), (0, "two"),
                     (1, "one"), (1, "one"), (1, "two"), (1, "two")]  # fmt: skip
    assert data["profiles"]["one"]["endpoint"] == engines[0].url.removesuffix("/v1")
    assert all(r["ok"] and r["tokens"] == 2 for c in data["cells"] for r in c["requests"])
    # 1 warm-up + (2 flat + 4 at concurrency 2) per repeat, on each engine
    assert [len(engine.requests) for engine in engines] == [2 + 2 * 6, 2 + 2 * 6]


def test_a_profile_given_as_a_file_is_labelled_by_its_name_everywhere(tmp_path: Path) -> None:
    import asyncio
    import threading

    from copilot_lsp.bench.engine.run import run_benchmark

    candidate = tmp_path / "draft-runs" / "cand-e3a.toml"
    candidate.parent.mkdir()
    candidate.write_text('name = "eagle3-candidate"\n', encoding="utf-8")
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    engine = asyncio.run_coroutine_threadsafe(FakeEngine().start(), loop).result(5)
    try:
        engine.default = Reply(chunks=["a", "b"])
        data = run_benchmark(
            [str(candidate)],
            Plan(["flat"], [1], [0.0], repeats=1, max_tokens=4),
            PROMPTS[:1],
            endpoints={str(candidate): engine.url},
            port=0,
            state_dir=tmp_path / "state",
        )
    finally:
        asyncio.run_coroutine_threadsafe(engine.stop(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
    assert list(data["profiles"]) == ["eagle3-candidate"]
    assert {cell["profile"] for cell in data["cells"]} == {"eagle3-candidate"}
    assert str(tmp_path) not in json.dumps(data)


def test_a_saved_run_that_named_a_profile_by_path_is_relabelled(tmp_path: Path) -> None:
    saved = _synthetic()
    path = "/tmp/draft-runs/cand-sd3.toml"  # a file that no longer exists: its stem
    saved = report.relabel(saved, {"eagle": path})
    assert path in json.dumps(saved)
    # As runs saved it before the raw results were compressed: a plain results.json.
    (tmp_path / "results.json").write_text(json.dumps(saved), encoding="utf-8")
    text = command.run(argparse.Namespace(report_only=True, out=tmp_path), tmp_path / "state")
    assert "| cand-sd3 | 1 |" in text
    for name in ("report.md", "summary.json", "roofline.md"):
        assert "/tmp/" not in (tmp_path / name).read_text(encoding="utf-8"), name
    assert "cand-sd3" in json.loads((tmp_path / "summary.json").read_text())["greedy_identical"]


def test_a_claim_about_where_speculation_stops_needs_a_profile_that_pays() -> None:
    data = _synthetic()
    data["profiles"].pop("eagle")
    data["cells"] = [c for c in data["cells"] if c["profile"] != "eagle"]
    for cell in data["cells"]:  # Medusa now no faster than plain anywhere
        if cell["profile"] == "medusa":
            for request in cell["requests"]:
                request["tok_s"] = 9.0
            cell["wall_s"] = 20 / 9.0 / cell["concurrency"]
    answers = claims.answer_all(report.summarise(data))
    batch, temperature = answers[2], answers[4]
    assert batch.holds is None and "does not pay even at 1" in batch.evidence
    assert temperature.holds is None


def test_paying_at_low_concurrency_says_nothing_about_batch_64() -> None:
    data = _synthetic()
    data["cells"] = [c for c in data["cells"] if c["concurrency"] < 64]
    data["plan"]["concurrency"] = [1, 16]
    batch = claims.answer_all(report.summarise(data))[2]
    assert batch.holds is None
    assert "measured only up to concurrency 16" in batch.evidence


def test_roofline_costs_model_free_drafts_at_no_weight_reads() -> None:
    from copilot_lsp.bench.engine import roofline

    assert roofline.method_of("local-cpu-suffix") == "suffix"
    assert roofline.method_of("local-cpu-ngram") == "ngram"
    assert roofline.method_of("local-cpu-medusa") == "medusa"
    assert roofline.method_of("local-cpu-eagle3") == "eagle"
    assert roofline.draft_bytes("suffix") == roofline.draft_bytes("ngram") == 0.0
    assert roofline.draft_bytes("eagle") > roofline.draft_bytes("medusa") > 0.0
