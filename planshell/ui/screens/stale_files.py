"""``s`` on the review: the cited files that changed since the plan was written, as diffs.

The engine compares the files a plan cites with the hashes recorded when it
was written (:mod:`planshell.plan.staleness`) and makes the diffs; this dialog
only shows them. Diffs of repository files are hostile text: every
non-printable character is shown as an escape (``diff_text``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.plan.staleness import Staleness
from planshell.sanitize import strip_terminal_controls
from planshell.ui.screens.approval import diff_text

__all__ = ["StaleFilesScreen"]


class StaleFilesScreen(ModalScreen[None]):
    """What changed in the plan's cited files since it was written; Esc, s or q closes."""

    DEFAULT_CSS = """
    StaleFilesScreen {
        align: center middle;
        background: $background 60%;
    }
    StaleFilesScreen #stale-dialog {
        width: 110;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: round $warning;
        background: $surface;
    }
    StaleFilesScreen #stale-title { text-style: bold; color: $text-warning; }
    StaleFilesScreen #stale-body { height: auto; max-height: 30; margin-top: 1; }
    StaleFilesScreen #stale-foot { margin-top: 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,s,q", "close", "Close")]

    def __init__(self, staleness: Staleness, diffs: str) -> None:
        super().__init__()
        self.staleness = staleness
        self.diffs = diffs

    def compose(self) -> ComposeResult:
        with Vertical(id="stale-dialog"):
            summary = strip_terminal_controls(self.staleness.summary) or "No cited file changed."
            yield Static(Text(f"Plan {summary}"), id="stale-title")
            with VerticalScroll(id="stale-body"):
                yield Static(diff_text(self.diffs), id="stale-diffs")
            yield Static(
                Text(
                    "The plan was written against the earlier content: check it still holds. "
                    "Esc closes this."
                ),
                id="stale-foot",
            )

    def action_close(self) -> None:
        self.dismiss(None)
