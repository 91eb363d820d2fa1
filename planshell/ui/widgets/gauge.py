"""PlanGauge: one row telling the reviewer where they are in a long plan, and what they have seen.

``▰▰▰▱▱▱▱▱  37%  ■■■□□ 3/5 seen  lines 41–80 of 1,204  § Approach · changed``

The coverage strip has one cell per section, filled (``■``) once the section
has been on screen (:mod:`planshell.plan.review_coverage`), hollow (``□``)
until then; a long plan's sections are bucketed into at most
``COVERAGE_MAX`` cells, a bucket half seen shows ``◧``.

It only shows when the plan overflows the view. On narrow terminals the line
range goes first, then the strip narrows, then the section name is shortened:
position, coverage and section are what a reviewer navigates by.
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


def gauge_text(state: GaugeState, width: int) -> Text:
    """Lay the gauge out in ``width`` cells: drop the range first, then shorten the section."""
    percent = state.percent
    range_text = f"  lines {state.first:,}–{state.last:,} of {state.total:,}"
    tag = " · changed" if state.changed else ""
    section = f"  § {state.section}" if state.section else ""
    places = f"  {state.places}" if state.places else ""

    seen_count = sum(state.seen)

    def build(bar_width: int, show_range: bool, name: str, strip_cells: int = COVERAGE_MAX) -> Text:
        filled = round(bar_width * percent / 100)
        text = Text(no_wrap=True, overflow="crop")
        if places:  # first: it is what ]c / [c move through
            text.append(places.lstrip() + "  ", "gauge--places")
        text.append("▰" * filled, "gauge--bar")
        text.append("▱" * (bar_width - filled), "gauge--track")
        text.append(f" {percent:>3}%", "gauge--percent")
        if state.seen:
            text.append("  ")
            for cell in coverage_strip(state.seen, strip_cells):
                text.append(cell, "gauge--seen" if cell == SEEN else "gauge--unseen")
            text.append(f" {seen_count}/{len(state.seen)} seen", "gauge--range")
        if show_range:
            text.append(range_text, "gauge--range")
        if name:
            text.append(name, "gauge--section")
            if tag:
                text.append(tag, "gauge--changed")
        return text

    for show_range, strip_cells in ((True, COVERAGE_MAX), (False, COVERAGE_MAX)):
        for bar_width in (_BAR_MAX, 10, _BAR_MIN):
            full = build(bar_width, show_range, section, strip_cells)
            if full.cell_len <= width:
                return full
    for strip_cells in (16, _COVERAGE_MIN):
        full = build(_BAR_MIN, False, section, strip_cells)
        if full.cell_len <= width:
            return full
    room = width - build(_BAR_MIN, False, "", _COVERAGE_MIN).cell_len - cell_len(tag)
    if section and room >= 8:
        return build(_BAR_MIN, False, _ellipsize(section, room), _COVERAGE_MIN)
    compact = build(_BAR_MIN, False, "", _COVERAGE_MIN)
    compact.truncate(max(0, width))
    return compact


class PlanGauge(Widget):
    """Bar, percent, coverage strip, visible line range and section name; hidden unless the
    plan overflows."""

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
