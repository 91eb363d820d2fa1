"""ReviewFooter: the decision keys of the plan review, fitted to the terminal width.

A hint is dropped whole (never cut to ``a appr…``): a truncated decision key is
worse than a missing one. Lowest priority goes first; ``Esc keep planning``,
the safe choice, is shown first and dropped last. On a screen with a key grace
(``planshell.ui.keygrace``) a key that does not work yet shows as ``·``, dimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from planshell.ui.keygrace import KeyGrace

__all__ = [
    "DECISION_HINTS",
    "EDITED_HINTS",
    "READ_ONLY_HINTS",
    "SEPARATOR",
    "Hint",
    "ReviewFooter",
    "decision_hints",
    "fit_hints",
    "hints_width",
]

SEPARATOR = "  "


@dataclass(frozen=True)
class Hint:
    """One key hint; higher ``priority`` survives longer as the terminal narrows."""

    key: str
    label: str
    priority: int

    @property
    def width(self) -> int:
        return cell_len(self.key) + 1 + cell_len(self.label)

    def __str__(self) -> str:
        return f"{self.key} {self.label}"


DECISION_HINTS: tuple[Hint, ...] = (
    Hint("Esc", "keep planning", 100),
    Hint("a", "approve & run", 90),
    Hint("r", "refine", 80),
    Hint("x", "exit", 50),  # help: "Exit plan mode, keep the file"
    Hint("D", "delete", 40),  # the Discard decision: it deletes the plan file
    Hint("e", "edit", 30),
    Hint("n/p", "sections", 20),
    Hint("?", "more", 1000),  # never dropped: the help lists what the footer has no room for
)

# After an ``e`` edit, ``a`` approves the edited text; ``f`` sends it to the model instead.
EDITED_HINTS: tuple[Hint, ...] = tuple(
    item
    for hint in DECISION_HINTS
    for item in (
        (Hint("a", "approve my edit", 90), Hint("f", "send edit as feedback", 85))
        if hint.key == "a"
        else (hint,)
    )
)


def decision_hints(
    mode: str = "plan", *, edited: bool = False, browser: bool = False
) -> tuple[Hint, ...]:
    """The review's hints worded for the mode it opened in.

    Only in PLAN does Esc mean "keep planning"; from OFF or EXECUTE (``/plan
    review``) Esc closes the screen and changes nothing, and ``x`` (leave plan
    mode) does nothing from OFF, so it is not offered there. While the browser
    review runs (``browser``), Esc first closes that, as its header line says.
    """
    hints = EDITED_HINTS if edited else DECISION_HINTS
    esc = "close browser" if browser else "keep planning" if mode == "plan" else "close"
    return tuple(
        Hint("Esc", esc, hint.priority) if hint.key == "Esc" else hint
        for hint in hints
        if not (hint.key == "x" and mode == "off")
    )


READ_ONLY_HINTS: tuple[Hint, ...] = (
    Hint("q", "close", 100),
    Hint("n/p", "sections", 60),
    Hint("space/b", "page", 50),
    Hint("g/G", "top/end", 40),
    Hint("↑↓", "scroll", 30),
    Hint("?", "more", 1000),
)


def hints_width(hints: Sequence[Hint]) -> int:
    """Cells needed to show ``hints`` in one row."""
    if not hints:
        return 0
    return sum(hint.width for hint in hints) + cell_len(SEPARATOR) * (len(hints) - 1)


def fit_hints(hints: Sequence[Hint], width: int) -> list[Hint]:
    """The hints that fit in ``width`` cells, in their original order.

    Whole hints are dropped, lowest priority first (ties: the later one first).
    """
    kept = list(hints)
    by_priority = sorted(range(len(kept)), key=lambda index: (kept[index].priority, -index))
    dropped: set[int] = set()
    for index in by_priority:
        if hints_width([hint for n, hint in enumerate(kept) if n not in dropped]) <= width:
            break
        dropped.add(index)
    return [hint for n, hint in enumerate(kept) if n not in dropped]


class ReviewFooter(Widget):
    """One row of key hints, refitted on every render (so on every resize)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "review-footer--key",
        "review-footer--label",
        "review-footer--held",
    }

    DEFAULT_CSS = """
    ReviewFooter { height: 1; }
    ReviewFooter > .review-footer--key { color: $text-accent; text-style: bold; }
    ReviewFooter > .review-footer--label { color: $foreground-muted; }
    ReviewFooter > .review-footer--held { color: $foreground-disabled; }
    """

    def __init__(
        self,
        hints: Sequence[Hint] = DECISION_HINTS,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._hints = tuple(hints)

    @property
    def hints(self) -> tuple[Hint, ...]:
        return self._hints

    def set_hints(self, hints: Sequence[Hint]) -> None:
        self._hints = tuple(hints)
        self.refresh()

    @property
    def shown(self) -> list[Hint]:
        """The hints visible at the current width."""
        return fit_hints(self._hints, self.size.width)

    def render(self) -> Text:
        key_style = self.get_component_rich_style("review-footer--key", partial=True)
        label_style = self.get_component_rich_style("review-footer--label", partial=True)
        held_style = self.get_component_rich_style("review-footer--held", partial=True)
        screen = self.screen
        text = Text(no_wrap=True, overflow="crop")
        for number, hint in enumerate(self.shown):
            if number:
                text.append(SEPARATOR)
            key = screen.key_hint(hint.key) if isinstance(screen, KeyGrace) else hint.key
            held = key != hint.key
            text.append(key, held_style if held else key_style)
            text.append(" ")
            text.append(hint.label, held_style if held else label_style)
        return text
