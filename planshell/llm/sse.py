"""An incremental Server-Sent Events decoder (WHATWG event-stream rules).

Network reads split the stream at arbitrary bytes, including inside a UTF-8
character or between the CR and LF of a line ending, so the decoder keeps both
an incremental UTF-8 decoder and a partial-line buffer between ``feed`` calls.
An event is only emitted once its terminating blank line has arrived; a final
event without one is incomplete and is never emitted, which lets the caller
notice a truncated stream.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: ``data`` lines are joined with ``\\n``."""

    event: str = "message"
    data: str = ""
    id: str | None = None


class SSEDecoder:
    """Feed raw bytes, get back the events they complete."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []  # text of the current, unterminated line
        self._skip_lf = False  # the last chunk ended in CR; a leading LF belongs to it
        self._at_start = True  # a byte-order mark is only skipped at the very start
        self._event = ""
        self._data: list[str] = []
        self._has_fields = False
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    @property
    def has_partial_event(self) -> bool:
        """True when buffered input has not yet completed an event."""
        return bool(self._parts) or self._has_fields

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return every event it completes, in order."""
        text = self._utf8.decode(chunk)
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if self._skip_lf and text:
            self._skip_lf = False
            text = text.removeprefix("\n")
        if not text:
            return []
        if "\n" not in text and "\r" not in text:
            self._parts.append(text)
            return []
        buffered = "".join(self._parts) + text
        *lines, rest = _LINE_END.split(buffered)
        self._parts = [rest] if rest else []
        self._skip_lf = buffered.endswith("\r")
        events: list[SSEEvent] = []
        for line in lines:
            event = self._process_line(line)
            if event is not None:
                events.append(event)
        return events

    def _process_line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self._has_fields = True
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event, self._has_fields = [], "", False
        if not data:
            return None  # per spec, an event without data lines is not dispatched
        return SSEEvent(event=event or "message", data="\n".join(data), id=self.last_event_id)


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncGenerator[SSEEvent, None]:
    """Turn an async byte stream into complete SSE events.

    Closing this generator closes ``chunks`` too (when it can be closed), so
    an abandoned stream does not linger until garbage collection.
    """
    decoder = SSEDecoder()
    try:
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                yield event
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
