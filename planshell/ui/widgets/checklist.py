"""ChecklistPanel: the plan's steps and how far execution has got.

Fed from the engine's ``TodosChanged.items``: ``(content, status)`` pairs where
status is ``"pending"``, ``"in_progress"`` or ``"completed"``, or for a closed plan
step ``"unverified"`` (ticked done with no recorded work) or ``"skipped"``. It
shows a header ``Plan progress 2/5`` and one row per item::

    ☑ Read the callers          (completed: muted, struck through)
    ⚠ Update the docs           (ticked without evidence: done, marked in warning colour)
    ⊘ Migrate (skipped: …)      (skipped: done, muted mark)
    ◐ Add the rate limiter      (in progress: bold)
    ☐ Write the tests
    ┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄
    ☐ Verification: pytest -q   (the last item, set apart)

Long items wrap with a hanging indent. The panel is at most 12 rows high (the
header stays put, the items scroll) and keeps the item in progress in view.
Text is model-authored, so it is stripped of terminal controls. The chat
screen mounts it and toggles ``display``; its CSS lives in
``checklist.tcss`` (beside this module) and is loaded as the widget's ``DEFAULT_CSS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Region, Size
from textual.widget import Widget
from textual.widgets import Static

from planshell.sanitize import strip_terminal_controls
from planshell.ui.styling import solid_component_style

__all__ = ["MARKS", "ChecklistBody", "ChecklistPanel", "normalise_items"]

_CSS_FILE = Path(__file__).with_name("checklist.tcss")

MARKS = {
    "pending": "☐",
    "in_progress": "◐",
    "completed": "☑",
    "unverified": "⚠",
    "skipped": "⊘",
}
_CLOSED = frozenset({"completed", "unverified", "skipped"})
_VERIFICATION = "verification:"
_RULE = "┄"


def normalise_items(items: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Sanitised one-line contents; unknown statuses count as pending."""
    out: list[tuple[str, str]] = []
    for content, status in items:
        text = " ".join(strip_terminal_controls(str(content)).split())
        out.append((text, status if status in MARKS else "pending"))
    return tuple(out)


class ChecklistBody(Widget):
    """The item rows, wrapped to the width with a hanging indent."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "checklist--pending",
        "checklist--active",
        "checklist--done",
        "checklist--mark",
        "checklist--mark-active",
        "checklist--mark-done",
        "checklist--mark-warn",
        "checklist--rule",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._items: tuple[tuple[str, str], ...] = ()
        self._cache: tuple[int, list[Text], int | None] | None = None

    def set_items(self, items: tuple[tuple[str, str], ...]) -> None:
        self._items = items
        self._cache = None
        self.refresh(layout=True)

    def _style(self, name: str) -> Style:
        return solid_component_style(self, f"checklist--{name}")

    def _wrap_console(self) -> Console:
        # Not ``_console``: that name is Textual's (``Widget._console``).
        try:
            return self.app.console
        except Exception:  # pragma: no cover - not mounted yet
            return Console(width=80)

    def lines(self, width: int) -> tuple[list[Text], int | None]:
        """The rows at ``width`` and the row of the item in progress (if any)."""
        width = max(4, width)
        if self._cache is not None and self._cache[0] == width:
            return self._cache[1], self._cache[2]
        console = self._wrap_console()
        rows: list[Text] = []
        active: int | None = None
        last = len(self._items) - 1
        for index, (content, status) in enumerate(self._items):
            if index == last and index > 0 and content.casefold().startswith(_VERIFICATION):
                rows.append(Text(_RULE * width, self._style("rule")))
            if status == "completed":
                text_style, mark_style = self._style("done"), self._style("mark-done")
            elif status == "unverified":
                text_style, mark_style = self._style("done"), self._style("mark-warn")
            elif status == "skipped":
                text_style, mark_style = self._style("done"), self._style("mark")
            elif status == "in_progress":
                text_style, mark_style = self._style("active"), self._style("mark-active")
                if active is None:
                    active = len(rows)
            else:
                text_style, mark_style = self._style("pending"), self._style("mark")
            wrapped = Text(content or " ", text_style).wrap(console, width - 2, overflow="fold")
            for number, line in enumerate(wrapped):
                row = Text(no_wrap=True, overflow="crop")
                row.append(f"{MARKS[status]} " if number == 0 else "  ", mark_style)
                row.append_text(line)
                rows.append(row)
        self._cache = (width, rows, active)
        return rows, active

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.lines(width)[0]))

    def render(self) -> Text:
        rows, _active = self.lines(self.content_region.width or self.size.width)
        if not rows:
            return Text("No steps yet.", self._style("pending"))
        return Text("\n", no_wrap=True, overflow="crop").join(rows)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache = None

    @property
    def active_row(self) -> int | None:
        width = self.content_region.width or self.size.width
        return self.lines(width)[1] if width else None


class ChecklistPanel(Vertical):
    """Header ``Plan progress done/total`` over the scrolling item rows."""

    DEFAULT_CSS = _CSS_FILE.read_text(encoding="utf-8")

    def __init__(
        self,
        items: Sequence[tuple[str, str]] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._items = normalise_items(items)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="checklist-header")
        with VerticalScroll(id="checklist-scroll"):
            yield ChecklistBody(id="checklist-body")

    def on_mount(self) -> None:
        self.query_one(ChecklistBody).set_items(self._items)
        self.call_after_refresh(self._reveal_active)

    @property
    def items(self) -> tuple[tuple[str, str], ...]:
        """The items shown (sanitised)."""
        return self._items

    @property
    def done(self) -> int:
        return sum(1 for _content, status in self._items if status in _CLOSED)

    @property
    def total(self) -> int:
        return len(self._items)

    def update_items(self, items: Sequence[tuple[str, str]]) -> None:
        """Show ``items`` (``(content, status)`` pairs, e.g. ``TodosChanged.items``)."""
        self._items = normalise_items(items)
        if not self.is_mounted:
            return
        self.query_one("#checklist-header", Static).update(self._header())
        self.query_one(ChecklistBody).set_items(self._items)
        self.call_after_refresh(self._reveal_active)

    def _header(self) -> Content:
        return Content.assemble(
            ("Plan progress", "bold"), " ", (f"{self.done}/{self.total}", "$text-accent bold")
        )

    def _reveal_active(self) -> None:
        """Scroll the item in progress into view (only if it is not visible)."""
        body = self.query_one(ChecklistBody)
        row = body.active_row
        if row is None:
            return
        scroll = self.query_one("#checklist-scroll", VerticalScroll)
        scroll.scroll_to_region(Region(0, row, 1, 1), animate=False, immediate=True)
