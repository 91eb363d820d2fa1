"""A streaming assistant reply, rendered as markdown while it arrives.

Imported lazily (Textual's Markdown widget costs ~25 ms to import), so the
first frame does not pay for it.
"""

from __future__ import annotations

import asyncio

from textual.timer import Timer
from textual.widgets import Markdown

from planshell.ui.widgets.messages import ReplyEntry, clean

FLUSH_INTERVAL = 0.05  # seconds between markdown updates while streaming
SLOW_FLUSH_INTERVAL = 0.25  # for very long replies, where each update re-lays out more


def flush_interval(length: int) -> float:
    """Every update re-lays out the reply: long replies update less often."""
    return min(SLOW_FLUSH_INTERVAL, FLUSH_INTERVAL * (1 + length // 8_000))


class AssistantMessage(Markdown, ReplyEntry):
    """Model text rendered as markdown while it streams.

    Deltas are buffered and appended in one go at most every
    ``FLUSH_INTERVAL`` (one ``Markdown.append`` per token falls behind fast
    streams), and only one append is in flight at a time.
    """

    def __init__(self, text: str = "", *, finished: bool = False) -> None:
        text = clean(text)
        super().__init__(text, classes="assistant")
        self._pending: list[str] = []
        self._timer: Timer | None = None
        self._flushing = False
        self.finished = finished
        self._parts: list[str] = [text] if text else []
        self._length = len(text)
        # Markdown renders its initial text in its own mount handler; appending
        # before that has run would be wiped out, so wait for it.
        self._ready = asyncio.Event()

    def on_mount(self) -> None:
        # Runs before Markdown's mount handler; call_next runs after all of them.
        self.call_next(self._ready.set)

    @property
    def full_text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def feed(self, delta: str) -> None:
        delta = clean(delta)
        if not delta:
            return
        self._parts.append(delta)  # joined on demand: += on a long reply is quadratic
        self._length += len(delta)
        self._pending.append(delta)
        if self._timer is None and not self._flushing:
            self._timer = self.set_timer(flush_interval(self._length), self._flush)

    async def _flush(self) -> None:
        self._timer = None
        if not self._ready.is_set():
            if not self.finished:
                self._timer = self.set_timer(FLUSH_INTERVAL, self._flush)
            return
        if self._flushing or not self._pending:
            return
        chunk = "".join(self._pending)
        self._pending.clear()
        self._flushing = True
        try:
            await self.append(chunk)
        finally:
            self._flushing = False
        if self._pending and self._timer is None and not self.finished:
            self._timer = self.set_timer(flush_interval(self._length), self._flush)

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming and show exactly ``final_text`` (the engine's reply)."""
        self.finished = True
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        await self._ready.wait()
        while self._flushing:
            await self._wait_idle()
        final = clean(final_text) if final_text is not None else self.full_text
        if final != self.full_text:
            self._parts = [final]
            self._pending.clear()
            await self.update(final)
        elif self._pending:
            chunk = "".join(self._pending)
            self._pending.clear()
            await self.append(chunk)

    async def _wait_idle(self) -> None:
        await asyncio.sleep(0.005)
