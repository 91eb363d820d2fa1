"""A streaming assistant reply: markdown rows from the shared engine.

Deltas are buffered by the transcript and appended in one go (at most every
``FLUSH_INTERVAL``); the :class:`~planshell.markdown.MarkdownStream` re-parses
only the last open block, and rows are cached per block and width, so an
append costs the last block, not the whole reply.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from planshell.markdown import MarkdownStream, render_block
from planshell.ui.widgets.messages import Entry, Look, clean

FLUSH_INTERVAL = 0.05  # seconds between markdown updates while streaming
LEFT = 2  # columns of padding left of the reply
RIGHT = 1


class AssistantMessage(Entry):
    """Model text rendered as markdown while it streams."""

    kind = "assistant"

    def __init__(self, text: str = "", *, finished: bool = False) -> None:
        super().__init__()
        self._text = clean(text)  # the text while no stream is held (finished replies)
        self._stream: MarkdownStream | None = None if finished else MarkdownStream(self._text)
        self.finished = finished
        self._pending: list[str] = []
        self._blocks: dict[int, tuple[int, int, list[Strip]]] = {}  # key -> (width, gen, strips)

    @property
    def stream(self) -> MarkdownStream:
        """Parsed blocks; a finished reply parses on demand and forgets them with its rows."""
        if self._stream is None:
            self._stream = MarkdownStream(self._text)
        return self._stream

    @property
    def full_text(self) -> str:
        text = self._stream.text if self._stream is not None else self._text
        return text + "".join(self._pending)

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def feed(self, delta: str) -> None:
        """Buffer ``delta``; :meth:`flush` parses it (the transcript times flushes)."""
        if delta:
            self._pending.append(delta)

    def flush(self) -> bool:
        if not self._pending:
            return False
        chunk = "".join(self._pending)
        self._pending.clear()
        self.stream.append(chunk)
        self.touch()
        return True

    def finish(self, final_text: str | None = None) -> None:
        """Stop streaming and show exactly ``final_text`` (the engine's reply)."""
        self.finished = True
        self.flush()
        if final_text is not None:
            final = clean(final_text)
            if final != self.stream.text:
                self.stream.replace(final)
                self._blocks.clear()
        self.touch()

    def estimate(self, width: int) -> int:
        text = self.full_text
        return 1 + text.count("\n") + len(text) // max(20, width * 2)

    def drop_cache(self) -> None:
        super().drop_cache()
        if self.finished and not self._pending:
            # Tokens and rows are the heavy part: keep only the text.
            self._text = self.full_text
            self._stream = None
            self._blocks.clear()

    def build(self, width: int, look: Look) -> list[Strip]:
        inner = max(1, width - LEFT - RIGHT)
        base = look.base
        blank = Strip.blank(width, base)
        pad = Segment(" " * LEFT, base)
        out: list[Strip] = [blank]
        live: dict[int, tuple[int, int, list[Strip]]] = {}
        blocks = self.stream.blocks
        for number, block in enumerate(blocks):
            cached = self._blocks.get(block.key)
            if cached is not None and cached[0] == width and cached[1] == look.generation:
                strips = cached[2]
            else:
                rows = render_block(block, inner, look.markdown)
                strips = [Strip([pad, *row.segments]).crop_extend(0, width, base) for row in rows]
            live[block.key] = (width, look.generation, strips)
            if number:
                out.append(blank)
            out.extend(strips)
        self._blocks = live
        return out

    def plain(self) -> str:
        return self.full_text
