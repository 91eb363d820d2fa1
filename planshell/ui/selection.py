"""Text selection for the Line-API views (the plan view and the transcript).

Both draw rows with offsets (character, absolute row), so the screen maps a
mouse drag to a :class:`~textual.selection.Selection`; these two helpers turn
it into highlighted strips and copied text. ``skip`` columns on the left (a
gutter) are never highlighted nor copied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.selection import Selection
from textual.strip import Strip


def highlight(strip: Strip, span: tuple[int, int], style: Style, skip: int = 0) -> Strip:
    """``strip`` with characters ``span`` (end -1: to the end) drawn in ``style``."""
    text = strip.text
    start, end = span
    start = max(start, skip)
    end = len(text) if end == -1 else min(end, len(text))
    if start >= end:
        return strip
    cuts = [cell_len(text[:start]), cell_len(text[:end]), strip.cell_length]
    before, inside, after = strip.divide(cuts)
    inside = Strip(Segment.apply_style(inside, post_style=style), inside.cell_length)
    return Strip.join([before, inside, after])


def selected_rows(
    selection: Selection, total: int, rendered_line: Callable[[int], str], skip: int = 0
) -> Iterator[tuple[int, str]]:
    """Each row of ``0..total-1`` with selected characters: (row, its selected part as shown).

    ``skip`` leading cells (a gutter) are never part of the selection.
    """
    start, end = selection
    first = 0 if start is None else max(0, start.y)
    last = total - 1 if end is None else min(end.y, total - 1)
    for row in range(first, last + 1):
        span = selection.get_span(row)
        if span is None:
            continue
        text = rendered_line(row)
        left, right = span
        right = len(text) if right == -1 else right
        yield row, text[max(left, skip) : right]


def selected_text(
    selection: Selection, total: int, rendered_line: Callable[[int], str], skip: int = 0
) -> str:
    """The selected part of rows ``0..total-1`` as shown, one line per row, right-trimmed."""
    return "\n".join(
        part.rstrip() for _, part in selected_rows(selection, total, rendered_line, skip)
    )


def drawn_row(
    strip: Strip,
    row: int,
    selection: Selection | None,
    highlight_span: Callable[[Strip, tuple[int, int]], Strip],
) -> Strip:
    """Absolute ``row`` as drawn: its selected part highlighted, and offsets (character,
    absolute row) so the screen can map the mouse to text."""
    if selection is not None and (span := selection.get_span(row)) is not None:
        strip = highlight_span(strip, span)
    return strip.apply_offsets(0, row)
