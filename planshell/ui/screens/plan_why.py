"""``/plan why``: what plan mode allows, and why (``PlanController.capabilities()``).

Pushed by :class:`planshell.ui.plan_ui.PlanModeUI`; it shows the markdown it is
given (terminal controls stripped) and decides nothing.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["PlanWhyScreen"]


class PlanWhyScreen(ModalScreen[None]):
    """``/plan why``: ``PlanController.capabilities()`` as scrollable markdown."""

    DEFAULT_CSS = """
    PlanWhyScreen {
        align: center middle;
        background: $background 60%;
    }
    PlanWhyScreen #why-box {
        width: 110;
        max-width: 95%;
        height: 90%;
        padding: 0 1;
        border: round $primary;
        background: $surface;
    }
    PlanWhyScreen #why-body {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    PlanWhyScreen #why-foot {
        height: 1;
        color: $text-muted;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("down,j", "scroll(1)", "Down", show=False),
        Binding("up,k", "scroll(-1)", "Up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
    ]

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        from rich.markdown import Markdown

        from planshell.sanitize import strip_terminal_controls

        with Vertical(id="why-box"):
            with VerticalScroll(id="why-body"):
                yield Static(Markdown(strip_terminal_controls(self.markdown)), id="why-text")
            yield Static(
                Text.assemble(("↑↓ PgUp PgDn", "bold"), " scroll   ", ("Esc", "bold"), " close"),
                id="why-foot",
            )

    def on_mount(self) -> None:
        self.query_one("#why-body").focus()

    def action_scroll(self, rows: int) -> None:
        self.query_one("#why-body", VerticalScroll).scroll_relative(y=rows, animate=False)

    def action_page(self, direction: int) -> None:
        body = self.query_one("#why-body", VerticalScroll)
        if direction > 0:
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
