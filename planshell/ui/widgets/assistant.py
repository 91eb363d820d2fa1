"""A streaming assistant reply: markdown rows from the shared engine.

Deltas are buffered by the transcript and appended in one go (at most every
``FLUSH_INTERVAL``); the :class:`~planshell.markdown.MarkdownStream` re-parses
only the last open block, and block heights are cached per block and width, so
an append costs the last block, not the whole reply.

Rows are drawn on demand (:class:`_Rows`): the reply keeps each block's height,
and strips only for the few blocks last read. A 600 KB answer drawn whole held
~400,000 Segment, Strip and cache objects, and every full garbage collection
walked them all (stalls of up to a second while streaming at 5,000 deltas/s).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from typing import overload

from rich.segment import Segment
from textual.strip import Strip

from planshell.markdown import MarkdownStream, render_block
from planshell.ui.widgets.messages import Entry, Look, clean

FLUSH_INTERVAL = 0.05  # seconds between markdown updates while streaming
LEFT = 2  # columns of padding left of the reply
RIGHT = 1
_DRAWN_BLOCKS = 64  # blocks of one reply whose strips stay built


class AssistantMessage(Entry):
    """Model text rendered as markdown while it streams."""

    kind = "assistant"

    def __init__(self, text: str = "", *, finished: bool = False) -> None:
        super().__init__()
        self._text = clean(text)  # the text while no stream is held (finished replies)
        self._stream: MarkdownStream | None = (
            None if finished else MarkdownStream(self._text, compact=True)
        )
        self.finished = finished
        self._pending: list[str] = []
        self._heights: dict[int, tuple[int, int, int]] = {}  # block key -> (width, gen, rows)
        self._drawn: OrderedDict[tuple[int, int, int], list[Strip]] = OrderedDict()

    @property
    def stream(self) -> MarkdownStream:
        """Parsed blocks; a finished reply parses on demand and forgets them with its rows."""
        if self._stream is None:
            self._stream = MarkdownStream(self._text, compact=True)
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
                self._heights.clear()
                self._drawn.clear()
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
            self._heights.clear()
            self._drawn.clear()

    def build(self, width: int, look: Look) -> Sequence[Strip]:  # type: ignore[override]
        """Heights of every block (rendering only those not known at this width)."""
        starts: list[int] = []
        row = 1  # a blank row first, and one between blocks
        heights: dict[int, tuple[int, int, int]] = {}
        keys = self.stream.keys
        for number, key in enumerate(keys):
            if number:
                row += 1
            known = self._heights.get(key)
            if known is None or known[0] != width or known[1] != look.generation:
                height = len(self._draw(key, number, width, look))
                known = (width, look.generation, height)
            heights[key] = known
            starts.append(row)
            row += known[2]
        self._heights = heights
        return _Rows(self, width, look, keys, starts, row)

    def _draw(self, key: int, number: int, width: int, look: Look) -> list[Strip]:
        """Strips of block ``number`` (its ``key``), from the small cache or drawn now."""
        cache_key = (key, width, look.generation)
        strips = self._drawn.get(cache_key)
        if strips is not None:
            self._drawn.move_to_end(cache_key)
            return strips
        base = look.base
        pad = Segment(" " * LEFT, base)
        block = self.stream.block(number)
        if not block.tokens:
            return []
        rows = render_block(block, max(1, width - LEFT - RIGHT), look.markdown)
        strips = [Strip([pad, *row.segments]).crop_extend(0, width, base) for row in rows]
        self._drawn[cache_key] = strips
        while len(self._drawn) > _DRAWN_BLOCKS:
            self._drawn.popitem(last=False)
        return strips

    def plain(self) -> str:
        return self.full_text


class _Rows(Sequence[Strip]):
    """A reply's rows at one width: blank rows between blocks, block rows drawn when read."""

    def __init__(
        self,
        message: AssistantMessage,
        width: int,
        look: Look,
        keys: list[int],
        starts: list[int],
        total: int,
    ) -> None:
        self._message = message
        self._keys = keys  # each block's key (the stream's, when these rows were built)
        self._width = width
        self._look = look
        self._starts = starts  # first row of each block
        self._total = total
        self._blank = Strip.blank(width, look.base)

    def __len__(self) -> int:
        return self._total

    @overload
    def __getitem__(self, index: int) -> Strip: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Strip]: ...

    def __getitem__(self, index: int | slice) -> Strip | Sequence[Strip]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._total))]
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError(index)
        number = bisect_right(self._starts, index) - 1
        if number < 0:
            return self._blank
        strips = self._message._draw(self._keys[number], number, self._width, self._look)
        inside = index - self._starts[number]
        return strips[inside] if inside < len(strips) else self._blank
