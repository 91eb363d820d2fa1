"""Review coverage: which sections of a plan the reviewer actually had on screen, and for how long.

A plan approved without being read is approved blind. The review view reports
what it shows (:meth:`ReviewCoverage.observe`: for each section on screen, the
rows of it that are visible and how many rows it has at the current width);
this module keeps the record, headless (no Textual), with an injected clock.

The rule, kept simple so it can be stated honestly: **a section is seen once
every one of its rows has been on screen at some point** (not necessarily at
once: a section taller than the screen is seen after scrolling through it). A
section with no rows (an empty preamble) counts as seen. Rows are counted at
the width they were shown at: when a section's height changes (a resize
reflows it), the rows seen of it so far are forgotten, but a section once seen
stays seen. A folded section is not reported by the view, so it never becomes
seen while folded. Time on screen is recorded per section (``dwell``), for the
record; it does not decide anything.

Consequences the review relies on: a plan that fits the screen is fully seen on
its first frame, and a plan that does not fit always has an unseen last section
on its first frame, so approving from there always asks first.

:meth:`carry_over` moves the record to a new revision of the same plan: a
section whose text is unchanged (same digest) stays seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["ReviewCoverage", "VisibleSection", "unseen_question"]


@dataclass(frozen=True)
class VisibleSection:
    """Rows ``first..last`` (inclusive, 0-based inside the section) of section ``index`` are on
    screen; the section has ``height`` rows at the current width."""

    index: int
    first: int
    last: int
    height: int


class ReviewCoverage:
    """The per-section record of what was on screen (see the module docstring for the rule)."""

    def __init__(
        self,
        count: int,
        *,
        keys: Sequence[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._count = count
        self._keys = list(keys) if keys is not None else [str(i) for i in range(count)]
        self._clock = clock
        self._seen = [False] * count
        self._rows: list[set[int]] = [set() for _ in range(count)]
        self._heights = [-1] * count
        self._dwell = [0.0] * count
        self._on_screen: tuple[int, ...] = ()
        self._since: float | None = None

    # -- recording

    def observe(self, visible: Iterable[VisibleSection]) -> None:
        """What is on screen now; time since the last call is credited to what was on screen."""
        now = self._clock()
        if self._since is not None:
            elapsed = max(0.0, now - self._since)
            for index in self._on_screen:
                self._dwell[index] += elapsed
        self._since = now
        on_screen: list[int] = []
        for part in visible:
            index = part.index
            if not 0 <= index < self._count:
                continue
            on_screen.append(index)
            if self._seen[index]:
                continue
            if part.height <= 0:
                self._seen[index] = True
                continue
            if part.height != self._heights[index]:
                self._heights[index] = part.height
                self._rows[index].clear()  # reflowed: rows of another width say nothing
            first, last = max(0, part.first), min(part.height - 1, part.last)
            rows = self._rows[index]
            rows.update(range(first, last + 1))
            if len(rows) >= part.height:
                self._seen[index] = True
                rows.clear()
        self._on_screen = tuple(on_screen)

    def mark_seen(self, indices: Iterable[int]) -> None:
        """Sections seen elsewhere (the browser review scrolled them into view)."""
        for index in indices:
            if 0 <= index < self._count:
                self._seen[index] = True

    def pause(self) -> None:
        """Nothing is on screen from now on (another screen covers the review)."""
        self.observe(())

    # -- reading

    def __len__(self) -> int:
        return self._count

    def seen(self, index: int) -> bool:
        return 0 <= index < self._count and self._seen[index]

    @property
    def seen_flags(self) -> tuple[bool, ...]:
        return tuple(self._seen)

    def unseen(self) -> list[int]:
        """Indices of the sections not seen yet, top to bottom."""
        return [index for index, seen in enumerate(self._seen) if not seen]

    @property
    def complete(self) -> bool:
        return all(self._seen)

    def dwell(self, index: int) -> float:
        """Seconds section ``index`` has been on screen (up to the last observation)."""
        return self._dwell[index] if 0 <= index < self._count else 0.0

    def next_unseen(self, after: int) -> int | None:
        """The first unseen section below ``after``, wrapping to the top; None when all are seen."""
        if not self._count:
            return None
        for step in range(1, self._count + 1):
            index = (after + step) % self._count
            if not self._seen[index]:
                return index
        return None

    def carry_over(
        self, keys: Sequence[str], *, clock: Callable[[], float] | None = None
    ) -> ReviewCoverage:
        """A record for a new revision whose sections have ``keys``: unchanged sections stay seen."""
        seen_keys = {key for key, seen in zip(self._keys, self._seen, strict=True) if seen}
        new = ReviewCoverage(len(keys), keys=keys, clock=clock or self._clock)
        new.mark_seen(index for index, key in enumerate(keys) if key in seen_keys)
        return new


def unseen_question(titles: Sequence[str], limit: int = 4) -> str:
    """ "Not viewed: Risks, Verification — approve anyway?" (at most ``limit`` names, then a count)."""
    names = [title or "(untitled)" for title in titles]
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f" and {len(names) - limit} more"
    return f"Not viewed: {shown} — approve anyway?"
