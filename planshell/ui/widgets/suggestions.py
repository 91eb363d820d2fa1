"""The completion list shown above the prompt while a slash command is typed."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from planshell.ui.commands import Suggestion

MAX_VISIBLE = 8


class CommandSuggestions(OptionList, can_focus=False):
    """Not focusable: the prompt keeps focus and drives it (↑/↓, Tab, Enter)."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Suggestion] = []
        self.display = False

    @property
    def is_open(self) -> bool:
        return self.display and bool(self.items)

    def show(self, items: list[Suggestion]) -> None:
        self.items = items
        self.clear_options()
        if not items:
            self.display = False
            return
        width = max(len(s.label) for s in items)
        options = []
        for item in items:
            label = Text(item.label.ljust(width), style="bold")
            if item.summary:
                label.append("  ")
                label.append(item.summary, style="dim")
            options.append(Option(label))
        self.add_options(options)
        self.styles.height = min(len(items), MAX_VISIBLE)
        self.display = True
        # Command names: the first is preselected (Enter runs it); argument
        # values wait for ↑/↓ or Tab so Enter sends what was typed.
        self.highlighted = 0 if items[0].is_command else None

    def hide(self) -> None:
        self.items = []
        self.clear_options()
        self.display = False

    @property
    def current(self) -> Suggestion | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]

    def move(self, step: int) -> None:
        if not self.items:
            return
        if self.highlighted is None:
            self.highlighted = 0 if step > 0 else len(self.items) - 1
        else:
            self.highlighted = (self.highlighted + step) % len(self.items)
