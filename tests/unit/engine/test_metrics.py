"""Unit tests for copilot_lsp.engine.metrics: Prometheus parsing and spec-decode figures."""

from __future__ import annotations

import math

import pytest

from copilot_lsp.engine.metrics import Sample, SpecDecodeCounters, parse_metrics, total

EXPOSITION = """\
# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 1234.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 0.0
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 200.0
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 600.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 330.0
# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 170.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 110.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="2"} 50.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="m"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 12.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 12.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 0.5
process_start_time_seconds 1.7e+09
"""


def test_parse_samples_and_labels() -> None:
    samples = parse_metrics(EXPOSITION)
    running = [s for s in samples if s.name == "vllm:num_requests_running"]
    assert running == [
        Sample("vllm:num_requests_running", (("engine", "0"), ("model_name", "m")), 3.0)
    ]
    assert running[0].label("model_name") == "m"
    assert running[0].label("absent") is None
    assert total(samples, "vllm:num_requests_running") == 3.0
    assert total(samples, "process_start_time_seconds") == 1.7e9
    assert total(samples, "no_such_metric") == 0


def test_comments_are_not_samples() -> None:
    samples = parse_metrics(EXPOSITION)
    assert not any(s.name.startswith("#") or s.name in {"HELP", "TYPE"} for s in samples)
    assert len(samples) == 14


def test_labels_are_sorted_and_special_values_parse() -> None:
    samples = parse_metrics(EXPOSITION)
    bucket = next(s for s in samples if s.label("le") == "+Inf")
    assert bucket.labels == (("engine", "0"), ("le", "+Inf"), ("model_name", "m"))
    assert bucket.value == 12.0
    [nan] = parse_metrics("weird_metric NaN\n")
    assert math.isnan(nan.value)
    [inf] = parse_metrics("weird_metric +Inf\n")
    assert inf.value == math.inf


def test_escaped_label_value_and_timestamp() -> None:
    [sample] = parse_metrics('m{path="a\\"b",x="1"} 4.5 1700000000000\n')
    assert sample.value == 4.5
    assert sample.label("path") == 'a"b'  # unescaped, as Prometheus reads it
    assert sample.label("x") == "1"


def test_unparsable_lines_are_skipped() -> None:
    text = 'good 1\nbad value_is_text\n{no_name} 3\n   \nalso_good{a="b"} 2\n'
    samples = parse_metrics(text)
    assert [(s.name, s.value) for s in samples] == [("good", 1.0), ("also_good", 2.0)]


def test_spec_decode_counters_and_summary() -> None:
    counters = SpecDecodeCounters.from_samples(parse_metrics(EXPOSITION))
    assert counters.drafts == 200
    assert counters.draft_tokens == 600
    assert counters.accepted_tokens == 330
    assert dict(counters.accepted_per_position) == {0: 170.0, 1: 110.0, 2: 50.0}
    summary = counters.summary()
    assert summary["acceptance_rate"] == pytest.approx(330 / 600)
    assert summary["acceptance_rate"] == 0.55
    assert summary["mean_accepted_length"] == pytest.approx(1 + 330 / 200)
    assert summary["mean_accepted_length"] == 2.65
    assert summary["drafts"] == 200
    assert summary["draft_tokens"] == 600
    assert summary["accepted_tokens"] == 330
    assert summary["accepted_per_position"] == {"0": 170, "1": 110, "2": 50}


def test_counters_sum_across_engines() -> None:
    text = EXPOSITION + (
        'vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 100.0\n'
        'vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 300.0\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 30.0\n'
        "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        '{engine="1",model_name="m",position="0"} 30.0\n'
    )
    counters = SpecDecodeCounters.from_samples(parse_metrics(text))
    assert counters.drafts == 300
    assert counters.accepted_per_position[0] == 200
    summary = counters.summary()
    assert summary["acceptance_rate"] == pytest.approx(360 / 900, abs=1e-4)
    assert summary["mean_accepted_length"] == pytest.approx(1 + 360 / 300, abs=1e-3)


def test_idle_counters_give_none() -> None:
    idle = (
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 0.0\n'
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 0.0\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 0.0\n'
    )
    summary = SpecDecodeCounters.from_samples(parse_metrics(idle)).summary()
    assert summary["acceptance_rate"] is None
    assert summary["mean_accepted_length"] is None
    assert summary["drafts"] == 0
    assert summary["accepted_per_position"] == {}


def test_no_spec_decode_metrics_at_all() -> None:
    plain = 'vllm:num_requests_running{engine="0",model_name="m"} 1.0\n'
    summary = SpecDecodeCounters.from_samples(parse_metrics(plain)).summary()
    assert summary["acceptance_rate"] is None
    assert summary["mean_accepted_length"] is None


def test_per_position_ignores_bad_positions() -> None:
    text = (
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="x"} 5\n'
        "vllm:spec_decode_num_accepted_tokens_per_pos_total 5\n"
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="3"} 2\n'
    )
    counters = SpecDecodeCounters.from_samples(parse_metrics(text))
    assert dict(counters.accepted_per_position) == {3: 2.0}
