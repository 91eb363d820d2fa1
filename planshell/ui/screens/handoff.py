"""After approving a plan: keep the context, compact it with the plan pinned, or start fresh.

Esc and any dismissal mean *keep*: context is never dropped unasked. Compact and
fresh (keys, Enter, clicks) work only once the dialog is ready (``KeyGrace``).
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
from planshell.ui.widgets.status import format_tokens

CHOICES = (
    ("keep", "Keep context", "k"),
    ("compact", "Compact, plan pinned", "c"),
    ("fresh", "Fresh, only the plan", "f"),
)


class HandoffScreen(KeyGrace, ModalScreen[str]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k,escape", "choose('keep')", "Keep"),
        Binding("c", "choose('compact')", "Compact"),
        Binding("f", "choose('fresh')", "Fresh"),
        Binding("left", "focus_previous", show=False),
        Binding("right", "focus_next", show=False),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"choose"})

    def __init__(self, tokens: dict[str, int], default: str = "keep") -> None:
        super().__init__(classes="confirm")
        self.tokens = tokens
        self.default = default if default in dict((c, c) for c, _, _ in CHOICES) else "keep"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Text("Plan approved: how should the conversation carry over?"), id="question"
            )
            yield Static(
                Text(
                    "Keep: everything so far. Compact: a summary, the plan pinned. Fresh: only "
                    "the plan and your request. The choice is remembered for this project."
                ),
                id="detail",
            )
            with Horizontal(id="buttons"):
                for choice, label, key in CHOICES:
                    yield Button(
                        self._label(choice, label, key),
                        id=choice,
                        compact=True,
                        variant="primary" if choice == self.default else "default",
                    )

    def _label(self, choice: str, label: str, key: str) -> str:
        count = format_tokens(self.tokens.get(choice, 0))
        return f"{label} · {count} ({self.key_hint(key)})"

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        for choice, label, key in CHOICES:
            self.query_one(f"#{choice}", Button).label = self._label(choice, label, key)

    def holds_action(self, node: DOMNode, action: str, arguments: tuple[object, ...]) -> bool:
        # Keeping the context is always safe: k, Esc and Enter on Keep act at once.
        if node is self and arguments == ("keep",):
            return False
        if isinstance(node, Button) and node.id == "keep":
            return False
        return super().holds_action(node, action, arguments)

    def on_mount(self) -> None:
        self.query_one(f"#{self.default}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id != "keep" and not self.keys_ready:
            return  # clicked before the dialog was ready
        self.dismiss(event.button.id or "keep")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
