"""`bench nextedit --window ABOVE,BELOW`: two line counts in the settings' bounds, or a
clear error."""

from __future__ import annotations

import argparse
import re

import pytest

from copilot_lsp.bench.nextedit.command import window_lines


def test_two_line_counts() -> None:
    assert window_lines("5,5") == (5, 5)
    assert window_lines("0,100") == (0, 100)


@pytest.mark.parametrize("value", ["5", "5,5,5", "a,b", "", "-1,3", "3,101"])
def test_anything_else_is_refused_with_its_value(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(repr(value))):
        window_lines(value)
