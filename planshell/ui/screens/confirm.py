"""A reusable yes/no question. Esc, n and any dismissal mean *no*.

*Yes* (``y``, Enter or a click on it) works only once the dialog is ready
(``KeyGrace``); *no* acts at once.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from planshell.ui.keygrace import KeyGrace


class ConfirmScreen(KeyGrace, ModalScreen[bool]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("left,right", "toggle_focus", "Switch", show=False),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"answer"})

    def __init__(
        self,
        question: str,
        *,
        detail: str = "",
        yes: str = "Yes",
        no: str | None = "No",
        default: bool = False,
    ) -> None:
        super().__init__(classes="confirm")
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.question), id="question")
            if self.detail:
                yield Static(Text(self.detail), id="detail")
            with Horizontal(id="buttons"):
                yield Button(self._yes_text(), id="yes", variant="primary", compact=True)
                if self.no_label is not None:
                    yield Button(f"{self.no_label} (n)", id="no", compact=True)

    def _yes_text(self) -> str:
        return f"{self.yes_label} ({self.key_hint('y')})"

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#yes", Button).label = self._yes_text()

    def holds_action(self, node: DOMNode, action: str, arguments: tuple[object, ...]) -> bool:
        # "No" is always safe: n, Esc and Enter on the No button act at once.
        if node is self and action == "answer":
            return arguments != (False,)
        if isinstance(node, Button) and node.id == "no":
            return False
        return super().holds_action(node, action, arguments)

    def on_mount(self) -> None:
        target = "#yes" if self.default or self.no_label is None else "#no"
        self.query_one(target, Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "yes" and not self.keys_ready:
            return  # clicked before the dialog was ready
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer if self.no_label is not None or answer else False)

    def action_toggle_focus(self) -> None:
        self.focus_next(Button)
