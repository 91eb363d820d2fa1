"""PlanView: a markdown plan viewer that renders only what is on screen.

Why not ``textual.widgets.Markdown`` or rich's ``Markdown``: measured, they take
13 s (2,000 lines) and 3.2 s (10,000 lines) before the first frame. A plan review
must open instantly at any size and ``n``/``p`` must land in one frame, so this
view draws the shared markdown engine's rows (:mod:`planshell.markdown`: one
parser and renderer for plans, chat and the browser review) one *section* (a
heading and its body, as split by ``parse_plan``) at a time, from a Line-API
``ScrollView`` that lays sections out lazily:

* sections are laid out exactly **in order from the top**; every section past
  the *frontier* has an estimated height (its source line count);
* the viewport is always exact: before a jump or scroll reaches past the
  frontier, the sections up to it are laid out synchronously;
* the rest is laid out in ~3 ms background chunks, so the virtual height
  converges without moving anything on screen (only rows below it change);
* rows are cached per (section, width); heights are kept per width (a
  :class:`~planshell.ui.virtual_rows.VirtualRows` each, the offsets and
  anchoring the transcript uses too), so a resize back to a known width is
  free, and a resize keeps the top section anchored.

A section is parsed on its own (:func:`render_section`, pure and tested on its
own), so the work for a frame is bounded by the sections on screen. All text
goes through ``strip_terminal_controls`` first: plans are written by the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from time import perf_counter
from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer

from planshell.markdown import (
    DEFAULT_PALETTE,
    Palette,
    RenderedLine,
    parse_blocks,
    plain_inline,
    render_blocks,
    wrap_spans,
)
from planshell.plan.coverage import UnshownCheck, UnshownLine, unshown_lines
from planshell.plan.document import PlanDocument, Section, parse_plan
from planshell.plan.review_coverage import ReviewCoverage, VisibleSection
from planshell.plan.revision_diff import DiffLine, RevisionDiff
from planshell.sanitize import strip_terminal_controls
from planshell.ui.selection import drawn_row, highlight, selected_rows, selected_text
from planshell.ui.styling import solid_component_style
from planshell.ui.virtual_rows import Anchor, VirtualRows

__all__ = ["Match", "PlanView", "render_markdown", "render_section"]

GUTTER = 2  # "▎ " on changed sections, blank otherwise: text never shifts
RIGHT_MARGIN = 1
MIN_WIDTH = 12
CHANGED_TAG = "· changed"
_CHUNK_SECONDS = 0.003  # one background layout batch (a key waits behind at most one per hop)
_RESIZE_EVERY = 0.25  # the background layout updates the virtual height this often
_CACHED_SECTIONS = 96  # sections whose strips stay built (a few screens' worth)
_REVIEW_ACTIONS = frozenset({"next_unseen", "search"})  # keys only the review screen uses
# Plans up to this size are checked for unshown lines at once (~10 ms); larger
# ones in slices after the first frame (100,000 lines: ~1.3 s in all).
_SYNC_COVERAGE_CHARS = 32 * 1024
_COVERAGE_SLICE = 0.002
PLACE_CONTEXT = 2  # rows kept above a changed place a jump lands on


# ----------------------------------------------------------------------- section


def render_section(
    lines: list[str],
    section: Section,
    width: int,
    palette: Palette = DEFAULT_PALETTE,
    *,
    tag: str = "",
) -> list[RenderedLine]:
    """Rows of one section of a (sanitised) document split into ``lines``.

    The section's lines are parsed on their own, with source lines kept
    absolute; ``tag`` is appended to its heading. A last blank row separates it
    from the next section.
    """
    text = "\n".join(lines[section.start : section.end])
    rows = render_blocks(parse_blocks(text, section.start), max(1, width), palette, tag=tag)
    if rows:
        last = max(section.start, section.end - 1)
        rows.append(RenderedLine([], last, last + 1))
    return rows


def render_markdown(text: str, width: int, palette: Palette = DEFAULT_PALETTE) -> list[str]:
    """Plain text of a whole document's rows, section by section: for tests and benchmarks."""
    text = strip_terminal_controls(text)
    lines = text.split("\n")
    return [
        row.text
        for section in parse_plan(text).sections
        for row in render_section(lines, section, width, palette)
    ]


# ------------------------------------------------------------------------ widget


class Match(NamedTuple):
    """One search match: characters ``[start, end)`` of row ``inside`` of section ``section``
    (rows of the unfolded section, characters of the drawn row, gutter included)."""

    section: int
    inside: int
    start: int
    end: int


class _Rows(NamedTuple):
    strips: list[Strip]
    sources: list[int]  # absolute 0-based source line of each row


class PlanView(ScrollView, can_focus=True):
    """Scrollable, lazily laid-out view of a markdown plan (see the module docstring)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "plan-view--h1",
        "plan-view--h2",
        "plan-view--h3",
        "plan-view--h4",
        "plan-view--h1-rule",
        "plan-view--rule",
        "plan-view--bullet",
        "plan-view--task",
        "plan-view--task-done",
        "plan-view--done",
        "plan-view--code",
        "plan-view--code-block",
        "plan-view--fence-info",
        "plan-view--quote",
        "plan-view--link",
        "plan-view--muted",
        "plan-view--changed-bar",
        "plan-view--changed-tag",
        "plan-view--match",
        "plan-view--match-current",
        "plan-view--diff-insert",
        "plan-view--diff-delete",
    }

    DEFAULT_CSS = """
    PlanView {
        background: $background;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
    }
    PlanView > .plan-view--h1 { color: $markdown-h1-color; text-style: $markdown-h1-text-style; }
    PlanView > .plan-view--h2 { color: $markdown-h2-color; text-style: $markdown-h2-text-style; }
    PlanView > .plan-view--h3 { color: $markdown-h3-color; text-style: $markdown-h3-text-style; }
    PlanView > .plan-view--h4 { color: $markdown-h4-color; text-style: $markdown-h4-text-style; }
    PlanView > .plan-view--h1-rule { color: $markdown-h1-color 70%; }
    PlanView > .plan-view--rule { color: $foreground-muted; }
    PlanView > .plan-view--bullet { color: $text-accent; }
    PlanView > .plan-view--task { color: $foreground-muted; }
    PlanView > .plan-view--task-done { color: $text-success; }
    PlanView > .plan-view--done { color: $foreground-muted; }
    PlanView > .plan-view--code { color: $text-warning; background: $surface; }
    PlanView > .plan-view--code-block { background: $surface; }
    PlanView > .plan-view--fence-info { color: $foreground-muted; background: $surface; }
    PlanView > .plan-view--quote { color: $foreground-muted; text-style: italic; }
    PlanView > .plan-view--link { color: $text-primary; text-style: underline; }
    PlanView > .plan-view--muted { color: $foreground-muted; }
    PlanView > .plan-view--changed-bar { color: $warning; }
    PlanView > .plan-view--changed-tag { color: $text-warning; text-style: italic; }
    PlanView > .plan-view--match { background: $warning-muted; }
    PlanView > .plan-view--match-current { background: $warning; color: $background; }
    PlanView > .plan-view--diff-insert { color: $text-success; background: $success-muted; }
    PlanView > .plan-view--diff-delete { color: $text-error; text-style: strike; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "line(-1)", "Up", show=False),
        Binding("down,j", "line(1)", "Down", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("ctrl+d", "half(1)", "Half page down", show=False),
        Binding("ctrl+u", "half(-1)", "Half page up", show=False),
        Binding("home,g", "top", "Top", show=False),
        Binding("end,G", "bottom", "End", show=False),
        Binding("n", "next_heading", "Next section (next match while searching)", show=False),
        Binding("p", "prev_heading", "Previous section", show=False),
        Binding("N", "prev_match", "Previous match (while searching)", show=False),
        Binding("u", "next_unseen", "Next section not yet on screen", show=False),
        Binding("slash", "search", "Search the plan", show=False),
        Binding("escape", "end_search", "End the search", show=False),
        Binding("z", "fold", "Fold or unfold this section", show=False),
        Binding("y", "copy_section", "Copy this section's markdown", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.review_keys or action not in _REVIEW_ACTIONS

    class _ViewMessage(Message):
        """A message about one plan view (``control`` is the view, for ``@on`` selectors)."""

        def __init__(self, plan_view: PlanView) -> None:
            super().__init__()
            self.plan_view = plan_view

        @property
        def control(self) -> PlanView:
            return self.plan_view

    class Checked(_ViewMessage):
        """The lines this view does not show are known (:attr:`PlanView.unshown`)."""

    class Scrolled(_ViewMessage):
        """The visible part changed (scroll, resize, load): gauges update from it."""

    class SearchRequested(_ViewMessage):
        """``/`` was pressed: the screen opens its search input for this view."""

    class SearchEnded(_ViewMessage):
        """The search ended (Esc in the view): the screen closes its search input."""

    def __init__(
        self,
        text: str = "",
        *,
        changed: frozenset[int] = frozenset(),
        review_keys: bool = True,
        clock: Callable[[], float] = time.monotonic,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # False: the review-only keys (u: next unseen, /: search) are left to the screen,
        # e.g. the plan report's u (undo). A disabled action passes the key on, so the
        # screen's own non-priority binding, which the key grace can hold, gets it.
        self.review_keys = review_keys
        self._clock = clock
        self._coverage: ReviewCoverage | None = None
        self._folded: set[int] = set()
        self._query = ""
        self._matches: list[Match] = []
        self._matches_width = 0  # the width the matches were found at
        self._match = -1  # index of the current match (-1: none yet)
        self._text = ""
        self._lines: list[str] = []
        self._source_total = 0
        self._doc: PlanDocument = parse_plan("")
        self._changed: frozenset[int] = frozenset()
        self._palette: Palette | None = None
        self._width = 0  # content width of the current layout (0: not laid out yet)
        # Heights per width (exact from the top up to a frontier, estimated after).
        self._layouts: dict[int, VirtualRows] = {}
        self._vrows = VirtualRows()  # the current width's; all zero until laid out
        self._rows: LRUCache[tuple[int, int], _Rows] = LRUCache(_CACHED_SECTIONS)
        self._generation = 0
        self._timer: Timer | None = None
        self._last_report: tuple[object, ...] | None = None
        self._unshown: tuple[UnshownLine, ...] | None = None
        self._loads = 0  # which load() a coverage check belongs to
        # The revision diff (``d``): display lines per section, and the changed places.
        self._diff = RevisionDiff()
        self._diff_lines: dict[int, tuple[DiffLine, ...]] = {}
        self._places: list[tuple[int, int]] = []
        self._diff_on = False
        self._diff_firsts: dict[tuple[int, int], list[int]] = {}  # (section, width): line rows
        self._place = -1  # the place a jump last landed on (-1: none)
        self._place_top = -1  # the top row that jump left (a scroll since forgets the place)
        # n/p's section and the top row they left: a section the view cannot bring to the
        # top (a short plan, the last ones) is still the current one until a scroll.
        self._jumped: tuple[int, int] = (-1, -1)
        self._sized_at = 0.0  # when the background layout last updated the virtual height
        self._frame_style: Style | None = None  # rich_style while a frame's rows are drawn
        self.load(text, changed)

    # -- public API

    def load(self, text: str, changed: frozenset[int] = frozenset()) -> None:
        """Show ``text`` (sanitised here) with sections ``changed`` marked; back to the top."""
        self._raw = text  # the coverage check needs what the sanitiser removes
        self._text = strip_terminal_controls(text)
        self._lines = self._text.split("\n")
        self._source_total = len(self._lines) - (1 if self._text.endswith("\n") else 0)
        self._doc = parse_plan(self._text)
        self._changed = frozenset(changed)
        keys = [section.digest for section in self._doc.sections]
        if self._coverage is None:
            self._coverage = ReviewCoverage(len(keys), keys=keys, clock=self._clock)
        else:  # a new revision: sections with unchanged text stay seen
            self._coverage = self._coverage.carry_over(keys)
        self._folded.clear()
        self._matches_width = 0
        self._match = -1
        self._diff, self._diff_lines, self._places = RevisionDiff(), {}, []
        self._diff_firsts.clear()
        self._diff_on, self._place, self._place_top = False, -1, -1
        self._jumped = (-1, -1)
        self._layouts.clear()
        self._rows.clear()
        self._width = 0
        self._vrows = VirtualRows([0] * len(self._doc.sections))
        self._generation += 1
        self._loads += 1
        self._unshown = None
        if len(text) <= _SYNC_COVERAGE_CHARS:
            self._unshown = unshown_lines(text)
        if self.is_mounted:
            self.scroll_to(y=0, animate=False)
            self._relayout(anchor=None)
            self._check_coverage()

    # -- the revision diff (``d``, ``]c``/``[c``)

    def set_diff(self, diff: RevisionDiff) -> None:
        """The diff from the revision last reviewed to this text (shown by :meth:`show_diff`)."""
        self._diff = diff
        self._diff_firsts.clear()
        self._diff_lines = diff.by_section()
        self._places = diff.place_lines()
        self._place = self._place_top = -1
        if self._diff_on:
            self._reset_layout()

    @property
    def diff(self) -> RevisionDiff:
        return self._diff

    @property
    def diff_shown(self) -> bool:
        return self._diff_on

    def show_diff(self, on: bool) -> None:
        """Show changed sections as a word diff (deleted words struck, inserted ones marked)."""
        if on == self._diff_on:
            return
        self._diff_on = on
        self._place = self._place_top = -1
        self._reset_layout()

    @property
    def place_position(self) -> tuple[int, int]:
        """(1-based place a jump last landed on, or 0; number of places)."""
        landed = self._place >= 0 and self._place_top == self._top
        return (self._place + 1 if landed else 0, len(self._places))

    def place_row(self, number: int) -> int:
        """Row of the display line where changed place ``number`` starts (diff shown)."""
        index, line = self._places[number]
        self._ensure_section(index)
        key = (index, self._width)
        firsts = self._diff_firsts.get(key)
        if firsts is None:
            firsts = self._diff_firsts[key] = self._diff_rows(index)[1]
        return self._vrows.offset(index) + firsts[line]

    def jump_to_place(self, number: int) -> None:
        if not self._diff_on or not 0 <= number < len(self._places):
            return
        row = self.place_row(number)
        self._scroll_rows(max(0, row - PLACE_CONTEXT))
        self._place, self._place_top = number, self._top
        self._report()

    def next_place(self, direction: int) -> bool:
        """Jump to the next (1) or previous (-1) changed place; False when there is none."""
        if not self._diff_on or not self._places:
            return False
        if self._place >= 0 and self._place_top == self._top:
            target = self._place + direction
        elif direction > 0:
            top = self._top
            target = next(
                (n for n in range(len(self._places)) if self.place_row(n) >= top), len(self._places)
            )
        else:
            top = self._top
            target = next(
                (n for n in range(len(self._places) - 1, -1, -1) if self.place_row(n) < top), -1
            )
        if not 0 <= target < len(self._places):
            return False
        self.jump_to_place(target)
        return True

    def _reset_layout(self) -> None:
        """Heights change (diff shown or hidden): lay out again, the top section kept on top."""
        if not self.is_mounted:
            return
        anchor = self._anchor() if self._width else None
        self._layouts.clear()
        self._rows.clear()
        self._diff_firsts.clear()
        self._relayout(anchor)

    def _diff_rows(self, index: int) -> tuple[list[RenderedLine], list[int]]:
        """Section ``index`` as diff lines: the rows, and the first row of each display line."""
        palette = self._get_palette()
        insert = palette.text + solid_component_style(self, "plan-view--diff-insert")
        delete = palette.text + solid_component_style(self, "plan-view--diff-delete")
        styles = {"equal": palette.text, "insert": insert, "delete": delete}
        rows: list[RenderedLine] = []
        firsts: list[int] = []
        for line in self._diff_lines.get(index, ()):
            firsts.append(len(rows))
            spans = [
                (strip_terminal_controls(fragment.text), styles[fragment.op])
                for fragment in line.fragments
            ]
            text = "".join(piece for piece, _ in spans)
            indent = text[: len(text) - len(text.lstrip(" "))]
            prefix = [Segment(indent, palette.text)] if indent else []
            if not text.strip():
                rows.append(RenderedLine([], line.source, line.source + 1))
                continue
            for segments in wrap_spans(spans, max(1, self._width), prefix, prefix):
                rows.append(RenderedLine(segments, line.source, line.source + 1))
        if rows:
            last = rows[-1].start
            rows.append(RenderedLine([], last, last + 1))
        return rows, firsts

    @property
    def unshown(self) -> tuple[UnshownLine, ...] | None:
        """Source lines of the text that this view does not render; None while being checked.

        The executor reads them all, so the review must say so (see
        :mod:`planshell.plan.coverage`). :class:`PlanView.Checked` is posted
        when they are known.
        """
        return self._unshown

    def _check_coverage(self) -> None:
        """Find the unshown lines of a large plan in ~5 ms slices on this thread.

        A worker thread held the GIL against ``n``/``p`` for over a second on a
        100k-line plan; slices between timer ticks let a key in after at most one.
        """
        if self._unshown is not None:
            self.post_message(self.Checked(self))
            return
        generation = self._loads
        try:
            check = UnshownCheck(self._raw, clean=self._text, sections=self._doc.sections)
        except Exception as exc:  # never leave the review waiting: say the check failed
            self._checked(
                generation, (UnshownLine(0, f"(the check failed: {exc})", "not checked"),)
            )
            return

        def slice_() -> None:
            if generation != self._loads:
                return  # the text was replaced: its own check runs
            try:
                if not check.step(perf_counter() + _COVERAGE_SLICE):
                    self.set_timer(0.002, slice_)
                    return
                found = check.result()
            except Exception as exc:
                found = (UnshownLine(0, f"(the check failed: {exc})", "not checked"),)
            self._checked(generation, found)

        slice_()

    def _checked(self, generation: int, found: tuple[UnshownLine, ...]) -> None:
        if generation == self._loads:  # not a check of text replaced meanwhile
            self._unshown = found
            self.post_message(self.Checked(self))

    @property
    def text(self) -> str:
        """The (sanitised) text on screen."""
        return self._text

    @property
    def document(self) -> PlanDocument:
        return self._doc

    @property
    def sections(self) -> tuple[Section, ...]:
        return self._doc.sections

    @property
    def changed(self) -> frozenset[int]:
        return self._changed

    @property
    def section_offsets(self) -> list[int]:
        """Row of each section's first line (its heading), at the current width.

        Exact up to the layout frontier, estimated after; jumps make their
        target exact before using it.
        """
        return list(self._vrows.offsets[:-1])

    @property
    def content_height(self) -> int:
        """Rows of the whole plan (exact once the background layout has finished)."""
        return self._vrows.total

    @property
    def layout_complete(self) -> bool:
        return self._width in self._layouts and self._vrows.complete

    @property
    def overflowing(self) -> bool:
        """Whether the plan is taller than the view (the gauge shows only then)."""
        return self.content_height > self._view_height

    def heading_line(self, index: int) -> int:
        """Exact row of section ``index``'s heading (laying out up to it if needed)."""
        self._ensure_section(index)
        return self._vrows.offset(index)

    def current_section(self) -> int:
        """Index of the section at the top of the view (0 for an empty plan)."""
        if not self._doc.sections:
            return 0
        index, top = self._jumped
        if top == self._top and 0 <= index < len(self._doc.sections):
            return index
        return self._section_at(self._top)

    def visible_range(self) -> tuple[int, int, int]:
        """(first, last, total) **source** lines on screen, 1-based; (0, 0, 0) when empty.

        Source lines (not rendered rows) so the numbers match the file and stay
        stable while the background layout converges or the width changes.
        """
        total = self._source_total
        if total <= 0 or not self._doc.sections:
            return (0, 0, 0)
        top = self._top
        bottom = min(top + self._view_height, self.content_height) - 1
        first = self._source_at(top)
        last = self._source_at(max(top, bottom))
        if bottom >= self.content_height - 1:
            last = total
        return (min(first, total), min(max(first, last), total), total)

    def rendered_line(self, row: int) -> str:
        """Plain text of absolute row ``row`` (tests, and the screen's own checks)."""
        strip = self._strip_at(row)
        return strip.text if strip is not None else ""

    def next_heading(self) -> bool:
        """Put the next heading on the top row; False when there is none."""
        sections = self._doc.sections
        current = self.current_section()
        for index in range(current + 1, len(sections)):
            if sections[index].level:
                self.jump_to_section(index)
                return True
        return False

    def prev_heading(self) -> bool:
        """Put the heading of this section (if scrolled into it) or the previous one on top."""
        sections = self._doc.sections
        if not sections:
            return False
        current = self.current_section()
        if self._top > self._vrows.offset(current) and sections[current].level:
            self.jump_to_section(current)
            return True
        for index in range(current - 1, -1, -1):
            if sections[index].level:
                self.jump_to_section(index)
                return True
        if self._top > 0:
            self._scroll_rows(0)
            return True
        return False

    def jump_to_section(self, index: int) -> None:
        """Scroll so section ``index``'s first row is exactly the top visible row."""
        if not 0 <= index < len(self._doc.sections):
            return
        self._ensure_section(index, extra=self._view_height)
        self._jumped = (-1, -1)
        self._scroll_rows(self._vrows.offset(index))
        self._jumped = (index, self._top)
        self._report()

    # -- coverage: which sections were on screen (planshell.plan.review_coverage)

    @property
    def coverage(self) -> ReviewCoverage:
        """The record of what this view has shown of its text (carried over unchanged sections)."""
        assert self._coverage is not None  # set by load() in __init__
        return self._coverage

    def mark_seen(self, indices: Iterable[int]) -> None:
        """Count sections seen elsewhere (the browser review) and update the gauge."""
        self.coverage.mark_seen(indices)
        self._report()

    def section_title(self, index: int) -> str:
        """Section ``index``'s title as plain, sanitised text (the plan's title for a preamble)."""
        if not 0 <= index < len(self._doc.sections):
            return ""
        section = self._doc.sections[index]
        return plain_inline(section.title) if section.title else "(before the first heading)"

    def unseen_titles(self) -> list[str]:
        return [self.section_title(index) for index in self.coverage.unseen()]

    def next_unseen(self) -> bool:
        """Put the next section not yet seen on the top row (unfolded); False when all are seen."""
        index = self.coverage.next_unseen(self.current_section())
        if index is None:
            return False
        if index in self._folded:
            self.toggle_fold(index)  # a folded section can never be seen
        self.jump_to_section(index)
        return True

    def _visible_sections(self) -> list[VisibleSection]:
        """The sections on screen and which of their rows (a folded one is never reported).

        The blank row that separates a section from the next is not part of it.
        """
        vrows = self._vrows
        if not self._doc.sections:
            return []
        top = self._top
        bottom = min(top + self._view_height, vrows.total) - 1
        visible: list[VisibleSection] = []
        index = vrows.index_at(top)
        while index < len(vrows) and vrows.offset(index) <= bottom:
            start, height = vrows.offset(index), vrows.height(index)
            if index not in self._folded and vrows.is_exact(index):
                content = height - 1 if height > 1 else height
                last = min(content - 1, bottom - start)
                visible.append(VisibleSection(index, max(0, top - start), last, content))
            index += 1
        return visible

    # -- fold

    @property
    def folded(self) -> frozenset[int]:
        return frozenset(self._folded)

    def toggle_fold(self, index: int | None = None) -> bool:
        """Fold or unfold section ``index`` (default: the current one); True when now folded.

        A folded section shows its heading and "… N lines folded"; a section
        without a heading (a preamble) does not fold.
        """
        if index is None:
            index = self.current_section()
        if not 0 <= index < len(self._doc.sections) or not self._doc.sections[index].level:
            return False
        if index in self._folded:
            self._folded.discard(index)
        else:
            self._folded.add(index)
        self._rows.clear()
        for layout in self._layouts.values():
            if layout is self._vrows and index < layout.exact_prefix:
                layout.measure(index, len(self._render_section(index)))
            elif index < len(layout) and layout.is_exact(index):
                layout.invalidate(index)
        self._update_virtual_size()
        self.jump_to_section(index)
        self.refresh()
        return index in self._folded

    def _folded_rows(self, index: int, rows: list[RenderedLine]) -> list[RenderedLine]:
        """The heading's rows, "… N lines folded", and the separating blank row."""
        section = self._doc.sections[index]
        heading = [row for row in rows if row.start == section.start] or rows[:1]
        body = self._lines[section.start + 1 : section.end]
        while body and not body[-1].strip():
            body.pop()
        noun = "line" if len(body) == 1 else "lines"
        notice = Segment(f"… {len(body)} {noun} folded (z unfolds)", self._get_palette().muted)
        last = max(section.start, section.end - 1)
        return [
            *heading,
            RenderedLine([notice], section.start, section.start + 1),
            RenderedLine([], last, last + 1),
        ]

    # -- copy

    def section_markdown(self, index: int | None = None) -> str:
        """The (sanitised) markdown source of section ``index`` (default: the current one)."""
        if index is None:
            index = self.current_section()
        if not 0 <= index < len(self._doc.sections):
            return ""
        section = self._doc.sections[index]
        return "\n".join(self._lines[section.start : section.end]).strip("\n") + "\n"

    # -- search

    @property
    def search_active(self) -> bool:
        return bool(self._query)

    @property
    def search_query(self) -> str:
        return self._query

    @property
    def matches(self) -> list[Match]:
        """Every match of the search at the current width (found on first use)."""
        if self._query and self._matches_width != self._width:
            self._find_matches()
        return self._matches if self._query else []

    @property
    def current_match(self) -> int:
        """Index into :attr:`matches` of the current match (-1: none)."""
        return self._match if self._query else -1

    def search(self, query: str) -> int:
        """Highlight ``query`` (case-insensitive) and go to its first match at or below the top.

        Returns how many matches there are. An empty query ends the search.
        """
        self._query = query
        self._match = -1
        self._matches_width = 0
        if not query:
            self.refresh()
            return 0
        matches = self.matches
        top = self._top
        for number, match in enumerate(matches):
            if self._match_row(match) >= top:
                self._go_to_match(number)
                break
        else:
            if matches:
                self._go_to_match(0)
        self.refresh()
        return len(matches)

    def next_match(self, direction: int = 1) -> bool:
        """Go to the next (``direction`` 1) or previous (-1) match, wrapping; False without any."""
        matches = self.matches
        if not matches:
            return False
        if self._match < 0:
            number = 0 if direction > 0 else len(matches) - 1
        else:
            number = (self._match + direction) % len(matches)
        self._go_to_match(number)
        return True

    def end_search(self) -> None:
        self._query = ""
        self._matches = []
        self._match = -1
        self.refresh()

    def _find_matches(self) -> None:
        """Scan every section's rows (as drawn unfolded, at the current width) for the query."""
        self._matches_width = self._width
        self._matches = []
        needle = self._query.lower()
        if not needle or not self._width:
            return
        folded, self._folded = self._folded, set()  # search the whole text, folded or not
        try:
            for index in range(len(self._doc.sections)):
                for inside, row in enumerate(self._render_section(index)):
                    for start, end in _find_all(" " * GUTTER + row.text, needle):
                        self._matches.append(Match(index, inside, start, end))
        finally:
            self._folded = folded

    def _match_row(self, match: Match) -> int:
        if match.section in self._folded:
            return self._vrows.offset(match.section)
        return self._vrows.offset(match.section) + match.inside

    def _go_to_match(self, number: int) -> None:
        """Make match ``number`` current and show it a few rows below the top (unfolding it)."""
        self._match = number
        match = self._matches[number]
        if match.section in self._folded:
            self.toggle_fold(match.section)
        self._ensure_section(match.section, extra=match.inside + self._view_height)
        row = self._match_row(match)
        top, height = self._top, self._view_height
        if not top <= row < top + height:
            self._scroll_rows(max(0, row - min(3, height // 3)))
        self.refresh()

    def _highlight_matches(self, strip: Strip, row: int) -> Strip:
        text = strip.text
        current: tuple[int, int, int] | None = None
        if 0 <= self._match < len(self._matches) and self._matches_width == self._width:
            match = self._matches[self._match]
            if match.section not in self._folded:
                current = (self._match_row(match), match.start, match.end)
        plain = self.get_component_rich_style("plan-view--match", partial=True)
        strong = self.get_component_rich_style("plan-view--match-current", partial=True)
        for start, end in _find_all(text, self._query.lower()):
            style = strong if current == (row, start, end) else plain
            strip = highlight(strip, (start, end), style, GUTTER)
        return strip

    # -- actions

    def action_next_unseen(self) -> None:
        if not self.next_unseen():
            self.notify("Every section has been on screen.")

    def action_search(self) -> None:
        self.post_message(self.SearchRequested(self))

    def action_prev_match(self) -> None:
        if not self.search_active:
            raise SkipAction()
        self.next_match(-1)

    def action_end_search(self) -> None:
        if not self.search_active:
            raise SkipAction()  # Esc means what the screen says it means
        self.end_search()
        self.post_message(self.SearchEnded(self))

    def action_fold(self) -> None:
        self.toggle_fold()

    def action_copy_section(self) -> None:
        if not self._doc.sections:
            return
        index = self.current_section()
        self.app.copy_to_clipboard(self.section_markdown(index))
        self.notify(f"Copied §{self.section_title(index)}", markup=False)  # a model-written title

    def action_line(self, delta: int) -> None:
        self._scroll_rows(self._top + delta)

    def action_page(self, direction: int) -> None:
        self._scroll_rows(self._top + direction * max(1, self._view_height - 1))

    def action_half(self, direction: int) -> None:
        self._scroll_rows(self._top + direction * max(1, self._view_height // 2))

    def action_top(self) -> None:
        self._scroll_rows(0)

    def action_bottom(self) -> None:
        self._ensure_rows(None)
        self._scroll_rows(max(0, self.content_height - self._view_height))

    def action_next_heading(self) -> None:
        if self.search_active:
            self.next_match(1)
            return
        self.next_heading()

    def action_prev_heading(self) -> None:
        self.prev_heading()

    # -- Textual hooks

    def on_mount(self) -> None:
        super().on_mount()
        if self._content_width() and not self._width:
            self._relayout(anchor=None)
        # A large plan's check runs in slices: start them once the first frame is out.
        self.call_after_refresh(self._check_coverage)

    def on_resize(self, event: events.Resize) -> None:
        width = self._content_width()
        if not width:
            return
        if width != self._width:
            anchor = self._anchor() if self._width else None
            self._relayout(anchor)
        else:
            self._update_virtual_size()
            self._ensure_rows(self._top + self._view_height)
            self._report()

    def notify_style_update(self) -> None:
        """Theme or CSS changed: rebuild styles; heights do not depend on them."""
        super().notify_style_update()
        self._palette = None
        self._rows.clear()
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._width:
            return
        top = round(new_value)
        vrows = self._vrows
        if (
            not vrows.complete
            and vrows.offset(vrows.exact_prefix) < top + self._view_height
            and (anchor := vrows.anchor(top)) is not None
        ):
            # Dragged or wheeled past the exact layout: keep the estimated section
            # under the top row anchored while it and those above become exact.
            self._ensure_section(anchor.block, extra=anchor.inside + self._view_height)
            target = vrows.row_of(anchor)
            if target != top:
                self.scroll_to(y=target, animate=False)
                return
        self._report()

    def render_lines(self, crop: Region) -> list[Strip]:
        # The first frame can come before the Resize event: lay out for it now.
        if self._content_width() != self._width:
            self._relayout(self._anchor() if self._width else None)
        # One style lookup per frame, not per row (``rich_style`` walks the ancestors).
        self._frame_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._frame_style = None

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = self._top + y
        style = self._frame_style or self.rich_style
        strip = self._strip_at(row)
        if strip is None:
            return Strip.blank(width, style)
        strip = strip.crop_extend(0, width, style)
        if self._query:
            strip = self._highlight_matches(strip, row)
        return drawn_row(strip, row, self.text_selection, self._highlight)

    # -- selection (mouse drag, then ctrl+c: ``Screen.action_copy_text``)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text: the rows as shown, or the plan's source when all is selected.

        Selection offsets are (character, absolute row), from ``render_line``.
        A partial selection copies what the user sees highlighted: the rendered
        rows' text without the gutter and the row padding (wrapped paragraphs
        keep the view's line breaks). Selecting everything (``text_select_all``)
        copies the (sanitised) markdown source instead of laying out the plan.
        """
        start, end = selection
        if start is None and end is None:
            return self._text, "\n"
        if end is None:
            self._ensure_rows(None)  # dragged past the bottom: up to the last row
        return selected_text(selection, self._vrows.total, self.rendered_line, GUTTER), "\n"

    def selected_source_lines(self) -> tuple[int, int] | None:
        """Source lines ``[start, end)`` (0-based) the selected text is on; None without one.

        What a comment on the selection is anchored to (``c``). Each drawn row
        keeps the source line it shows (a wrapped paragraph's rows: the
        paragraph's first line; a list item's: the item's), so the range covers
        the rows with selected characters; blank rows (block separators, which
        carry the next block's line) and the gutter do not count. Selecting
        everything (a double click) is not a range: None, as without a selection.
        """
        selection = self.text_selection
        if selection is None or not self._width or not self._doc.sections:
            return None
        start, end = selection
        if start is None and end is None:
            return None
        if end is None:
            self._ensure_rows(None)  # dragged past the bottom: up to the last row
        rows = selected_rows(selection, self._vrows.total, self.rendered_line, GUTTER)
        sources = [self._source_at(row) - 1 for row, part in rows if part.strip()]
        if not sources:
            return None
        return min(sources), max(sources) + 1

    def selection_text(self) -> str:
        """The selected text as shown (sanitised plan text; "" without a selection)."""
        selection = self.text_selection
        if selection is None:
            return ""
        got = self.get_selection(selection)
        return got[0] if got is not None else ""

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _highlight(self, strip: Strip, span: tuple[int, int]) -> Strip:
        """The selection style over ``span``; the gutter is never highlighted (nor copied)."""
        style = self.screen.get_component_rich_style("screen--selection")
        return highlight(strip, span, style, GUTTER)

    # -- layout

    @property
    def _top(self) -> int:
        return round(self.scroll_y)

    @property
    def _view_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def _content_width(self) -> int:
        width = self.scrollable_content_region.width
        return max(MIN_WIDTH, width - GUTTER - RIGHT_MARGIN) if width > 0 else 0

    def _get_palette(self) -> Palette:
        if self._palette is None:
            base = self.rich_style

            def style(name: str) -> Style:
                return base + solid_component_style(self, f"plan-view--{name}")

            self._palette = Palette(
                text=base,
                h1=style("h1"),
                h2=style("h2"),
                h3=style("h3"),
                h4=style("h4"),
                h1_rule=style("h1-rule"),
                rule=style("rule"),
                bullet=style("bullet"),
                task=style("task"),
                task_done=style("task-done"),
                done=style("done"),
                code=solid_component_style(self, "plan-view--code"),
                code_block=style("code-block"),
                fence_info=style("fence-info"),
                quote=style("quote"),
                link=solid_component_style(self, "plan-view--link"),
                muted=style("muted"),
                changed_bar=style("changed-bar"),
                changed_tag=style("changed-tag"),
                dark=self._dark(),
            )
        return self._palette

    def _dark(self) -> bool:
        """Whether the theme is dark (picks the code colours)."""
        try:
            return self.app.current_theme.dark
        except Exception:  # no app yet (constructed outside one)
            return True

    def _estimate(self, section: Section) -> int:
        return max(1, section.end - section.start) + (1 if section.level == 1 else 0)

    def _relayout(self, anchor: Anchor | None) -> None:
        """Switch to the current width, keep ``anchor``'s section (and fraction) on the top row."""
        width = self._content_width()
        if not width:
            return
        self._width = width
        layout = self._layouts.get(width)
        if layout is None:
            layout = VirtualRows(self._estimate(section) for section in self._doc.sections)
            self._layouts[width] = layout
            while len(self._layouts) > 4:
                del self._layouts[next(iter(self._layouts))]
        self._vrows = layout
        self._generation += 1
        self._update_virtual_size()
        if anchor is not None and self._doc.sections:
            self._ensure_section(anchor.block, extra=self._view_height)
            target = layout.scaled_row_of(anchor)
            self._ensure_rows(target + self._view_height)
            self.scroll_to(y=target, animate=False)
        else:
            self._ensure_rows(self._top + self._view_height)
        self.refresh()
        self._report()
        self._schedule_background()

    def _anchor(self) -> Anchor | None:
        return self._vrows.anchor(self._top)

    def _update_virtual_size(self) -> None:
        """Total rows, padded so the last heading can reach the top row (exact n/p)."""
        vrows = self._vrows
        total = vrows.total
        height = self._view_height
        virtual = total
        if total > height and len(vrows):
            last_heading = vrows.offset(len(vrows) - 1)
            for index in range(len(self._doc.sections) - 1, -1, -1):
                if self._doc.sections[index].level:
                    last_heading = vrows.offset(index)
                    break
            virtual = max(total, last_heading + height)
        self.virtual_size = Size(self.scrollable_content_region.width, virtual)

    def _render_section(self, index: int) -> list[RenderedLine]:
        # Not ``_render``: that name is Textual's (``Widget._render``, used by copy).
        if self._diff_on and index in self._diff_lines:
            return self._diff_rows(index)[0]
        section = self._doc.sections[index]
        rows = render_section(
            self._lines,
            section,
            self._width,
            self._get_palette(),
            tag=CHANGED_TAG if index in self._changed and section.level else "",
        )
        if index in self._folded and rows:
            return self._folded_rows(index, rows)
        return rows

    def _lay_out(self, index: int) -> _Rows:
        """Strips of section ``index`` at the current width (cached for a few sections)."""
        key = (index, self._width)
        cached = self._rows.get(key)
        if cached is not None:
            return cached
        palette = self._get_palette()
        rendered = self._render_section(index)
        changed = index in self._changed
        bar = Segment("▎ ", palette.changed_bar) if changed else Segment("  ", palette.text)
        blank = Segment("  ", palette.text)
        full = self._width + GUTTER
        last = len(rendered) - 1
        strips = [
            # the separating blank row after a section never carries its bar
            Strip(
                [blank if number == last and not row.segments else bar, *row.segments]
            ).crop_extend(0, full, palette.text)
            for number, row in enumerate(rendered)
        ]
        rows = _Rows(strips, [row.start for row in rendered])
        self._rows[key] = rows
        return rows

    def _advance(self, layout: VirtualRows, *, keep: bool = False) -> None:
        """Measure the section at the frontier (the first estimated one) exactly.

        In the background only its height is kept: keeping every section's strips
        alive made Python's full GC passes take ~100 ms on a 10,000-line plan,
        which showed as stutters on ``n``. ``keep``: the section is about to be
        drawn (a jump, a scroll), so its strips go to the bounded row cache
        instead of being rendered twice.
        """
        index = layout.exact_prefix
        cached = self._rows.get((index, self._width))
        if cached is None and keep:
            cached = self._lay_out(index)
        height = len(cached.strips) if cached is not None else len(self._render_section(index))
        layout.measure(index, height)

    def _ensure_section(self, index: int, extra: int = 0) -> None:
        """Make sections up to ``index`` exact, then enough below to fill ``extra`` rows."""
        layout = self._layouts.get(self._width)
        if layout is None:
            return
        sections = len(self._doc.sections)
        before = layout.exact_prefix
        while layout.exact_prefix <= index and layout.exact_prefix < sections:
            self._advance(layout, keep=layout.exact_prefix >= index)
        if layout.exact_prefix != before:
            self._update_virtual_size()
        if index < sections:
            self._ensure_rows(layout.offset(index) + extra)

    def _ensure_rows(self, rows: int | None) -> None:
        """Make every section that starts above row ``rows`` exact (None: all of them)."""
        layout = self._layouts.get(self._width)
        if layout is None:
            return
        sections = len(self._doc.sections)
        before = layout.exact_prefix
        while layout.exact_prefix < sections and (
            rows is None or layout.offset(layout.exact_prefix) < rows
        ):
            # Rows that will be drawn keep their strips; all of them (``G``) only heights.
            self._advance(layout, keep=rows is not None)
        if layout.exact_prefix != before:
            self._update_virtual_size()

    def _schedule_background(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.layout_complete or not self.is_mounted:
            return
        generation = self._generation
        self._timer = self.set_timer(0.002, lambda: self._background(generation))

    def _background(self, generation: int) -> None:
        """One ~8 ms batch of layout below the frontier: never moves the rows on screen."""
        self._timer = None
        if generation != self._generation:
            return
        layout = self._layouts.get(self._width)
        if layout is None:
            return
        now = perf_counter()
        deadline = now + _CHUNK_SECONDS
        sections = len(self._doc.sections)
        while layout.exact_prefix < sections and perf_counter() < deadline:
            self._advance(layout)
        # A new virtual height redraws the scrollbar and the gauge: a whole frame (~10-30 ms)
        # a key would wait behind. A few times a second is enough for the thumb.
        finished = layout.exact_prefix >= sections
        if finished or now - self._sized_at >= _RESIZE_EVERY:
            self._sized_at = now
            self._update_virtual_size()
            self._report()
        if layout.exact_prefix < sections:
            self._timer = self.set_timer(0.002, lambda: self._background(generation))

    def _section_at(self, row: int) -> int:
        return self._vrows.index_at(row)

    def _strip_at(self, row: int) -> Strip | None:
        if not self._width or not self._doc.sections or row < 0 or row >= self._vrows.total:
            return None
        index, inside = self._vrows.locate(row)
        if index >= self._vrows.exact_prefix:  # safety net: render paths keep the view exact
            self._ensure_section(index)
            index, inside = self._vrows.locate(row)
        strips = self._lay_out(index).strips
        return strips[inside] if 0 <= inside < len(strips) else None

    def _source_at(self, row: int) -> int:
        """1-based source line shown on ``row``."""
        if not self._doc.sections:
            return 0
        row = max(0, min(row, self._vrows.total - 1))
        index, inside = self._vrows.locate(row)
        sources = self._lay_out(index).sources
        if 0 <= inside < len(sources):
            return sources[inside] + 1
        return self._doc.sections[index].start + 1

    def _scroll_rows(self, row: int) -> None:
        """Scroll so ``row`` is the top row, laying out what will be visible first."""
        row = max(0, row)
        self._ensure_rows(row + self._view_height)
        row = min(row, max(0, self.virtual_size.height - self._view_height))
        self.scroll_to(y=row, animate=False)
        self._report()

    def _report(self) -> None:
        """Post ``Scrolled`` when what a gauge shows has changed."""
        if not self._width:
            return
        self.coverage.observe(self._visible_sections())
        state = (
            self._top,
            self.visible_range(),
            self.current_section(),
            self.overflowing,
            self.content_height,
            self.coverage.seen_flags,
            frozenset(self._folded),
            self._diff_on,
            self.place_position,
        )
        if state != self._last_report:
            self._last_report = state
            self.post_message(self.Scrolled(self))


def _find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Character spans of every (case-insensitive) occurrence of ``needle`` in ``text``.

    ``needle`` is lower case. Text whose lower case has another length (a few
    letters outside ASCII) is matched as it is, so the spans stay true.
    """
    if not needle:
        return []
    lower = text.lower()
    if len(lower) != len(text):
        lower = text
    spans: list[tuple[int, int]] = []
    start = lower.find(needle)
    while start >= 0:
        spans.append((start, start + len(needle)))
        start = lower.find(needle, start + len(needle))
    return spans
