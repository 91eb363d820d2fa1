"""What changed in an approved plan, shown before its review (docs/plan-mode.md).

When the plan file no longer holds the text a person approved, execution
pauses and this screen shows the unified diff from the approved text to the
file; Enter goes on to the review of the changed plan (after the key grace,
docs/security.md), Esc keeps execution paused. It decides nothing itself: only the review that follows can approve.
The diff is model- or attacker-written text: every non-printable character is
shown as an escape (``diff_text``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from planshell.plan.decider import ReviewRequest
from planshell.ui.screens.approval import diff_text, one_line
from planshell.ui.screens.yes_no import YesNoScreen

__all__ = ["PlanDiffScreen"]


class PlanDiffScreen(YesNoScreen):
    """True: open the review; False (Esc, any dismissal): execution stays paused.

    Enter waits for the key grace: a key typed for the chat must not skip the diff.
    """

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,r", "answer(True)", "Review the changed plan"),
        Binding("escape", "answer(False)", "Keep paused"),
    ]

    def __init__(self, request: ReviewRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-diff", classes="ask-panel"):
            yield Static(
                Text(one_line(self.request.notice, 400)), id="plan-diff-title", classes="ask-title"
            )
            with VerticalScroll(id="plan-diff-body", classes="ask-body"):
                yield Static(diff_text(self.request.diff), id="plan-diff-content")
            keys = Text()
            keys.append("Enter", style="bold")
            keys.append(" review the changed plan (approve runs the new text)   ")
            keys.append("Esc", style="bold")
            keys.append(" keep execution paused")
            yield Static(keys, id="plan-diff-keys")

    def on_mount(self) -> None:
        self.query_one("#plan-diff-body", VerticalScroll).focus()
