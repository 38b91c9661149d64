"""Keep trailing whitespace out of the prompt, and map the model's output back to the cursor.

Tokenizers merge a newline with the indentation that follows it; a prompt that ends in
"\\n    " therefore ends mid-token, and small models answer it badly (an extra space, or a
new top-level definition). So the prompt stops at the last non-blank character, and the
whitespace held back is matched against the start of the model's output: what the user
already typed is dropped, what the model adds on top is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

_BLANK = " \t\r\n"


def split_trailing_whitespace(prefix: str) -> tuple[str, str]:
    """`prefix` without its trailing whitespace, and that whitespace."""
    stripped = prefix.rstrip(_BLANK)
    return stripped, prefix[len(stripped) :]


@dataclass(slots=True)
class WhitespaceAligner:
    """Feed streamed text; get back text positioned at the cursor instead of the prompt end."""

    held: str
    _pending: str = ""
    _aligned: bool = False
    misaligned: bool = False
    """The model went on with the line the prompt ended on; its text does not fit the cursor."""

    def feed(self, text: str) -> str:
        if self.misaligned:
            return ""
        if self._aligned:
            return text
        self._pending += text
        rest = self._pending.lstrip(_BLANK)
        if not rest:
            return ""  # still inside the leading whitespace: wait for more
        return self._align(self._pending[: len(self._pending) - len(rest)], rest)

    def flush(self) -> str:
        """End of stream while still inside whitespace: nothing to show."""
        if self._aligned:
            return ""
        self._aligned = True
        return ""

    def _align(self, leading: str, rest: str) -> str:
        self._aligned = True
        held = self.held.replace("\r", "")
        leading = leading.replace("\r", "")
        if not held:
            return leading + rest
        if "\n" in held:
            if "\n" not in leading:
                self.misaligned = True
                return ""
            cursor_indent = held.rsplit("\n", 1)[1]
            new_lines = leading.count("\n") - held.count("\n")
            new_indent = leading.rsplit("\n", 1)[1]
            if new_lines <= 0 and new_indent.startswith(cursor_indent):
                return new_indent[len(cursor_indent) :] + rest
            # The model put the code elsewhere than the cursor line: keep its layout, relative
            # to the cursor, and let the block cutter judge whether it belongs to the block.
            return "\n" * max(new_lines, 1) + new_indent + rest
        common = 0
        while common < min(len(held), len(leading)) and held[common] == leading[common]:
            common += 1
        return leading[common:] + rest
