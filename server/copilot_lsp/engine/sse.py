"""Incremental decoder for server-sent events, as OpenAI-compatible servers stream them."""

from __future__ import annotations

from collections.abc import Iterator

DONE = "[DONE]"


class SSEDecoder:
    """Turns lines (without their line breaks) into the `data` payloads of complete events.

    Events end at a blank line; several `data:` lines in one event are joined with newlines;
    comment lines (starting with ':') and other fields (`event:`, `id:`, `retry:`) are skipped.
    """

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> Iterator[str]:
        line = line.rstrip("\r\n")
        if not line:
            if self._data:
                payload = "\n".join(self._data)
                self._data = []
                yield payload
            return
        if line.startswith(":"):
            return
        field, _, value = line.partition(":")
        if field != "data":
            return
        self._data.append(value[1:] if value.startswith(" ") else value)

    def flush(self) -> Iterator[str]:
        """The event still open when the stream ended without a final blank line."""
        if self._data:
            payload = "\n".join(self._data)
            self._data = []
            yield payload
