"""The review screen's side panel: the person's comments and what came of each.

Model-authored text (the quoted plan text, the model's reply) and the person's
own text are shown as plain ``Text`` after :func:`strip_terminal_controls`:
nothing in them is markup or a terminal control.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from planshell.plan.review_comments import ReviewComment
from planshell.sanitize import strip_terminal_controls

__all__ = ["CommentsPanel", "comment_entry"]

_QUOTE_LINES = 3


def _clean(text: str) -> str:
    return strip_terminal_controls(text).strip()


def comment_entry(comment: ReviewComment, *, new: bool = False) -> Text:
    """One comment: status, section, the quoted text, the comment, the model's reply."""
    status = "new" if new else "open" if comment.open else "addressed"
    text = Text()
    text.append(f"{'●' if comment.open else '✓'} {status}", style="bold")
    section = _clean(comment.section) or "(preamble)"
    text.append(f"  {comment.id} · {section}", style="dim")
    if comment.note:
        text.append(f"\n  {_clean(comment.note)}", style="italic")
    quote = _clean(comment.quote).split("\n")
    if quote and quote[0]:
        shown = quote[:_QUOTE_LINES] + (["…"] if len(quote) > _QUOTE_LINES else [])
        for line in shown:
            text.append(f"\n  ▏{line}", style="dim")
    text.append(f"\n  {_clean(comment.text)}")
    if comment.reply:
        text.append(f"\n  ↳ {_clean(comment.reply)}", style="italic")
    return text


class CommentsPanel(VerticalScroll, can_focus=False):
    """Lists comments (earlier rounds' with their status, then this round's new ones)."""

    def show(self, tracked: Sequence[ReviewComment], new: Sequence[ReviewComment]) -> None:
        self.remove_children()
        open_count = sum(1 for c in tracked if c.open) + len(new)
        header = Text(f"Comments · {open_count} open", style="bold")
        entries: list[Static] = [Static(header, classes="comments-header")]
        for comment in tracked:
            entries.append(
                Static(
                    comment_entry(comment),
                    classes="comment -open" if comment.open else "comment -addressed",
                )
            )
        for comment in new:
            entries.append(Static(comment_entry(comment, new=True), classes="comment -new"))
        if not tracked and not new:
            entries.append(Static(Text("c comments on the section at the top", style="dim")))
        self.mount_all(entries)
