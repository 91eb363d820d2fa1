"""``s`` on the review: the cited files that changed since the plan was written, as diffs.

The engine compares the files a plan cites with the hashes recorded when it
was written (:mod:`planshell.plan.staleness`) and makes the diffs; this dialog
only shows them. Diffs of repository files are hostile text: every
non-printable character is shown as an escape (``diff_text``).
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType

from planshell.plan.staleness import Staleness
from planshell.sanitize import strip_terminal_controls
from planshell.ui.screens.approval import diff_text
from planshell.ui.screens.text_dialog import TextDialog

__all__ = ["StaleFilesScreen"]


class StaleFilesScreen(TextDialog):
    """What changed in the plan's cited files since it was written; Esc, s or q closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,s,q", "close", "Close")]

    def __init__(self, staleness: Staleness, diffs: str) -> None:
        summary = strip_terminal_controls(staleness.summary) or "No cited file changed."
        super().__init__(
            f"Plan {summary}",
            diff_text(diffs),
            "The plan was written against the earlier content: check it still holds. "
            "Esc closes this.",
        )
        self.staleness = staleness
        self.diffs = diffs
