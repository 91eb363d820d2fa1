"""The amendment review: the model asks to reword one step of the executing plan.

Only the change is shown: the step number, the model's reason, the old and
new wording as a word diff (removed words struck through in red, added words
in green), and the files the amendment would add to the plan's scope (edits
of them would no longer ask in accept-edits). Every string is the model's, so
it is shown as one line with non-printable characters written as escapes.

Keys: ``a`` approves the amendment (after the key grace, docs/security.md);
``n`` and Esc decline, at once. Enter does nothing here: neither answer is a
default, and every dismissal declines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from planshell.plan.revision_diff import word_fragments
from planshell.ui.screens.approval import one_line
from planshell.ui.screens.yes_no import YesNoScreen

if TYPE_CHECKING:
    from planshell.plan.decider import AmendmentRequest

__all__ = ["AmendmentScreen", "word_diff_text"]

SCOPE_SHOWN = 8  # scope entries named before "and N more"
TEXT_LIMIT = 600  # characters of a step shown (the engine caps them lower)


def word_diff_text(old: str, new: str) -> Text:
    """Old and new wording in one line: removed words red and struck, added words green."""
    styles = {"delete": "red strike", "insert": "bold green", "equal": ""}
    out = Text()
    for fragment in word_fragments(one_line(old, TEXT_LIMIT), one_line(new, TEXT_LIMIT)):
        out.append(fragment.text, style=styles[fragment.op])
    return out


class AmendmentScreen(YesNoScreen):
    """True: the person approves the amendment; False (n, Esc, any dismissal): declined."""

    CSS_PATH = "amendment.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer(True)", "Approve the amendment"),
        Binding("n,escape", "answer(False)", "Decline"),
    ]

    def __init__(self, request: AmendmentRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="amendment"):
            title = one_line(request.title, 80)
            yield Static(
                Text(f"The agent asks to amend step {request.step} of the plan “{title}”"),
                id="amendment-title",
            )
            yield Static(Text("Reason: " + one_line(request.reason, 400)), id="amendment-reason")
            with VerticalScroll(id="amendment-body"):
                yield Static(
                    word_diff_text(request.old_text, request.new_text), id="amendment-diff"
                )
                yield Static(self._scope(), id="amendment-scope")
            yield Static(self._keys(), id="amendment-keys")

    def _scope(self) -> Text:
        added = self.request.added_scope
        if not added:
            return Text("The plan's scope does not change.", style="dim")
        names = ", ".join(one_line(entry, 120) for entry in added[:SCOPE_SHOWN])
        if len(added) > SCOPE_SHOWN:
            names += f" and {len(added) - SCOPE_SHOWN} more"
        out = Text("Adds to the plan's scope (edited without asking in accept-edits): ")
        out.append(names, style="bold")
        return out

    def _keys(self) -> Text:
        keys = Text()
        keys.append(self.key_hint("a"), style="bold")
        keys.append(" approve the amendment   ")
        keys.append("n", style="bold")
        keys.append("/")
        keys.append("esc", style="bold")
        keys.append(" decline (the approved plan stands)")
        return keys

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#amendment-keys", Static).update(self._keys())

    def on_mount(self) -> None:
        self.query_one("#amendment-body", VerticalScroll).focus()
