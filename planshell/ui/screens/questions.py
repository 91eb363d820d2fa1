"""The agent's questions (``ask_questions``) in one dialog: answer any, or skip them all.

Enter in the last field (or ctrl+s) sends; Esc or *Skip* answers None, which the
engine reports to the model as "skipped: record your assumptions". The questions
are model text: shown as plain, sanitised text, never markup. Sending (ctrl+s,
Enter, a click) waits until the dialog is ready (``KeyGrace``); Esc skips at once.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace

TITLE = "The agent has questions (answer what you like, or skip)"


class QuestionsScreen(KeyGrace, ModalScreen[list[str] | None]):
    AUTO_FOCUS = "Input"
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "skip", "Skip"),
        Binding("ctrl+s", "send", "Send answers"),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"send"})

    def __init__(self, questions: list[str]) -> None:
        super().__init__(classes="questions")
        self.questions = [" ".join(strip_terminal_controls(q).split()) for q in questions]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Text(TITLE), id="title")
            for index, question in enumerate(self.questions, 1):
                yield Static(Text(f"{index}. {question}"), classes="question")
                yield Input(placeholder="your answer (optional)", id=f"answer-{index}")
            with Horizontal(id="buttons"):
                yield Button("Send answers (ctrl+s)", id="send", variant="primary", compact=True)
                yield Button("Skip (esc)", id="skip", compact=True)

    @property
    def answers(self) -> list[str]:
        return [field.value for field in self.query(Input)]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        fields = list(self.query(Input))
        if event.input is fields[-1]:
            self.action_send()
        else:
            fields[fields.index(event.input) + 1].focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "send":
            if self.keys_ready:  # not a click from before the dialog was ready
                self.action_send()
        else:
            self.action_skip()

    def action_send(self) -> None:
        self.dismiss(self.answers)

    def action_skip(self) -> None:
        self.dismiss(None)
