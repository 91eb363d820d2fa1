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

Above the choices, the blast-radius card (``planshell.plan.blast_radius``,
computed by the engine): the files the plan names with their current sizes
("new" when missing), the Verification commands that would need approval in
the highlighted mode (it follows the highlight), and an estimate of tokens and
cost with the last run of this plan, when its run record has one.

Enter (or a click) chooses the highlighted line, ``1``/``2``/``3`` choose by
number; all of them only once the dialog is ready (``KeyGrace``). Esc goes back
to the review and approves nothing; so does any dismissal (the answer is None).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from planshell.sanitize import plain_line
from planshell.ui.keygrace import KeyGrace

if TYPE_CHECKING:
    from planshell.plan.blast_radius import BlastRadius, Estimate, PastRun

__all__ = ["APPROVE_CHOICES", "ApproveModeScreen", "blast_card", "choices_for"]

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


SHOWN_FILES = 8
SHOWN_COMMANDS = 5


def _size(size: int | None) -> str:
    if size is None:
        return ""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def _tokens(count: int) -> str:
    return f"{count / 1000:.0f}k" if count >= 10_000 else f"{count:,}"


_STATUS_WORDS = {
    "new": "new",
    "directory": "folder",
    "glob": "pattern",
    "outside": "outside the project (a symlink): not read",
    "special": "not a regular file",
    "unknown": "cannot be checked",
}


def _estimate_line(guess: Estimate, history: PastRun | None) -> Text:
    text = Text.assemble(
        ("Estimate ", "bold"),
        f"{_tokens(guess.tokens_low)}–{_tokens(guess.tokens_high)} tokens",
    )
    if guess.cost_low is not None and guess.cost_high is not None:
        text.append(f", ${guess.cost_low:.2f}–${guess.cost_high:.2f}")
    text.append(f"  (~{guess.calls} model calls; rough)", "dim")
    if history is not None:
        parts = []
        if history.tokens is not None:
            parts.append(f"{_tokens(history.tokens)} tokens")
        if history.cost is not None:
            parts.append(f"${history.cost:.2f}")
        text.append(f"\nLast run of this plan: {', '.join(parts)}")
    return text


def blast_card(blast: BlastRadius, mode: str) -> Text:
    """The card for ``mode``: files and sizes, commands that would ask, the estimate."""
    text = Text.assemble(("Blast radius", "bold"), " · what approving lets loose\n")
    total = len(blast.files) + blast.more_files
    if not total:
        text.append("Files: none named (no scope: edits anywhere follow the mode)\n", "dim")
    else:
        text.append(f"Files ({total}):\n")
    for line in blast.files[:SHOWN_FILES]:
        word = _size(line.size) if line.status == "file" else _STATUS_WORDS.get(line.status, "")
        style = "red" if line.status == "outside" else "green" if line.status == "new" else "dim"
        text.append(f"  {plain_line(line.entry, 60)}  ")
        text.append(f"{word}\n", style)
    hidden = total - min(len(blast.files), SHOWN_FILES)
    if hidden > 0:
        text.append(f"  … and {hidden} more\n", "dim")
    asking = blast.asking(mode)
    if not blast.commands:
        text.append("Commands: the Verification section names none\n", "dim")
    elif not asking:
        text.append(f"Commands: all {len(blast.commands)} run without asking in this mode\n")
    else:
        text.append(
            f"Commands that will ask in this mode: {len(asking)} of {len(blast.commands)}\n"
        )
        for command in asking[:SHOWN_COMMANDS]:
            action, _why = command.verdict(mode)
            mark = "✗ denied" if action == "deny" else "asks"
            text.append(f"  $ {plain_line(command.command, 60)}  ")
            text.append(f"{mark}\n", "yellow")
        if len(asking) > SHOWN_COMMANDS:
            text.append(f"  … and {len(asking) - SHOWN_COMMANDS} more\n", "dim")
    text.append_text(_estimate_line(blast.estimate, blast.history))
    return text


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

    def __init__(
        self,
        *,
        allow_auto: bool = False,
        default: str = SAFE_MODE,
        blast: BlastRadius | None = None,
        runner: str | None = None,
    ) -> None:
        super().__init__()
        self.blast = blast
        # Which model will run the plan (with [plan] model set, not the one that planned it).
        self.runner = runner
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
            if self.runner:
                yield Static(Text(plain_line(self.runner, 100), "dim"), id="runner")
            if self.blast is not None:
                yield Static(blast_card(self.blast, self.default), id="blast")
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

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """The card's commands follow the highlighted mode."""
        if self.blast is not None and event.option.id is not None:
            self.query_one("#blast", Static).update(blast_card(self.blast, event.option.id))

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
