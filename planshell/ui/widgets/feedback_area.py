"""The review's multi-line editors (refine, comment): Enter submits, Ctrl+J adds a line, Esc goes back.

Its own module so the review screen and the comment dialog share it without
importing each other.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from planshell.ui.widgets.key_order import KeysInOrder

__all__ = ["FeedbackArea"]


class FeedbackArea(KeysInOrder, TextArea):
    """The refine editor: Enter submits, Ctrl+J (or Shift+Enter) inserts a newline, Esc goes back.

    Enter and the newline keys are handled in ``on_key``, not as bindings:
    bindings run after the key has bubbled up the DOM, so with fast typing (or
    a paste) the newline could land after the characters typed next.
    """

    NEWLINE_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"ctrl+j", "newline", "shift+enter", "alt+enter"}
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back to the plan", show=False),
    ]

    class Submitted(Message):
        def __init__(self, area: FeedbackArea, text: str) -> None:
            super().__init__()
            self.area = area
            self.text = text

        @property
        def control(self) -> FeedbackArea:
            return self.area

    class Cancelled(Message):
        def __init__(self, area: FeedbackArea) -> None:
            super().__init__()
            self.area = area

        @property
        def control(self) -> FeedbackArea:
            return self.area

    async def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handler; prevent_default stops that one.
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in self.NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            if not self.read_only:
                start, end = self.selection
                self.replace("\n", start, end, maintain_selection_offset=False)

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled(self))
