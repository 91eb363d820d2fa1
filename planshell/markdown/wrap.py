"""Word wrap of styled spans into rows of Rich segments (fast path for ASCII)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from rich.style import Style

__all__ = ["cells", "chop", "wrap_spans"]


def cells(text: str) -> int:
    """Terminal cells ``text`` takes."""
    return len(text) if text.isascii() else cell_len(text)


def chop(text: str, width: int) -> list[str]:
    """Hard-split ``text`` into pieces of at most ``width`` cells (at least one piece)."""
    width = max(1, width)
    if text.isascii():
        return [text[i : i + width] for i in range(0, len(text), width)] or [""]
    pieces: list[str] = []
    start = used = 0
    for index, char in enumerate(text):
        size = get_character_cell_size(char)
        if used + size > width and index > start:
            pieces.append(text[start:index])
            start, used = index, 0
        used += size
    pieces.append(text[start:])
    return pieces


_SPACES = re.compile(r"(\s+)")


def _words(spans: Sequence[tuple[str, Style]]) -> list[tuple[list[tuple[str, Style]], int, Style]]:
    """Group spans into words (pieces, cells, style of the space before the word).

    A word may cross spans (``**bold**,`` is one word), so wrapping never puts a
    comma at the start of a line.
    """
    words: list[tuple[list[tuple[str, Style]], int, Style]] = []
    pieces: list[tuple[str, Style]] = []
    width = 0
    space_style: Style | None = None
    pending_space: Style | None = None
    for text, style in spans:
        for index, token in enumerate(_SPACES.split(text)):
            if not token:
                continue
            if index % 2:  # whitespace
                if pieces:
                    words.append((pieces, width, space_style or style))
                    pieces, width = [], 0
                pending_space = style
                space_style = None
                continue
            if not pieces:
                space_style = pending_space or style
            pieces.append((token, style))
            width += cells(token)
    if pieces:
        words.append((pieces, width, space_style or Style()))
    return words


def wrap_spans(
    spans: Sequence[tuple[str, Style]],
    width: int,
    first: Sequence[Segment] = (),
    rest: Sequence[Segment] | None = None,
) -> list[list[Segment]]:
    """Greedy word wrap of styled spans into rows of ``width`` cells.

    ``first`` prefixes the first row (a bullet), ``rest`` the others (the hanging
    indent; defaults to blanks as wide as ``first``). Runs of whitespace collapse
    to one space, as in markdown; a word longer than a row is split.
    """
    first = list(first)
    first_width = sum(cells(seg.text) for seg in first)
    rest = [Segment(" " * first_width)] if rest is None else list(rest)
    rest_width = sum(cells(seg.text) for seg in rest)
    rows: list[list[Segment]] = []
    row: list[Segment] = list(first)
    avail = max(1, width - first_width)
    used = 0

    def new_row() -> None:
        nonlocal row, used, avail
        rows.append(row)
        row, used, avail = list(rest), 0, max(1, width - rest_width)

    for pieces, word_width, space_style in _words(spans):
        if used and used + 1 + word_width > avail:
            new_row()
        if used:
            row.append(Segment(" ", space_style))
            used += 1
        if word_width <= avail - used:
            row.extend(Segment(text, style) for text, style in pieces)
            used += word_width
            continue
        for text, style in pieces:  # longer than a row: split it
            while text:
                if used >= avail:
                    new_row()
                head = chop(text, avail - used)[0]
                row.append(Segment(head, style))
                used += cells(head)
                text = text[len(head) :]
    rows.append(row)
    return rows
