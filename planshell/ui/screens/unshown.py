"""``h`` on the review: the plan's lines that the review does not render, as literal text.

The executor gets the plan's whole text, and markdown hides some of it (link
reference definitions, table cells past the header; see
:mod:`planshell.plan.coverage`). The review screen says how many such lines
there are before any decision and this dialog shows them, sanitised, as plain
text (never markup or markdown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from planshell.plan.coverage import UnshownLine, unshown_summary
from planshell.sanitize import strip_terminal_controls
from planshell.ui.screens.text_dialog import TextDialog

__all__ = ["UnshownLinesScreen", "unshown_notice", "unshown_text"]


def unshown_notice(lines: Sequence[UnshownLine] | None) -> str:
    """The review's notice line ("" when every line is shown, or while the check runs).

    Nothing while checking: most plans have no such lines, and a line that
    comes and goes would move the plan under the reader (``a`` waits instead).
    """
    if not lines:
        return ""
    return f"{unshown_summary(len(lines))} — press h to see them (the agent will read them)"


def unshown_text(lines: Sequence[UnshownLine]) -> Text:
    """The lines as literal text: ``line 3: [note]: https://… "…"`` and why it is not shown."""
    text = Text(no_wrap=False)
    for number, item in enumerate(lines):
        if number:
            text.append("\n")
        text.append(f"line {item.line + 1}: ", "bold")
        text.append(strip_terminal_controls(item.text))
        text.append(f"\n  {item.why}", "dim")
    return text


class UnshownLinesScreen(TextDialog):
    """The unshown lines of the plan under review; Esc, h or q closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,h,q", "close", "Close")]

    def __init__(self, lines: Sequence[UnshownLine]) -> None:
        self.lines = tuple(lines)
        super().__init__(
            unshown_summary(len(self.lines)) or "Every line is shown.",
            unshown_text(self.lines),
            "The agent reads these lines with the rest of the plan. Esc closes this.",
        )
