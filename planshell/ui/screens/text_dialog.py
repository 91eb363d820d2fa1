"""A read-only dialog: a title, a scrolling body of text, a footnote; its keys close it.

The review's ``h`` (lines the review does not show) and ``s`` (cited files that
changed) show repository and model text this way: as ``rich.Text`` built by
the caller (sanitised there), never as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["TextDialog"]


class TextDialog(ModalScreen[None]):
    """Subclasses bind their close keys to ``close`` and give the three texts."""

    CSS_PATH = "dialogs.tcss"

    def __init__(self, title: str, body: Text, foot: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.foot = foot

    def compose(self) -> ComposeResult:
        with Vertical(id="text-dialog"):
            yield Static(Text(self.title_text), id="text-title")
            with VerticalScroll(id="text-body"):
                yield Static(self.body, id="text-content")
            yield Static(Text(self.foot), id="text-foot")

    def action_close(self) -> None:
        self.dismiss(None)
