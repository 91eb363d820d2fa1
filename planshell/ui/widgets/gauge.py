"""PlanGauge: one row telling the reviewer where they are in a long plan, and what they have seen.

``▰▰▰▱▱▱▱▱  37%  ■■■□□ 3/5 seen  lines 41–80 of 1,204  § Approach · changed``

The coverage strip has one cell per section, filled (``■``) once the section
has been on screen (:mod:`planshell.plan.review_coverage`), hollow (``□``)
until then; a long plan's sections are bucketed into at most
``COVERAGE_MAX`` cells, a bucket half seen shows ``◧``.

It always shows in the review, a short plan too (its section marker follows
``n``/``p``). Each field has a fixed width for a given terminal width, so
nothing jumps as you move; on narrow terminals the line range goes first, then
the bar and the strip narrow, and the section name is shortened: position,
coverage and section are what a reviewer navigates by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

__all__ = ["GaugeState", "PlanGauge", "coverage_strip", "gauge_text"]

_BAR_MAX = 16
_BAR_MIN = 6
COVERAGE_MAX = 24
_COVERAGE_MIN = 8
SEEN, UNSEEN, PARTLY = "■", "□", "◧"


@dataclass(frozen=True)
class GaugeState:
    """What the gauge shows: source lines on screen and the current section."""

    first: int = 0
    last: int = 0
    total: int = 0
    section: str = ""
    changed: bool = False
    seen: tuple[bool, ...] = ()  # per section: has it been on screen
    places: str = ""  # the revision diff, when shown: "change 2/5" or "5 changes"

    @property
    def percent(self) -> int:
        """How far down the last visible line is (100 only at the very end)."""
        if self.total <= 0:
            return 0
        if self.last >= self.total:
            return 100
        return min(99, self.last * 100 // self.total)


def _ellipsize(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out.rstrip() + "…"


def coverage_strip(seen: tuple[bool, ...], cells: int = COVERAGE_MAX) -> str:
    """One cell per section (``■`` seen, ``□`` not), or per bucket of sections when there
    are more than ``cells`` (``◧``: some of the bucket seen)."""
    count = len(seen)
    if not count or cells <= 0:
        return ""
    if count <= cells:
        return "".join(SEEN if flag else UNSEEN for flag in seen)
    out = []
    for bucket in range(cells):
        part = seen[bucket * count // cells : (bucket + 1) * count // cells]
        out.append(SEEN if all(part) else UNSEEN if not any(part) else PARTLY)
    return "".join(out)


# Layouts from widest to narrowest: (bar cells, most coverage cells, line range shown).
# One is chosen from the width alone (and the plan's size), never from the section
# name, so the fields keep their width and place as the reviewer moves (at 80x24 the
# bar jumped between 10 and 16 cells with the length of the section name).
_TIERS = ((_BAR_MAX, COVERAGE_MAX, True), (_BAR_MAX, COVERAGE_MAX, False), (10, 16, False))
_NARROWEST = (_BAR_MIN, _COVERAGE_MIN, False)
SECTION_MIN = 30  # cells a layout leaves at least for "  § section" (names need room)


def gauge_text(state: GaugeState, width: int) -> Text:
    """Lay the gauge out in ``width`` cells, each field at a fixed width for that width.

    Narrower terminals drop the line range first, then narrow the bar and the
    coverage strip; the section name takes what is left (shortened with ``…``).
    """
    percent = state.percent
    total = f"{state.total:,}"
    range_width = cell_len(f"  lines {total}–{total} of {total}")
    range_text = f"  lines {state.first:,}–{state.last:,} of {total}".ljust(range_width)
    tag = " · changed" if state.changed else ""
    places = f"{state.places}  " if state.places else ""
    count = len(state.seen)
    seen_text = f" {sum(state.seen)}/{count} seen".ljust(cell_len(f" {count}/{count} seen"))

    def fixed(bar_width: int, strip_cells: int, show_range: bool) -> Text:
        filled = round(bar_width * percent / 100)
        text = Text(no_wrap=True, overflow="crop")
        if places:  # first: it is what ]c / [c move through
            text.append(places, "gauge--places")
        text.append("▰" * filled, "gauge--bar")
        text.append("▱" * (bar_width - filled), "gauge--track")
        text.append(f" {percent:>3}%", "gauge--percent")
        if state.seen:
            text.append("  ")
            for cell in coverage_strip(state.seen, strip_cells):
                text.append(cell, "gauge--seen" if cell == SEEN else "gauge--unseen")
            text.append(seen_text, "gauge--range")
        if show_range:
            text.append(range_text, "gauge--range")
        return text

    text = fixed(*_NARROWEST)
    for tier in _TIERS:
        candidate = fixed(*tier)
        if candidate.cell_len + SECTION_MIN <= width:
            text = candidate
            break
    if state.section:
        room = width - text.cell_len - cell_len(tag)
        name = _ellipsize(f"  § {state.section}", room) if room >= 6 else ""
        if name:
            text.append(name, "gauge--section")
            if tag:
                text.append(tag, "gauge--changed")
    text.truncate(max(0, width))
    return text


class PlanGauge(Widget):
    """Bar, percent, coverage strip, visible line range and section name."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "gauge--bar",
        "gauge--track",
        "gauge--percent",
        "gauge--range",
        "gauge--section",
        "gauge--changed",
        "gauge--seen",
        "gauge--unseen",
        "gauge--places",
    }

    DEFAULT_CSS = """
    PlanGauge { height: 1; }
    PlanGauge > .gauge--bar { color: $primary; }
    PlanGauge > .gauge--track { color: $foreground-muted; }
    PlanGauge > .gauge--percent { color: $foreground; text-style: bold; }
    PlanGauge > .gauge--range { color: $text-muted; }
    PlanGauge > .gauge--section { color: $text-accent; }
    PlanGauge > .gauge--changed { color: $text-warning; text-style: italic; }
    PlanGauge > .gauge--seen { color: $text-success; }
    PlanGauge > .gauge--unseen { color: $text-warning; }
    PlanGauge > .gauge--places { color: $text-success; text-style: bold; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._state = GaugeState()

    @property
    def state(self) -> GaugeState:
        return self._state

    def update_state(self, state: GaugeState) -> None:
        if state != self._state:
            self._state = state
            self.refresh()

    @property
    def plain(self) -> str:
        """The row as plain text at the current width (for tests)."""
        return gauge_text(self._state, self.size.width).plain

    def render(self) -> Text:
        text = gauge_text(self._state, self.size.width)
        for span_index, span in enumerate(text.spans):
            if isinstance(span.style, str):
                style = self.get_component_rich_style(span.style, partial=True)
                text.spans[span_index] = span._replace(style=style)
        return text
