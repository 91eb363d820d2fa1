"""The critic's points in the review: ``> [!CRITIC]`` annotations, apart from the person's comments.

The points come from ``ReviewRequest.critic`` (planshell/plan/critic.py), never
from the plan text: a ``> [!CRITIC]`` line the plan's author wrote stays a quote
in the plan view. Each point can be turned into the person's own comment
(``c`` or Enter: the screen writes a ``> [!REVIEW]`` line) or dismissed for this
round (``x`` or Delete). ``k`` on the review focuses the list; Esc goes back.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from planshell.sanitize import plain_line

__all__ = ["CriticList", "CriticPanel"]

CRITIC_LABEL = "[!CRITIC]"


class CriticList(OptionList):
    """The points; the keys that act on the highlighted one live here (only while focused)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c,enter", "comment", "Make it my comment"),
        Binding("x,delete", "dismiss_point", "Dismiss"),
        Binding("escape,k", "back", "Back to the plan"),
    ]

    def action_comment(self) -> None:
        panel = self._panel
        if panel is not None and self.highlighted is not None:
            panel.post_message(
                CriticPanel.Adopt(panel, self.highlighted, panel.points[self.highlighted])
            )

    def action_dismiss_point(self) -> None:
        panel = self._panel
        if panel is not None and self.highlighted is not None:
            panel.drop(self.highlighted)

    def action_back(self) -> None:
        panel = self._panel
        if panel is not None:
            panel.post_message(CriticPanel.Back(panel))

    @property
    def _panel(self) -> CriticPanel | None:
        parent = self.parent
        return parent if isinstance(parent, CriticPanel) else None


class CriticPanel(Vertical):
    """A header ("critic (…) · 3 points · k") and the list; hidden when no point is left."""

    class Adopt(Message):
        """The person turns point ``index`` into their own comment."""

        def __init__(self, panel: CriticPanel, index: int, point: str) -> None:
            super().__init__()
            self.panel = panel
            self.index = index
            self.point = point

    class Back(Message):
        def __init__(self, panel: CriticPanel) -> None:
            super().__init__()
            self.panel = panel

    def __init__(self, points: tuple[str, ...], label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.points = [plain_line(point, 400) for point in points]  # sanitised again: a view
        self.label = plain_line(label, 80) or "critic"

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="critic-header")
        yield CriticList(*self._options(), id="critic-list")

    def on_mount(self) -> None:
        self.display = bool(self.points)

    @property
    def point_list(self) -> CriticList:
        return self.query_one(CriticList)

    def drop(self, index: int) -> None:
        """Hide point ``index`` for this round (dismissed, or made a comment)."""
        if not 0 <= index < len(self.points):
            return
        del self.points[index]
        options = self.point_list
        options.remove_option_at_index(index)
        self.query_one("#critic-header", Static).update(self._header())
        if not self.points:
            self.display = False
            self.post_message(self.Back(self))
        else:
            options.highlighted = min(index, len(self.points) - 1)

    def _header(self) -> Text:
        count = len(self.points)
        noun = "point" if count == 1 else "points"
        return Text.assemble(
            (f" {CRITIC_LABEL} ", "bold reverse"),
            " ",
            (self.label, "bold"),
            f" · {count} {noun} · not your comments",
            ("   k: c make it my comment · x dismiss · Esc back", "dim"),
            no_wrap=True,
            overflow="ellipsis",
        )

    def _options(self) -> list[Option]:
        return [
            Option(Text.assemble(("> ", "dim"), (f"{CRITIC_LABEL} ", "bold"), point))
            for point in self.points
        ]
