"""The benchmark's prompt relay: requests read off the byte stream, the prompt's head."""

from __future__ import annotations

import json

from copilot_lsp.bench.crossfile.tap import PromptTap, cross_file_part


def _request(body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    head = f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


def test_requests_split_across_reads_are_recorded_whole_warm_ups_skipped() -> None:
    tap = PromptTap("http://127.0.0.1:8000/v1")
    stream = (
        _request({"prompt": "héad", "max_tokens": 1})
        + _request({"prompt": "x = fo", "max_tokens": 64})
        + _request({"messages": []})
    )
    left = b""
    for start in range(0, len(stream), 7):  # the bytes arrive in small pieces
        left = tap._requests(left + stream[start : start + 7])
    assert left == b""
    assert [(s.prompt, s.max_tokens) for s in tap.sent] == [("héad", 1), ("x = fo", 64)]
    assert tap.completion_since(0) == "x = fo"
    assert tap.completion_since(2) is None
    assert tap.url.startswith("http://127.0.0.1:") and tap.url.endswith("/v1")


def test_the_head_ends_where_the_current_file_starts_in_every_snippet_style() -> None:
    headers = "# pkg/x.py\ndef api(): ...\n\n# app/main.py\nimport pkg\nvalue = "
    assert cross_file_part(headers, "app/main.py") == "# pkg/x.py\ndef api(): ...\n\n# "
    repo = "<|repo_name|>r\n<|file_sep|>pkg/x.py\ndef api(): ...\n<|file_sep|>app/main.py\nv = "
    assert cross_file_part(repo, "app/main.py").endswith("def api(): ...\n<|file_sep|>")
    comments = "# definition (pkg/x.py):\n# def api(): ...\n\nimport pkg\nvalue = api"
    assert cross_file_part(comments, "app/main.py") == comments.split("\n\n")[0]
    assert cross_file_part("import pkg\nvalue = api", "app/main.py") == ""
