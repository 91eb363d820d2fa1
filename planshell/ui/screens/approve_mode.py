"""How an approved plan runs, chosen in words: the dialog the review's ``a`` opens.

The choices (``choices_for``):

1. *Ask me before each edit* (``ask``): focused unless the user's
   ``plan.approve_mode`` says otherwise; the safe default.
2. *Accept edits inside the plan's scope* (``accept-edits``): edits and writes
   to the files the plan names run unasked; anything outside that scope still
   asks (``planshell.plan.scope``).
3. *Auto — run everything without asking* (``auto``): listed only when the
   user's own config sets ``plan.approve_auto`` (a project file never can:
   ``planshell.config.untrusted.USER_ONLY_KEYS``).

Enter (or a click) chooses the highlighted line, ``1``/``2``/``3`` choose by
number; all of them only once the dialog is ready (``KeyGrace``). Esc goes back
to the review and approves nothing; so does any dismissal (the answer is None).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from planshell.ui.keygrace import KeyGrace

__all__ = ["APPROVE_CHOICES", "ApproveModeScreen", "choices_for"]

# (permission mode, the choice in words, what it means)
APPROVE_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("ask", "Ask me before each edit", "Every edit, write and unlisted command waits for you."),
    (
        "accept-edits",
        "Accept edits inside the plan's scope",
        "Edits to the files the plan names run unasked; anything else still asks.",
    ),
    (
        "auto",
        "Auto — run everything without asking",
        "Nothing asks until the plan ends (deny rules still apply).",
    ),
)
SAFE_MODE = "ask"


def choices_for(allow_auto: bool) -> tuple[tuple[str, str, str], ...]:
    """The choices offered: auto only when the user's own config allows it."""
    return tuple(c for c in APPROVE_CHOICES if c[0] != "auto" or allow_auto)


class ApproveModeScreen(KeyGrace, ModalScreen[str | None]):
    """Answers the chosen permission mode, or None (Esc, dismissal): nothing approved."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back to the plan"),
        Binding("1", "choose(0)", "First choice", show=False),
        Binding("2", "choose(1)", "Second choice", show=False),
        Binding("3", "choose(2)", "Third choice", show=False),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"choose"})

    def __init__(self, *, allow_auto: bool = False, default: str = SAFE_MODE) -> None:
        super().__init__()
        self.choices = choices_for(allow_auto)
        modes = [mode for mode, _label, _detail in self.choices]
        # Only ask or accept-edits can be the focused default: auto never is.
        self.default = default if default in modes and default != "auto" else SAFE_MODE

    @property
    def modes(self) -> list[str]:
        return [mode for mode, _label, _detail in self.choices]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("Approve and run this plan: how should it run?"), id="question")
            yield OptionList(
                *(
                    Option(
                        Text.assemble(
                            (f"{number}  ", "bold"), label, "\n", (f"   {detail}", "dim")
                        ),
                        id=mode,
                    )
                    for number, (mode, label, detail) in enumerate(self.choices, start=1)
                ),
                id="choices",
            )
            yield Static(self._hint(), id="hint")

    def _hint(self) -> Text:
        """The keys, each shown as ``·`` until it works (``KeyGrace.key_hint``)."""
        last = str(len(self.choices))
        return Text(
            f"{self.key_hint('Enter')} chooses · {self.key_hint('1')}-{self.key_hint(last)} "
            "choose by number · Esc back to the plan",
            "dim",
        )

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#hint", Static).update(self._hint())

    def on_mount(self) -> None:
        options = self.query_one("#choices", OptionList)
        options.highlighted = self.modes.index(self.default)
        options.focus()

    @property
    def highlighted_mode(self) -> str | None:
        index = self.query_one("#choices", OptionList).highlighted
        return None if index is None else self.modes[index]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.keys_ready:
            return  # clicked before the dialog was ready
        self.dismiss(event.option.id)

    def action_choose(self, index: int) -> None:
        if 0 <= index < len(self.choices):
            self.dismiss(self.choices[index][0])

    def action_back(self) -> None:
        self.dismiss(None)
