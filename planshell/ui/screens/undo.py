"""``/undo``: the diff of what undoing the last plan would change, before anything is written.

Enter (after the key grace, docs/security.md; shown as dots until then) answers
True: undo; Esc or any dismissal answers False and nothing is written. The diff
holds the project's and the plan's text (model-written): every non-printable
character is shown as an escape (``diff_text``). Hand-edited files are asked
about afterwards, in a :class:`~planshell.ui.screens.confirm.ConfirmScreen` whose default is *no*.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from planshell.ui.screens.approval import diff_text, one_line
from planshell.ui.screens.yes_no import YesNoScreen

if TYPE_CHECKING:
    from planshell.plan.undo import UndoPlan

__all__ = ["UndoScreen", "undo_summary"]

LISTED = 5  # commits and untouched paths named before "and N more"


def _names(items: list[str]) -> str:
    more = f" and {len(items) - LISTED} more" if len(items) > LISTED else ""
    return ", ".join(one_line(item, 80) for item in items[:LISTED]) + more


def undo_summary(plan: UndoPlan) -> str:
    """One paragraph: how many files change which way, and what undo leaves alone."""
    counts: dict[str, int] = {}
    for change in plan.changes:
        counts[change.action] = counts.get(change.action, 0) + 1
    parts = [f"{n} to {action}" for action, n in sorted(counts.items())]
    lines = [", ".join(parts) + "."]
    if plan.hand_edited:
        lines.append(f"Edited after the plan finished (asked next): {_names(plan.hand_edited)}.")
    if plan.commits:
        lines.append(
            f"Commits made during the plan stay (HEAD is not moved): {_names(plan.commits)}."
        )
    if plan.untouched:
        lines.append(f"Not recorded, left as they are: {_names(plan.untouched)}.")
    return "\n".join(lines)


class UndoScreen(YesNoScreen):
    """True: undo the plan; False (Esc, any dismissal): nothing is written."""

    CSS_PATH = "undo.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,u", "answer(True)", "Undo the plan"),
        Binding("escape", "answer(False)", "Keep everything"),
    ]

    def __init__(self, plan: UndoPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        with Vertical(id="undo"):
            yield Static(
                Text("Undo the last plan: put the project back as its execution found it"),
                id="undo-title",
            )
            yield Static(Text(undo_summary(self.plan)), id="undo-summary")
            with VerticalScroll(id="undo-body"):
                yield Static(diff_text(self.plan.diff), id="undo-diff")
            yield Static(self._keys(), id="undo-keys")

    def _keys(self) -> Text:
        """Enter shows as dots until it works (the key grace); Esc works at once."""
        keys = Text()
        keys.append(self.guarded_hint("Enter"), style="bold")
        keys.append(" undo (restore, recreate and delete as shown)   ")
        keys.append("Esc", style="bold")
        keys.append(" keep everything as it is")
        return keys

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#undo-keys", Static).update(self._keys())

    def on_mount(self) -> None:
        self.query_one("#undo-body", VerticalScroll).focus()
