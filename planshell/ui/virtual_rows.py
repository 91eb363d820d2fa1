"""Heights and row offsets of a list of blocks, for views that draw only what is on screen.

The plan view (sections) and the transcript (entries) are Line-API views over
blocks that each render to some rows at a width. Rendering every block to learn
its height would cost what those views exist to avoid, so a block's height is an
*estimate* until it is *measured* (rendered once); :class:`VirtualRows` keeps
both kinds, the prefix sum of offsets, and answers "which block is on row r".

Pure Python, no Textual: the widgets decide when to measure, this only keeps
the books (and is tested on its own, ``tests/ui/test_virtual_rows.py``).

Offsets are recomputed lazily and only as far as they are read: a change to
block ``i`` leaves rows above it valid, so streaming into the last block or
measuring sections in order from the top costs O(1) per change, not O(n).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, islice
from typing import NamedTuple

__all__ = ["Anchor", "VirtualRows"]


class Anchor(NamedTuple):
    """Where a row sits: in ``block``, ``inside`` rows below its top, the block ``height`` tall.

    Taken before heights change (a resize, a measurement) so the same content can be
    put back on that row afterwards.
    """

    block: int
    inside: int
    height: int

    @property
    def fraction(self) -> float:
        """How far down its block the row is: survives a change of width, where rows do not."""
        return self.inside / max(1, self.height)


class VirtualRows:
    """Heights of blocks (estimated or exact) and the row each block starts on.

    A block is exact once :meth:`measure` recorded its rendered height for a
    ``tag`` (say, the block's version); :meth:`is_exact` asks about a tag, so a
    block that changed since is seen as stale without telling this class.
    """

    __slots__ = ("_heights", "_offsets", "_prefix", "_tags", "_valid")

    def __init__(self, heights: Iterable[int] = ()) -> None:
        self._heights: list[int] = list(heights)
        self._tags: list[object] = [None] * len(self._heights)  # None: an estimate
        self._offsets: list[int] = [0] * (len(self._heights) + 1)
        self._valid = 0  # offsets[: valid + 1] are correct
        self._prefix = 0  # blocks[:prefix] are all exact

    # -- reading

    def __len__(self) -> int:
        return len(self._heights)

    def height(self, index: int) -> int:
        return self._heights[index]

    def offset(self, index: int) -> int:
        """First row of block ``index`` (``len(self)``: the total); syncs offsets only that far."""
        if index > self._valid:
            self._sync(index)
        return self._offsets[index]

    @property
    def total(self) -> int:
        """Rows of all blocks (exact only when every block is)."""
        return self.offset(len(self._heights))

    @property
    def offsets(self) -> Sequence[int]:
        """First row of every block, then the total (a live list: read, do not keep)."""
        self._sync(len(self._heights))
        return self._offsets

    def index_at(self, row: int) -> int:
        """Block that holds ``row``, clamped to the first and last (0 when there are none)."""
        count = len(self._heights)
        if self._valid < count:
            self._sync(count)
        index = bisect_right(self._offsets, row) - 1
        if index < 0 or not count:
            return 0
        return min(index, count - 1)

    def locate(self, row: int) -> tuple[int, int]:
        """(block, row inside it) of ``row``; the block is clamped as in :meth:`index_at`."""
        index = self.index_at(row)
        return index, row - self._offsets[index]

    def anchor(self, row: int) -> Anchor | None:
        """What is on ``row``, to put back with :meth:`row_of` / :meth:`scaled_row_of`."""
        if not self._heights:
            return None
        index, inside = self.locate(row)
        return Anchor(index, inside, self._heights[index])

    def row_of(self, anchor: Anchor) -> int:
        """The row of ``anchor`` now: same rows inside its block (kept inside the block)."""
        height = self._heights[anchor.block]
        return self.offset(anchor.block) + min(anchor.inside, max(0, height - 1))

    def scaled_row_of(self, anchor: Anchor) -> int:
        """The row of ``anchor`` after a change of width: same fraction of its block."""
        height = self._heights[anchor.block]
        inside = min(round(anchor.fraction * height), max(0, height - 1))
        return self.offset(anchor.block) + inside

    # -- exact and estimated heights

    def is_exact(self, index: int, tag: object = True) -> bool:
        """Whether block ``index`` was measured for ``tag`` (and not invalidated since)."""
        return self._tags[index] == tag

    @property
    def exact_prefix(self) -> int:
        """How many blocks from the top are exact (for views that measure in order)."""
        return self._prefix

    @property
    def complete(self) -> bool:
        """Every block is exact."""
        return self._prefix >= len(self._heights)

    def measure(self, index: int, height: int, tag: object = True) -> None:
        """Record the rendered height of block ``index`` (for ``tag``, not None)."""
        self._set(index, height)
        self._tags[index] = tag
        if index == self._prefix:
            tags, prefix, count = self._tags, self._prefix + 1, len(self._tags)
            while prefix < count and tags[prefix] is not None:
                prefix += 1
            self._prefix = prefix

    def invalidate(self, index: int) -> None:
        """Block ``index`` changed: its height is an estimate until it is measured again."""
        self._tags[index] = None
        self._prefix = min(self._prefix, index)

    def rescale(self, old_width: int, new_width: int, estimate: Callable[[int], int]) -> None:
        """The width changed: every height becomes an estimate again.

        A height measured at ``old_width`` is scaled by ``old_width / new_width``
        (text reflows roughly in proportion: close enough until it is measured
        again); without an old width, ``estimate(index)`` is asked. Estimates
        that were never measured stay as they are.
        """
        heights, tags = self._heights, self._tags
        factor = max(1, old_width) / max(1, new_width)
        for index, tag in enumerate(tags):
            if tag is not None:
                heights[index] = (
                    max(1, round(heights[index] * factor)) if old_width else estimate(index)
                )
                tags[index] = None
        self._prefix = 0
        self._valid = 0

    # -- the list

    def insert(self, index: int, height: int) -> None:
        """A new block at ``index`` with an estimated ``height``."""
        self._heights.insert(index, height)
        self._tags.insert(index, None)
        self._offsets.append(0)
        self._valid = min(self._valid, index)
        self._prefix = min(self._prefix, index)

    def insert_many(self, index: int, heights: Sequence[int]) -> None:
        """New blocks at ``index`` with estimated ``heights`` (one list move, not one per block)."""
        if not heights:
            return
        self._heights[index:index] = heights
        self._tags[index:index] = [None] * len(heights)
        self._offsets.extend([0] * len(heights))
        self._valid = min(self._valid, index)
        self._prefix = min(self._prefix, index)

    def keep(self, indices: Iterable[int]) -> None:
        """Keep only the blocks at ``indices`` (ascending), dropping the others."""
        kept = list(indices)
        self._heights = [self._heights[i] for i in kept]
        self._tags = [self._tags[i] for i in kept]
        self._offsets = [0] * (len(kept) + 1)
        self._valid = 0
        prefix = 0
        while prefix < len(kept) and self._tags[prefix] is not None:
            prefix += 1
        self._prefix = prefix

    # -- inside

    def _set(self, index: int, height: int) -> None:
        if self._heights[index] != height:
            self._heights[index] = height
            self._valid = min(self._valid, index)

    def _sync(self, upto: int) -> None:
        """Make ``offsets[: upto + 1]`` correct, from the last correct one."""
        start = self._valid
        if upto <= start:
            return
        if upto == start + 1:  # the common step: measuring in order, one block at a time
            self._offsets[upto] = self._offsets[start] + self._heights[start]
            self._valid = upto
            return
        run = accumulate(islice(self._heights, start, upto), initial=self._offsets[start])
        next(run)  # offsets[start] itself
        self._offsets[start + 1 : upto + 1] = run
        self._valid = upto
