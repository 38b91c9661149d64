"""The exposition format's corners that a regex got wrong: `}` and escapes in label values."""

from __future__ import annotations

from copilot_lsp.engine.metrics import SpecDecodeCounters, parse_metrics, total


def test_a_label_value_holding_a_brace_keeps_its_sample() -> None:
    text = (
        "# TYPE vllm:spec_decode_num_drafts_total counter\n"
        'vllm:spec_decode_num_drafts_total{model_name="odd}name",engine="0"} 7.0\n'
        'vllm:spec_decode_num_drafts_total{model_name="plain",engine="1"} 3.0\n'
    )
    samples = parse_metrics(text)
    assert total(samples, "vllm:spec_decode_num_drafts_total") == 10.0
    assert {s.label("model_name") for s in samples} == {"odd}name", "plain"}


def test_escaped_quotes_backslashes_and_newlines_are_unescaped() -> None:
    text = 'm{path="C:\\\\models\\\\q",note="say \\"hi\\"\\nbye",pos="1"} 2 1700000000000\n'
    [sample] = parse_metrics(text)
    assert sample.label("path") == "C:\\models\\q"
    assert sample.label("note") == 'say "hi"\nbye'
    assert sample.value == 2.0


def test_per_position_counts_survive_braces_in_other_labels() -> None:
    text = (
        "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        '{model_name="/models/{qwen}",position="0"} 5\n'
        "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        '{model_name="/models/{qwen}",position="1"} 2\n'
    )
    counters = SpecDecodeCounters.from_samples(parse_metrics(text))
    assert dict(counters.accepted_per_position) == {0: 5.0, 1: 2.0}


def test_one_bad_line_costs_only_that_line() -> None:
    text = 'good{a="x}y"} 1\nbad value_is_text\nalso_good 2\n'
    assert [(s.name, s.value) for s in parse_metrics(text)] == [("good", 1.0), ("also_good", 2.0)]
