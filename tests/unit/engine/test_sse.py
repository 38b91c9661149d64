"""Unit tests for copilot_lsp.engine.sse: the server-sent-events decoder."""

from __future__ import annotations

from copilot_lsp.engine.sse import DONE, SSEDecoder


def decode(lines: list[str], flush: bool = True) -> list[str]:
    decoder = SSEDecoder()
    events = [payload for line in lines for payload in decoder.feed(line)]
    if flush:
        events.extend(decoder.flush())
    return events


def test_single_data_line() -> None:
    assert decode(['data: {"a": 1}', ""]) == ['{"a": 1}']


def test_event_is_only_emitted_at_the_blank_line() -> None:
    decoder = SSEDecoder()
    assert list(decoder.feed("data: x")) == []
    assert list(decoder.feed("")) == ["x"]
    assert list(decoder.feed("")) == []  # a second blank line dispatches nothing


def test_multi_line_data_joined_with_newline() -> None:
    assert decode(["data: first", "data: second", "data:third", ""]) == ["first\nsecond\nthird"]


def test_several_events() -> None:
    lines = ["data: 1", "", "data: 2", "", "data: [DONE]", ""]
    assert decode(lines) == ["1", "2", DONE]


def test_comments_are_skipped() -> None:
    lines = [": keep-alive", "data: a", ":another comment", "", ": ping", ""]
    assert decode(lines) == ["a"]


def test_other_fields_are_ignored() -> None:
    lines = ["event: completion", "id: 42", "retry: 1000", "data: payload", "", "event: x", ""]
    assert decode(lines) == ["payload"]


def test_data_with_and_without_space() -> None:
    assert decode(["data:nospace", ""]) == ["nospace"]
    assert decode(["data: space", ""]) == ["space"]
    # only one leading space is removed
    assert decode(["data:  two", ""]) == [" two"]
    assert decode(["data:", ""]) == [""]


def test_colon_inside_data_is_kept() -> None:
    assert decode(['data: {"url": "http://x:1"}', ""]) == ['{"url": "http://x:1"}']


def test_crlf_line_endings() -> None:
    lines = ["data: one\r\n", "data: two\r", "\r\n", "data: three\r\n", "\r"]
    assert decode(lines) == ["one\ntwo", "three"]


def test_field_named_like_data_prefix_is_not_data() -> None:
    assert decode(["dataset: x", "data_x: y", "Data: z", ""]) == []


def test_flush_emits_final_event_without_blank_line() -> None:
    decoder = SSEDecoder()
    assert list(decoder.feed("data: last")) == []
    assert list(decoder.feed("data: part")) == []
    assert list(decoder.flush()) == ["last\npart"]
    assert list(decoder.flush()) == []


def test_flush_after_complete_event_is_empty() -> None:
    assert decode(["data: a", ""], flush=False) == ["a"]
    decoder = SSEDecoder()
    list(decoder.feed("data: a"))
    list(decoder.feed(""))
    assert list(decoder.flush()) == []
