"""The plan report, shown when a plan completes: what each step did, what was verified, what changed.

The report (planshell/plan/report.py) is drawn by the review's markdown view
(``PlanView``), after sanitising: step texts, commands and paths are model-
and repo-authored. ``d`` swaps in the whole plan's diff (the checkpoint's undo
preview, read in a thread: it is the change the plan made, shown as undo
would revert it) and back; ``u`` answers "undo", which the chat turns into the
``/undo`` flow (planshell/ui/commands_undo.py: diff, confirm, hand edits).
Enter and Esc close. ``u`` waits out the key grace (docs/security.md) and
shows as ``·`` until then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.plan.undo_keeper import UndoRefused
from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.approval import diff_text
from planshell.ui.screens.results import AnswersWhenRemoved
from planshell.ui.widgets.plan_view import PlanView

if TYPE_CHECKING:
    from planshell.plan.undo import UndoPlan

__all__ = ["UNDO", "PlanReportScreen"]

UNDO = "undo"


class PlanReportScreen(KeyGrace, AnswersWhenRemoved[str | None], ModalScreen[str | None]):
    """``"undo"``: run the /undo flow; None (Enter, Esc, any dismissal): just close."""

    CSS_PATH = "plan_report.tcss"
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"undo"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape", "close", "Close"),
        # Not priority bindings: the app runs those before the screen sees the key, so
        # the key grace could not hold u. The report's view leaves d/u to the screen.
        Binding("d", "diff", "Diff of the plan"),
        Binding("u", "undo", "Undo the plan"),
    ]

    def __init__(self, markdown: str, preview: Callable[[], UndoPlan] | None = None) -> None:
        super().__init__()
        self.markdown = strip_terminal_controls(markdown)
        self.preview = preview
        self.showing_diff = False

    def unanswered_result(self) -> str | None:
        return None

    def compose(self) -> ComposeResult:
        with Vertical(id="report"):
            yield PlanView(self.markdown, review_keys=False, id="report-view")
            with VerticalScroll(id="report-diff"):
                yield Static(Text(""), id="report-diff-content")
            yield Static(self._keys(), id="report-keys")

    def _keys(self) -> Text:
        """The keys; ``u`` shows as ``·`` until it works (the key grace), so a person sees
        when it will act instead of a key that silently does nothing."""
        keys = Text()
        for key, what in (
            ("Enter", "close   "),
            ("d", "diff of the plan   "),
            (self.guarded_hint("u"), "undo it"),
        ):
            keys.append(key, style="bold")
            keys.append(f" {what}")
        return keys

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#report-keys", Static).update(self._keys())

    def on_mount(self) -> None:
        self.query_one("#report-diff").display = False
        self.query_one("#report-view", PlanView).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_undo(self) -> None:
        self.dismiss(UNDO)

    def action_diff(self) -> None:
        if self.showing_diff:
            self._show(diff=False)
            return
        self.run_worker(self._load_diff(), group="report-diff", exclusive=True)

    async def _load_diff(self) -> None:
        content = self.query_one("#report-diff-content", Static)
        if self.preview is None:
            content.update(Text("No checkpoint of this plan: no diff to show."))
        else:
            try:
                plan = await asyncio.to_thread(self.preview)
            except UndoRefused as exc:
                content.update(Text(str(exc)))
            else:
                content.update(diff_text(plan.diff) if plan.changes else Text("No changes."))
        self._show(diff=True)

    def _show(self, *, diff: bool) -> None:
        self.showing_diff = diff
        self.query_one("#report-view").display = not diff
        scroll = self.query_one("#report-diff", VerticalScroll)
        scroll.display = diff
        (scroll if diff else self.query_one("#report-view")).focus()
