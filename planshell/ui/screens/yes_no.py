"""A modal yes/no question under the key grace, where no is the safe answer.

Only ``answer(True)`` waits out the grace (a key typed before the dialog
appeared must not say yes); ``answer(False)``, Esc and every other way the
screen goes away mean no, at once.
"""

from __future__ import annotations

from typing import ClassVar

from textual.dom import DOMNode
from textual.screen import ModalScreen

from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.results import AnswersWhenRemoved

__all__ = ["YesNoScreen"]


class YesNoScreen(KeyGrace, AnswersWhenRemoved[bool], ModalScreen[bool]):
    """Subclasses bind their keys to ``answer(True)`` and ``answer(False)``."""

    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"answer"})

    def unanswered_result(self) -> bool:
        return False

    def holds_action(self, node: DOMNode, action: str, arguments: tuple[object, ...]) -> bool:
        if node is self and action == "answer":
            return arguments != (False,)  # no acts at once
        return super().holds_action(node, action, arguments)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
