"""The comment dialog of the review screen (``c``): one comment on one section.

It opens on the section at the top of the view and shows its title and the
start of its text (model text: sanitised, plain). Ctrl+N and Ctrl+B move to
the next or previous section (a plan that fits on screen has no "top"
section to scroll to). It answers ``(section index, comment)``, or None
(Esc, any dismissal): nothing is written then; an empty buffer does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.review_web.feedback import MAX_COMMENT_CHARS
from planshell.sanitize import strip_terminal_controls
from planshell.ui.widgets.feedback_area import FeedbackArea

__all__ = ["CommentScreen"]


class CommentScreen(ModalScreen[tuple[int, str] | None]):
    """A small editor: Enter saves the comment, Ctrl+J adds a line, Esc cancels."""

    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "#comment-input"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "section(1)", "Next section", show=False),
        Binding("ctrl+b", "section(-1)", "Previous section", show=False),
    ]

    def __init__(self, sections: Sequence[tuple[str, str]], index: int) -> None:
        """``sections``: (title, text) of every section; ``index``: the one to start on."""
        super().__init__()
        self.sections = [
            (strip_terminal_controls(t).strip() or "(preamble)", strip_terminal_controls(q).strip())
            for t, q in sections
        ]
        self.index = max(0, min(index, len(self.sections) - 1))

    @property
    def section(self) -> str:
        return self.sections[self.index][0]

    def compose(self) -> ComposeResult:
        with Vertical(id="comment-dialog"):
            yield Static(id="comment-title")
            yield Static(id="comment-quote")
            yield FeedbackArea(id="comment-input", soft_wrap=True, show_line_numbers=False)
            yield Static(
                Text(
                    "Enter save · Ctrl+J new line · Ctrl+N/Ctrl+B other section · Esc cancel",
                    style="dim",
                ),
                id="comment-keys",
            )

    def on_mount(self) -> None:
        self._show_section()

    def _show_section(self) -> None:
        title, quote = self.sections[self.index]
        self.query_one("#comment-title", Static).update(
            Text.assemble(("Comment on ", "bold"), (title, "bold reverse"), no_wrap=True)
        )
        first = quote.split("\n")[:2]
        widget = self.query_one("#comment-quote", Static)
        widget.update(Text("\n".join(f"▏{line}" for line in first)))
        widget.display = bool(quote)

    def action_section(self, step: int) -> None:
        self.index = (self.index + step) % len(self.sections)
        self._show_section()

    @on(FeedbackArea.Submitted)
    def _submitted(self, event: FeedbackArea.Submitted) -> None:
        event.stop()
        text = event.text.strip()
        if not text:
            return  # an empty buffer does nothing
        if len(text) > MAX_COMMENT_CHARS:
            self.notify(f"A comment is at most {MAX_COMMENT_CHARS} characters.", severity="warning")
            return
        self.dismiss((self.index, text))

    @on(FeedbackArea.Cancelled)
    def _cancelled(self, event: FeedbackArea.Cancelled) -> None:
        event.stop()
        self.dismiss(None)
