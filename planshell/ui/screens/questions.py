"""The agent's questions (``ask_questions``) in one dialog: answer any, or skip them all.

Enter in the last field (or ctrl+s) sends; Esc or *Skip* answers None, which the
engine reports to the model as "skipped: record your assumptions". The questions
are model text: shown as plain, sanitised text, never markup. Sending (ctrl+s,
Enter, a click) waits until the dialog is ready (``KeyGrace``); Esc skips at once.

Tab, shift+tab and Enter (in a field that is not the last) move between fields as
priority bindings: the app runs them in the order the keys arrived, before it hands
the next key to the focused field. As ordinary bindings they ran only once the key
had bubbled back up from the field, after the keys typed next had already been given
to the old field (fast typing put the second answer into the first field).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.actions import SkipAction
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
        Binding("tab", "move(1)", "Next field", show=False, priority=True),
        Binding("shift+tab", "move(-1)", "Previous field", show=False, priority=True),
        Binding("enter", "next_field", "Next field", show=False, priority=True),
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

    def action_move(self, step: int) -> None:
        """Tab / shift+tab, run by the app before the next key is handed out."""
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    def action_next_field(self) -> None:
        """Enter in a field that is not the last: the next field, at once. Anywhere else
        (the last field sends, a button presses) the key goes on to the focused widget."""
        fields = list(self.query(Input))
        focused = self.focused
        if not isinstance(focused, Input) or focused not in fields or focused is fields[-1]:
            raise SkipAction()
        # set_focus now: Widget.focus() would wait for a later turn of the loop.
        self.set_focus(fields[fields.index(focused) + 1])

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
