"""The manifests' YAML writer: whatever it writes, a YAML reader reads back unchanged."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_lsp.serving.yaml_text import dump

TRICKY = [
    "", " ", "yes", "No", "on", "null", "~", "8000", "0.9", "1e5", "0x1F", "0o17", "0b101",
    "1_000", "1:20", ".inf", "-.5", "2026-06-23", "=", "<<", "-", "--", "---", "--port",
    "a: b", "a:", "#x", "x #y", "it's", '{"method":"eagle"}', "$(VLLM_API_KEY)",
    "${VLLM_API_KEY:?set it in .env}", "[gpu]", "*ref", "&anchor", "!tag", "@x", "`x`",
    "%x", "|", ">", "line\nbreak", "tab\there", "é", "漢字", "\x85", "trailing ",
    "app.kubernetes.io/name=vllm", "nvidia.com/gpu", "1200s",
]  # fmt: skip

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12) | st.sampled_from(TRICKY)
values: Any = st.recursive(
    text | st.integers(-(2**40), 2**40) | st.booleans(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


# No deadline: a slow example on a loaded machine is not a wrong one (it failed once at load 8).
@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.dictionaries(text, values, max_size=5))
def test_dump_reads_back_unchanged(value: dict[str, Any]) -> None:
    assert yaml.safe_load(dump(value)) == (value or {})


def test_tricky_strings_each_read_back() -> None:
    for item in TRICKY:
        assert yaml.safe_load(dump({item: [item, {"k": item}]})) == {item: [item, {"k": item}]}


def test_arguments_stay_readable() -> None:
    written = dump({"args": ["--port", "8000", '{"a":1}', "$(KEY)"]})
    assert written == "args:\n- --port\n- '8000'\n- '{\"a\":1}'\n- $(KEY)\n"
