"""PlanPickerScreen: choose a saved plan (or start a new one) for ``/plan``.

The screen lists every file of the plan store, newest first, under a first
entry **Create new plan**. Each row shows the plan's title, its age and its
step progress; a file that cannot be opened (binary, too large, a symlink…)
is listed dimmed with the reason and cannot be chosen.

Keys (the filter input always has the focus):

* typing filters the list (case-insensitive; every word must appear in the
  title or the file name);
* ``↑``/``↓`` (and ``PgUp``/``PgDn``) move the highlight;
* ``j``/``k`` move **only while the filter is empty**; otherwise they type.
  The filter ignores case, so ``J``/``K`` start a filter with those letters;
* ``Enter`` chooses the highlighted entry, ``Esc`` goes back (``None``).

Choosing a plan pushes :class:`PlanActionScreen`; its answer becomes the
picker's result as ``PickerChoice(action, path)``, and ``Esc`` there returns
to the list. Choosing **Create new plan** asks for an optional name in a small
modal (prefilled with the filter text): ``Enter`` answers
``PickerChoice("create", name=...)`` (``name=None`` when left empty), ``Esc``
returns to the list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from planshell.plan.store import PlanInfo, PlanStore, PlanStoreError, slugify
from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.plan_actions import PlanActionScreen
from planshell.ui.screens.results import AnswersWhenRemoved, push_answering
from planshell.ui.styling import solid_component_style
from planshell.ui.widgets.review_footer import Hint, ReviewFooter

__all__ = [
    "PICKER_HINTS",
    "CreatePlanScreen",
    "FilterInput",
    "PickerChoice",
    "PlanList",
    "PlanPickerScreen",
    "format_age",
    "matches_filter",
    "progress_bar",
]


PickerAction = Literal["create", "execute", "refine", "exit", "discard"]

CREATE_ID = "create"
_PLAN_PREFIX = "plan:"
_BAR_CELLS = 8
_AGE_WIDTH = 10  # "59 min ago"
_PROGRESS_WIDTH = _BAR_CELLS + 6  # bar, " 12/50"
_GAP = 2
_MIN_TITLE = 12

PICKER_HINTS: tuple[Hint, ...] = (
    Hint("Enter", "open", 100),
    Hint("Esc", "back", 95),
    Hint("↑↓", "move", 90),
    Hint("type", "to filter", 80),
    Hint("j/k", "move (empty filter)", 60),
)


@dataclass(frozen=True)
class PickerChoice:
    """What the user chose in the picker."""

    action: PickerAction
    path: Path | None = None
    name: str | None = None


# --------------------------------------------------------------------- helpers


def format_age(seconds: float) -> str:
    """``just now``, ``5 min ago``, ``2 h ago``, ``3 d ago`` (future times: just now)."""
    if seconds < 60:
        return "just now"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min ago"
    hours = minutes // 60
    if hours < 24:
        return f"{hours} h ago"
    return f"{hours // 24} d ago"


def progress_bar(done: int, total: int, cells: int = _BAR_CELLS) -> tuple[str, str]:
    """The filled and empty parts of a ``cells``-wide bar for ``done`` of ``total``."""
    if total <= 0:
        return "", "─" * cells
    done = max(0, min(done, total))
    filled = round(cells * done / total)
    if done and not filled:
        filled = 1  # any progress shows
    if done < total and filled == cells:
        filled = cells - 1  # only a finished plan looks full
    return "━" * filled, "─" * (cells - filled)


def _clean(text: str) -> str:
    """One line of untrusted text: controls stripped, whitespace runs collapsed."""
    return " ".join(strip_terminal_controls(text).split())


def _row_title(info: PlanInfo) -> str:
    """What a row shows as its title: the file name for a file that cannot be opened."""
    if info.problem:
        return _clean(info.name)
    return _clean(info.title) or _clean(info.name) or "Untitled plan"


def _problem_text(info: PlanInfo) -> str:
    """The problem without the file name it often starts with (the row shows it)."""
    problem = _clean(info.problem or "")
    name = _clean(info.name)
    if problem.startswith(name + " "):
        problem = problem[len(name) + 1 :]
    return problem


def matches_filter(info: PlanInfo, query: str) -> bool:
    """Every whitespace-separated word of ``query`` occurs in the title or file name."""
    words = query.casefold().split()
    if not words:
        return True
    haystack = f"{_clean(info.title)} {_clean(info.name)}".casefold()
    return all(word in haystack for word in words)


# ------------------------------------------------------------------ the list


class PlanList(OptionList, can_focus=False):
    """The picker's list. It never takes focus: the filter input keeps it.

    Rows are rich grids styled from this widget's component classes, rebuilt
    when the theme changes.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "plan-list--create",
        "plan-list--title",
        "plan-list--meta",
        "plan-list--bar-done",
        "plan-list--bar-todo",
        "plan-list--count",
        "plan-list--problem",
        "plan-list--empty",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, compact=True)
        self._plans: list[PlanInfo] = []
        self._shown: list[PlanInfo] = []
        self._query = ""
        self._now = 0.0
        self._title_column: int | None = None
        self._palette: tuple[Style, ...] = ()

    # -- content

    def show(self, plans: Sequence[PlanInfo], query: str, now: float) -> None:
        """Show the create entry and the ``plans`` that match ``query``."""
        self._plans = list(plans)
        self._query = query
        self._now = now
        self._rebuild(keep=self.highlighted_path, query_changed=True)

    def set_query(self, query: str) -> None:
        if query != self._query:
            self._query = query
            self._rebuild(keep=None, query_changed=True)

    @property
    def shown_plans(self) -> list[PlanInfo]:
        """The plans currently listed (after filtering), in order."""
        return list(self._shown)

    @property
    def highlighted_path(self) -> Path | None:
        option = self.highlighted_option
        info = self.plan_for(option.id) if option is not None else None
        return info.path if info is not None else None

    def plan_for(self, option_id: str | None) -> PlanInfo | None:
        if option_id is None or not option_id.startswith(_PLAN_PREFIX):
            return None
        return self._shown[int(option_id[len(_PLAN_PREFIX) :])]

    def _rebuild(self, keep: Path | None, query_changed: bool) -> None:
        query = self._query.strip()
        self._shown = [info for info in self._plans if matches_filter(info, query)]
        self._title_column = self._title_width()
        self._palette = self._palette_key()
        options: list[Option | None] = [Option(self._create_row(), id=CREATE_ID)]
        for index, info in enumerate(self._shown):
            options.append(
                Option(
                    self._plan_row(info), id=f"{_PLAN_PREFIX}{index}", disabled=bool(info.problem)
                )
            )
        if not self._shown:
            message = f"No plan matches “{_clean(query)}”." if query else "No saved plans yet."
            options.append(Option(Text(message, self._style("empty")), id="empty", disabled=True))
        self.set_options(options)
        self.highlighted = self._pick_highlight(keep, query, query_changed)

    def _pick_highlight(self, keep: Path | None, query: str, query_changed: bool) -> int:
        if keep is not None:
            for index, info in enumerate(self._shown):
                if info.path == keep and not info.problem:
                    return index + 1
        if query and query_changed:
            for index, info in enumerate(self._shown):
                if not info.problem:
                    return index + 1  # the best match, not "create"
        return 0

    # -- rows

    def _style(self, name: str) -> Style:
        return solid_component_style(self, f"plan-list--{name}")

    def _create_row(self) -> RenderableType:
        query = _clean(self._query)
        text = Text("+ Create new plan", self._style("create"), no_wrap=True, overflow="ellipsis")
        if query:
            text.append(f"  named “{query}”", self._style("meta"))
        return text

    def _title_width(self) -> int | None:
        """One title column width for every row, so ages and bars line up.

        As wide as the longest title (the age follows the titles, not the far
        right edge of a wide terminal), at most what the width leaves; None
        before the list has a size.
        """
        available = self.scrollable_content_region.width
        if available <= 0:
            return None
        longest = max((cell_len(_row_title(info)) + 2 for info in self._shown), default=_MIN_TITLE)
        room = available - _AGE_WIDTH - _PROGRESS_WIDTH - 2 * _GAP
        return max(_MIN_TITLE, min(longest, room))

    def _plan_row(self, info: PlanInfo) -> RenderableType:
        title = _row_title(info)
        age = format_age(self._now - info.modified)
        grid = Table.grid(padding=(0, _GAP), expand=False)
        if self._title_column is None:
            grid.expand = True
            grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        else:
            grid.add_column(width=self._title_column, no_wrap=True, overflow="ellipsis")
        grid.add_column(width=_AGE_WIDTH, justify="right", no_wrap=True)
        grid.add_column(width=_PROGRESS_WIDTH, no_wrap=True)
        meta = self._style("meta")
        if info.problem:
            dim = self._style("problem")
            label = Text("  ", no_wrap=True, overflow="ellipsis")
            label.append(title, dim)
            grid.add_row(label, Text(age, dim), Text("cannot open", dim))
            reason = Text("    ", no_wrap=True, overflow="ellipsis")
            reason.append(f"⚠ {_problem_text(info)}", dim)
            return Group(grid, reason)
        label = Text("  ")
        label.append(title, self._style("title"))
        label.overflow = "ellipsis"
        progress = Text(no_wrap=True)
        if info.total:
            filled, empty = progress_bar(info.done, info.total)
            progress.append(filled, self._style("bar-done"))
            progress.append(empty, self._style("bar-todo"))
            progress.append(f" {info.done}/{info.total}", self._style("count"))
        else:
            progress.append("no steps", meta)
        grid.add_row(label, Text(age, meta), progress)
        return grid

    def on_resize(self, event: events.Resize) -> None:
        if self._title_width() != self._title_column:
            self._restyle()

    def notify_style_update(self) -> None:
        """Theme or CSS changed: the rows carry resolved styles, so rebuild them.

        Also called for hover and focus changes; rows are rebuilt only when
        one of their styles really changed.
        """
        super().notify_style_update()
        if self.is_mounted:
            self.call_later(self._restyle_if_changed)

    def _palette_key(self) -> tuple[Style, ...]:
        return tuple(self._style(name.removeprefix("plan-list--"))
                     for name in sorted(self.COMPONENT_CLASSES))  # fmt: skip

    def _restyle_if_changed(self) -> None:
        key = self._palette_key()
        if key != self._palette:
            self._restyle()

    def _restyle(self) -> None:
        highlighted = self.highlighted
        self._rebuild(keep=None, query_changed=False)
        if highlighted is not None and highlighted < self.option_count:
            self.highlighted = highlighted


# ----------------------------------------------------------------- the filter


class FilterInput(Input):
    """The filter box. ``j``/``k`` move the list while it is empty, else they type."""

    class Move(Message):
        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    def on_key(self, event: events.Key) -> None:
        # Runs before Input's own key handler; prevent_default stops that one.
        if event.key in ("j", "k") and not self.value:
            event.stop()
            event.prevent_default()
            self.post_message(self.Move(1 if event.key == "j" else -1))


# ---------------------------------------------------------- the create modal


class CreatePlanScreen(KeyGrace, AnswersWhenRemoved[str], ModalScreen[str | None]):
    """Asks for an optional plan name: Enter answers the text ("" for none), Esc None.

    Enter creates only once the dialog is ready (``KeyGrace``): a double Enter in
    the picker does not create a plan.
    """

    CSS_PATH = "plan_picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back", show=False),
    ]

    def __init__(self, initial: str = "") -> None:
        super().__init__()
        self._initial = initial

    def compose(self) -> ComposeResult:
        with Vertical(id="create-box"):
            yield Static(Text("Create a new plan", style="bold"), id="create-title")
            yield Static("Name it (optional): it becomes part of the file name.", id="create-help")
            yield Input(
                self._initial,
                placeholder="e.g. rate limiting",
                id="create-name",
                max_length=80,
                compact=True,
            )
            yield Static("", id="create-file")
            yield Static(
                Text.assemble(("Enter", "bold"), " create   ", ("Esc", "bold"), " back"),
                id="create-keys",
            )

    def on_mount(self) -> None:
        self._show_file_name(self._initial)
        self.query_one("#create-name", Input).focus()

    def _show_file_name(self, value: str) -> None:
        slug = slugify(value.strip().removesuffix(".md")) or "plan"
        self.query_one("#create-file", Static).update(
            Text.assemble(("File: ", "dim"), ("YYYY-MM-DD-HHMM-", "dim"), f"{slug}.md")
        )

    @on(Input.Changed, "#create-name")
    def _name_changed(self, event: Input.Changed) -> None:
        self._show_file_name(event.value)

    @on(Input.Submitted, "#create-name")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


# ------------------------------------------------------------------ the screen


class PlanPickerScreen(AnswersWhenRemoved[PickerChoice], Screen[PickerChoice | None]):
    """Pick a saved plan or create one; see the module docstring for the keys."""

    CSS_PATH = "plan_picker.tcss"
    AUTO_FOCUS = "#picker-filter"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    def __init__(self, store: PlanStore, *, now: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.store = store
        self._now = now
        self._plans: list[PlanInfo] = []

    # -- layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="picker-header"):
            yield Static(Text("Plans", style="bold"), id="picker-title")
            yield Static("", id="picker-count")
        with Horizontal(id="picker-filter-row"):
            yield Static("›", id="picker-prompt")
            yield FilterInput(placeholder="Type to filter plans…", id="picker-filter", compact=True)
        yield PlanList(id="picker-list")
        yield ReviewFooter(PICKER_HINTS, id="picker-footer")

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        """Read the store again (keeps the filter and, if it is still there, the highlight)."""
        self._plans = self.store.list()
        count = len(self._plans)
        where = self._shown_dir()
        noun = "plan" if count == 1 else "plans"
        self.query_one("#picker-count", Static).update(
            Text(f"{count} {noun} in {where}", no_wrap=True, overflow="ellipsis")
        )
        self.plan_list.show(self._plans, self.filter_input.value, self._now())

    def _shown_dir(self) -> str:
        try:
            return str(self.store.plans_dir.relative_to(self.store.root))
        except ValueError:  # pragma: no cover - plans_dir is always under root
            return str(self.store.plans_dir)

    # -- parts

    @property
    def plan_list(self) -> PlanList:
        return self.query_one(PlanList)

    @property
    def filter_input(self) -> FilterInput:
        return self.query_one(FilterInput)

    @property
    def plans(self) -> list[PlanInfo]:
        """Every plan read from the store, newest first (unfiltered)."""
        return list(self._plans)

    # -- keys

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.plan_list.set_query(event.value)

    @on(FilterInput.Move)
    def _filter_move(self, event: FilterInput.Move) -> None:
        event.stop()
        self.action_move(event.delta)

    def action_move(self, delta: int) -> None:
        if self.filter_input.value.strip() and self._at_edge(delta):
            # A filtered list does not wrap: Down past the last match must not land
            # on "+ Create new plan" (Enter would create a plan named after the filter).
            return
        if delta < 0:
            self.plan_list.action_cursor_up()
        else:
            self.plan_list.action_cursor_down()

    def _at_edge(self, delta: int) -> bool:
        """Whether moving by ``delta`` from the highlighted row would wrap around."""
        plans = self.plan_list
        enabled = [n for n, option in enumerate(plans.options) if not option.disabled]
        current = plans.highlighted
        if current is None or not enabled:
            return True
        return current >= enabled[-1] if delta > 0 else current <= enabled[0]

    def action_page(self, direction: int) -> None:
        if direction < 0:
            self.plan_list.action_page_up()
        else:
            self.plan_list.action_page_down()

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.plan_list.action_select()

    def action_back(self) -> None:
        self.dismiss(None)

    # -- choosing

    @on(OptionList.OptionSelected, "#picker-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id
        if option_id == CREATE_ID:
            self._ask_name()
            return
        info = self.plan_list.plan_for(option_id)
        if info is not None and not info.problem:
            self._open(info)

    def _ask_name(self) -> None:
        def answered(name: str | None) -> None:
            if name is None:
                self.filter_input.focus()
                return
            self.dismiss(PickerChoice("create", name=name or None))

        push_answering(self, CreatePlanScreen(self.filter_input.value.strip()), answered)

    def _open(self, info: PlanInfo) -> None:
        try:
            text = self.store.read(info.path)
        except PlanStoreError as error:
            self.notify(strip_terminal_controls(str(error)), severity="error")
            self.reload()
            return

        def answered(action: str | None) -> None:
            if action in ("execute", "refine", "exit", "discard"):
                # Checked just above; mypy cannot narrow a str to the Literal with `in`.
                self.dismiss(PickerChoice(action, path=info.path))  # type: ignore[arg-type]
                return
            self.reload()
            self.filter_input.focus()

        push_answering(self, PlanActionScreen(info.path, text), answered)
