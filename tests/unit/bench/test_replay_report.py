"""The replay's figures and report from hand-made records: percentiles, censoring, tokens."""

from __future__ import annotations

import argparse
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.bench.replay import command, figures, report
from copilot_lsp.errors import CopilotLspError
from tests.conftest import REPO


def record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "session": "s",
        "kind": "hole",
        "edit": 1,
        "version": 2,
        "trigger": "key",
        "gap_ms": 150.0,
        "cancelled_by_editor": False,
        "first_ghost_ms": None,
        "first_line_ms": None,
        "answered_ms": None,
        "outcome": "cancelled",
        "visible": False,
        "shown_chars": 0,
        "matched_chars": None,
        "completion_ids": [],
        "accepted": None,
        "accepted_chars": 0,
        "tab_missed": False,
    }
    return base | fields


def drawn(ghost: float, line: float, whole: float, cid: str, **fields: Any) -> dict[str, Any]:
    return record(
        first_ghost_ms=ghost,
        first_line_ms=line,
        answered_ms=whole,
        outcome="items",
        visible=True,
        completion_ids=[cid],
        **fields,
    )


def run(arm: str, records: list[dict[str, Any]], repeat: int = 0, **extra: Any) -> dict[str, Any]:
    completions = [
        {"id": cid, "outcome": "shown", "tokens": 10, "mode": extra.get("modes", {}).get(cid)}
        for r in records
        for cid in r["completion_ids"]
    ] + [{"id": "lost", "outcome": "cancelled", "tokens": 30}]
    return {
        "arm": arm,
        "repeat": repeat,
        "records": records,
        "completions": completions,
        "typed_chars": 90,
        "accepted_chars": 10,
        "engine": extra.get("engine", {"generation_tokens": None, "spec_decode": None}),
    }


def data() -> dict[str, Any]:
    slow = [
        drawn(400.0, 800.0, 900.0, "a1", gap_ms=2000.0, shown_chars=10, matched_chars=10),
        drawn(500.0, 900.0, 1000.0, "a2", gap_ms=700.0, shown_chars=10, matched_chars=4),
        record(gap_ms=650.0),  # a pause with no ghost: censored
        record(),
    ]
    fast = [
        drawn(100.0, 200.0, 300.0, "b1", gap_ms=2000.0, accepted="full", accepted_chars=10),
        drawn(100.0, 300.0, 400.0, "b2", gap_ms=700.0, shown_chars=8, matched_chars=8),
        drawn(120.0, 220.0, 320.0, "b3", gap_ms=650.0),
        record(cancelled_by_editor=True, tab_missed=True),
    ]
    engine = {
        "generation_tokens": 100,
        "prompt_tokens": 1000,
        "prompt_tokens_cached": 250,
        "spec_decode": {"drafts": 10, "draft_tokens": 40, "accepted_tokens": 20},
    }
    return {
        "started_at": "2026-12-01T00:00:00Z",
        "duration_s": 60.0,
        "machine": {"cpus": 2, "processor": "x86_64"},
        "plan": {"repeats": 1, "seed": 17, "today_settings": {"editor": {"streaming": True}}},
        "sessions": [
            {"id": "hole-1", "kind": "hole", "path": "a.py", "line": 3, "target_chars": 100}
        ],
        "arms": [
            {"label": "plain", "profile": "p", "settings": {}, "speculative": {}, "engine": {}},
            {"label": "fast", "profile": "f", "settings": {}, "speculative": {}, "engine": {}},
        ],
        "reference": "plain",
        "runs": [
            run("plain", slow),
            run("fast", fast, engine=engine, modes={"b3": "type-through"}),
        ],
    }


def test_percentiles_interpolate_and_put_missing_ghosts_last() -> None:
    assert figures.percentile([], 50) is None
    assert figures.percentile([5.0], 99) == 5.0
    assert figures.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert figures.percentile([1.0, math.inf, math.inf], 50) == math.inf
    assert figures.percentile([1.0, 2.0, math.inf], 50) == 2.0


def test_summary_pools_latency_censors_pauses_and_gives_ratios() -> None:
    summary = figures.summarise(data())
    slow, fast = summary["arms"]["plain"], summary["arms"]["fast"]
    assert slow["latency"]["first_ghost_ms"] == {"n": 2, "p50": 450.0, "p90": 490.0, "p99": 499.0}
    pauses = slow["latency"]["at_pauses"]
    assert pauses["requests"] == 3 and pauses["ghost_share"] == pytest.approx(2 / 3, abs=1e-3)
    assert pauses["first_line_ms"]["p50"] == 900.0 and math.isinf(pauses["first_line_ms"]["p90"])
    assert fast["latency"]["at_pauses"]["ghost_share"] == 1.0
    # b3 came from the suggestion already shown (type-through), not from the engine.
    assert fast["latency"]["typed_through"] == 1
    assert fast["latency"]["first_ghost_generated_ms"]["n"] == 2
    # b3's first line (220 ms) is left out of the first lines from the engine: 200 and 300.
    assert fast["latency"]["first_line_generated_ms"]["p50"] == 250.0
    ratios = summary["ratios"]["fast"]
    assert ratios["speedup_first_line_generated_p50"] == pytest.approx(850 / 250, abs=0.01)
    assert ratios["speedup_first_ghost_p50"] == pytest.approx(450 / 100, abs=0.01)
    assert ratios["speedup_pause_first_line_p50"] == pytest.approx(900 / 220, abs=0.01)
    assert summary["ratios"]["plain"]["speedup_first_line_p50"] == 1.0


def test_answers_from_a_stream_taken_over_are_told_apart_from_new_engine_requests() -> None:
    results = data()
    fast = results["runs"][1]["records"]
    results["runs"][1] = run("fast", fast, modes={"b3": "type-through", "b2": "adopted"})
    latency = figures.summarise(results)["arms"]["fast"]["latency"]
    assert (latency["typed_through"], latency["taken_over"]) == (1, 1)
    # b2 (300 ms) came from the engine, but from the stream an earlier keystroke opened.
    assert latency["first_line_generated_ms"]["p50"] == 250.0
    assert latency["first_line_fresh_ms"]["n"] == 1
    assert latency["first_line_fresh_ms"]["p50"] == 200.0


def test_tokens_proxy_and_accepts() -> None:
    summary = figures.summarise(data())
    slow, fast = summary["arms"]["plain"], summary["arms"]["fast"]
    # Two drawn completions of 10 tokens each are useful; the cancelled 30 are wasted.
    assert slow["tokens"]["useful"] == 20 and slow["tokens"]["wasted"] == 30
    assert slow["tokens"]["engine_generated"] is None
    assert fast["tokens"]["engine_wasted"] == 100 - 30
    assert fast["prefill"] == {
        "prompt_tokens": 1000,
        "computed": 750,
        "cached": 250,
        "cached_share": 0.25,
    }
    assert slow["prefill"]["prompt_tokens"] is None
    assert fast["spec_decode"]["acceptance_rate"] == 0.5
    assert fast["spec_decode"]["mean_accepted_length"] == 3.0
    assert slow["proxy"] == {
        "suggestions": 2,
        "shown_chars": 20,
        "matched_chars": 14,
        "matched_share": 0.7,
        "mean_matched_chars": 7.0,
        "exact_share": 0.5,
    }
    assert fast["accepts"]["full"] == 1 and fast["accepts"]["tab_missed"] == 1
    assert fast["accepts"]["accepted_share"] == 0.1
    assert fast["outcomes"]["cancelled_by_editor"] == 1


def test_report_renders_every_arm_and_draws_the_plots(tmp_path: Path) -> None:
    document = data()
    summary = figures.summarise(document)
    names = report.draw(document, summary, tmp_path)
    assert all((tmp_path / name).stat().st_size > 1000 for name in names)
    text = report.render(document, summary, names)
    assert "| `fast` | 100 / 116 / 120 (n=3)" in text
    assert "×4.50" in text  # first ghost, fast against plain
    assert "| 250 / 290 | ×3.40 |" in text  # first line from the engine, and against plain
    assert "750 of 1000 (25%)" in text  # prompt tokens: 1000 prefilled, 250 from the cache
    assert "none" in text  # plain's at-pause p90: the ghost never came
    assert "hole-1" in text and "![latency-cdf.png](latency-cdf.png)" in text
    assert command._finite({"a": [math.inf, 1.0]}) == {"a": [None, 1.0]}


def test_arms_from_profiles_and_settings_variants(tmp_path: Path) -> None:
    args = argparse.Namespace(
        arms=None, profiles="a,b", settings=['slow={"completion": {"debounceMs": 90}}']
    )
    arms = command.arms_from_args(args)
    assert [arm.label for arm in arms] == ["a", "a/slow", "b", "b/slow"]
    assert arms[1].settings == {"completion": {"debounceMs": 90}}
    with pytest.raises(CopilotLspError, match="NAME=JSON"):
        command.arms_from_args(argparse.Namespace(arms=None, profiles="a", settings=["x=[1]"]))
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        '[[arm]]\nlabel = "k8"\nprofile = "local-cpu-suffix"\n'
        "[arm.speculative]\nnum_speculative_tokens = 8\n"
        "[arm.speculative.suffix]\nmax_tree_depth = 16\n"
    )
    (arm,) = command.arms_from_args(argparse.Namespace(arms=sweep))
    assert arm.label == "k8" and arm.speculative["num_speculative_tokens"] == 8
    candidate = tmp_path / "cand-sd6.toml"
    candidate.write_text('name = "eagle-round-6"\n', encoding="utf-8")
    args = argparse.Namespace(arms=None, profiles=f"plain,{candidate}", settings=[])
    assert [arm.label for arm in command.arms_from_args(args)] == ["plain", "eagle-round-6"]
    sweep.write_text(f'[[arm]]\nprofile = "{candidate}"\n')
    (arm,) = command.arms_from_args(argparse.Namespace(arms=sweep))
    assert (arm.label, arm.profile) == ("eagle-round-6", str(candidate))


def _checkout(folder: Path) -> Path:
    (folder / "server" / "copilot_lsp").mkdir(parents=True)
    (folder / "server" / "copilot_lsp" / "__main__.py").write_text("", encoding="utf-8")
    return folder


def test_base_arms_run_another_checkouts_server(tmp_path: Path) -> None:
    base = _checkout(tmp_path / "before")
    args = argparse.Namespace(arms=None, profiles="a@base,a,b", settings=[], base_checkout=base)
    arms = command.arms_from_args(args)
    assert [(arm.label, arm.profile, arm.checkout) for arm in arms] == [
        ("a@base", "a", str(base)),
        ("a", "a", None),
        ("b", "b", None),
    ]
    with pytest.raises(CopilotLspError, match="needs --base-checkout"):
        command.arms_from_args(argparse.Namespace(arms=None, profiles="a@base", settings=[]))
    args.base_checkout = tmp_path
    with pytest.raises(CopilotLspError, match="not a copilot-lsp checkout"):
        command.arms_from_args(args)
    sweep = tmp_path / "arms.toml"
    sweep.write_text('[[arm]]\nprofile = "a"\ncheckout = "before"\n', encoding="utf-8")
    (arm,) = command.arms_from_args(argparse.Namespace(arms=sweep))
    assert arm.checkout == str(base)


def test_a_base_arm_is_reported_by_its_commit_never_its_folder(tmp_path: Path) -> None:
    from copilot_lsp.bench.replay.run import _commit

    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if head.returncode == 0:
        assert _commit(str(REPO)) == head.stdout.strip()
    assert _commit(str(_checkout(tmp_path / "unpacked"))) == "unpacked"
    sample = data()
    sample["arms"][0]["checkout"] = "5521ba3"
    text = report.render(sample, figures.summarise(sample), [])
    assert "commit 5521ba3" in text and "this checkout" in text


def test_prefill_counts_the_cache_as_vllm_does_at_prefill_not_at_admission() -> None:
    from copilot_lsp.bench.replay.run import _cached_metric
    from copilot_lsp.engine.metrics import parse_metrics

    admission = 'vllm:prefix_cache_hits_total{model_name="m"} 900.0\n'
    prefilled = 'vllm:prompt_tokens_cached_total{model_name="m"} 300.0\n'
    assert _cached_metric(parse_metrics(admission + prefilled)) == (
        "vllm:prompt_tokens_cached_total"
    )
    assert _cached_metric(parse_metrics(admission)) == "vllm:prefix_cache_hits_total"
    # vllm:prompt_tokens counts every prefilled prompt token, the cached ones too (vLLM
    # 0.32): 400 prefilled, 300 of them from the cache, so 100 computed.
    assert figures.prefill({"prompt_tokens": 400, "prompt_tokens_cached": 300}) == {
        "prompt_tokens": 400,
        "computed": 100,
        "cached": 300,
        "cached_share": 0.75,
    }


def test_every_arm_and_repeat_gets_an_engine_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Arms on one profile that differ only in server settings must not share an engine: the
    later one would be served from a prefix cache warmed by the same sessions."""
    from contextlib import contextmanager

    from copilot_lsp.bench.replay import run

    started: list[str] = []
    served: list[tuple[str, int]] = []

    @contextmanager
    def engine(arm: run.Arm, endpoints: dict[str, str], log: Any, state_dir: Path) -> Any:
        assert state_dir == tmp_path  # the run's, passed down, never the user's
        started.append(arm.label)
        yield run._Engine("http://x/v1", "http://x", {"start": len(started)})

    async def arm_run(arm: run.Arm, engine: run._Engine, plan: run.Plan) -> dict[str, Any]:
        served.append((arm.label, engine.info["start"]))
        return {"arm": arm.label}

    monkeypatch.setattr(run, "_engine", engine)
    monkeypatch.setattr(run, "_run_arm", arm_run)
    arms = [
        run.Arm("a", "local-cpu-suffix"),
        run.Arm("a/off", "local-cpu-suffix", settings={"completion": {"debounceMs": 0}}),
    ]
    data = run.run_replay(arms, run.Plan([], repeats=2), state_dir=tmp_path, log=lambda _: None)
    assert started == ["a", "a/off", "a", "a/off"]
    assert served == [("a", 1), ("a/off", 2), ("a", 3), ("a/off", 4)]
    assert [arm["engine"] for arm in data["arms"]] == [{"start": 1}, {"start": 2}]
