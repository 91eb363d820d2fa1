"""The comment dialog of the review screen (``c``): one comment on one section or selection.

It opens on the section at the top of the view and shows its title and the
start of its text (model text: sanitised, plain). Ctrl+N and Ctrl+B move to
the next or previous section (a plan that fits on screen has no "top"
section to scroll to). With text selected in the plan view it opens on the
selection instead: its first lines are the quote, and Ctrl+N/Ctrl+B leave it
for whole sections. It answers a :class:`CommentAnswer`, or None (Esc, any
dismissal): nothing is written then; an empty buffer does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, NamedTuple

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.plan.review_format import MAX_COMMENT_CHARS
from planshell.sanitize import strip_terminal_controls
from planshell.ui.widgets.feedback_area import FeedbackArea

__all__ = ["CommentAnswer", "CommentScreen"]

_QUOTE_ROWS = 3  # lines of a selection the dialog shows


class CommentAnswer(NamedTuple):
    """The comment, and what it is about: section ``section``, or the selection in it."""

    section: int
    text: str
    on_selection: bool = False


class CommentScreen(ModalScreen[CommentAnswer | None]):
    """A small editor: Enter saves the comment, Ctrl+J adds a line, Esc cancels."""

    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "#comment-input"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "section(1)", "Next section", show=False),
        Binding("ctrl+b", "section(-1)", "Previous section", show=False),
    ]

    def __init__(
        self, sections: Sequence[tuple[str, str]], index: int, selection: str = ""
    ) -> None:
        """``sections``: (title, text) of every section; ``index``: the one to start on.

        ``selection``: the text selected in the plan view (in section ``index``),
        which the comment is about until Ctrl+N/Ctrl+B pick a whole section.
        """
        super().__init__()
        self.sections = [
            (strip_terminal_controls(t).strip() or "(preamble)", strip_terminal_controls(q).strip())
            for t, q in sections
        ]
        self.index = max(0, min(index, len(self.sections) - 1))
        self.selection = strip_terminal_controls(selection).strip("\n")
        self.on_selection = bool(self.selection.strip())

    @property
    def section(self) -> str:
        return self.sections[self.index][0]

    def compose(self) -> ComposeResult:
        with Vertical(id="comment-dialog"):
            yield Static(id="comment-title")
            yield Static(id="comment-quote")
            yield FeedbackArea(id="comment-input", soft_wrap=True, show_line_numbers=False)
            yield Static(id="comment-keys")

    def on_mount(self) -> None:
        self._show_keys()
        self._show_section()

    def _show_section(self) -> None:
        title, quote = self.sections[self.index]
        what = "Comment on the selection in " if self.on_selection else "Comment on "
        self.query_one("#comment-title", Static).update(
            Text.assemble((what, "bold"), (title, "bold reverse"), no_wrap=True)
        )
        widget = self.query_one("#comment-quote", Static)
        widget.set_class(self.on_selection, "-selection")
        if self.on_selection:
            lines = self.selection.split("\n")
            shown = [f"▏{line}" for line in lines[:_QUOTE_ROWS]]
            if len(lines) > _QUOTE_ROWS:
                more = len(lines) - _QUOTE_ROWS
                shown.append(f"▏… {more} more line{'' if more == 1 else 's'}")
            widget.update(Text("\n".join(shown)))
            widget.display = True
            return
        first = quote.split("\n")[:2]
        widget.update(Text("\n".join(f"▏{line}" for line in first)))
        widget.display = bool(quote)

    def action_section(self, step: int) -> None:
        if self.on_selection:  # from the selection to whole sections, starting with its own
            self.on_selection = False
            self._show_keys()
            self._show_section()
            return
        self.index = (self.index + step) % len(self.sections)
        self._show_section()

    def _show_keys(self) -> None:
        other = "whole section" if self.on_selection else "other section"
        self.query_one("#comment-keys", Static).update(
            Text(f"Enter save · Ctrl+J new line · Ctrl+N/Ctrl+B {other} · Esc cancel", style="dim")
        )

    @on(FeedbackArea.Submitted)
    def _submitted(self, event: FeedbackArea.Submitted) -> None:
        event.stop()
        text = event.text.strip()
        if not text:
            return  # an empty buffer does nothing
        if len(text) > MAX_COMMENT_CHARS:
            self.notify(f"A comment is at most {MAX_COMMENT_CHARS} characters.", severity="warning")
            return
        self.dismiss(CommentAnswer(self.index, text, self.on_selection))

    @on(FeedbackArea.Cancelled)
    def _cancelled(self, event: FeedbackArea.Cancelled) -> None:
        event.stop()
        self.dismiss(None)
