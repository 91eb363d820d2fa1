"""PlanActionScreen: look at a saved plan, then run it, refine it, keep it or delete it.

The plan is shown read-only in a :class:`PlanView` (its scroll keys work:
``↑↓``/``j k``, ``space``/``b``, ``d``/``u``, ``g``/``G``, ``n``/``p``). The
action bar under it answers with a string:

* ``e`` **Execute** -> ``"execute"``
* ``r`` **Refine** -> ``"refine"``
* ``s`` **Save & Exit** -> ``"exit"`` (the file is kept)
* ``D`` **Discard & Exit** -> asks "Delete this plan file? It cannot be undone."
  (:class:`ConfirmScreen`); yes -> ``"discard"``, no -> stay here
* ``Esc`` -> ``None`` (back to wherever the screen was pushed from)

The buttons can also be reached with Tab (and ``←``/``→`` between them) and
pressed with Enter. The four actions (keys, Enter, clicks) work only once the
screen is ready (``KeyGrace``): their key letters show ``·`` until then.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Static

from planshell.markdown import plain_inline
from planshell.plan.document import parse_plan
from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.results import AnswersWhenRemoved
from planshell.ui.widgets.plan_view import PlanView
from planshell.ui.widgets.review_footer import Hint, ReviewFooter

__all__ = [
    "ACTIONS",
    "ACTION_HINTS",
    "DISCARD_QUESTION",
    "PlanActionScreen",
]


DISCARD_QUESTION = "Delete this plan file? It cannot be undone."

# (button id, label, key, result)
ACTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("action-execute", "Execute", "e", "execute"),
    ("action-refine", "Refine", "r", "refine"),
    ("action-exit", "Save & Exit", "s", "exit"),
    ("action-discard", "Discard & Exit", "D", "discard"),
)

# The keys that are not on a button, right of the action bar (dropped whole when narrow).
ACTION_HINTS: tuple[Hint, ...] = (
    Hint("Esc", "back", 100),
    Hint("n/p", "sections", 50),
    Hint("space/b", "page", 40),
    Hint("↑↓", "scroll", 30),
)


class PlanActionScreen(KeyGrace, AnswersWhenRemoved[str], Screen[str | None]):
    """A saved plan, read-only, with Execute / Refine / Save & Exit / Discard & Exit."""

    CSS_PATH = "plan_picker.tcss"
    AUTO_FOCUS = "PlanView"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "choose('execute')", "Execute", show=False),
        Binding("r", "choose('refine')", "Refine", show=False),
        Binding("s", "choose('exit')", "Save & Exit", show=False),
        Binding("D", "discard", "Discard & Exit", show=False),
        Binding("escape", "back", "Back", show=False),
        Binding("left", "focus_button(-1)", "Previous action", show=False),
        Binding("right", "focus_button(1)", "Next action", show=False),
        Binding("h", "show_unshown", "Show the plan lines this view does not show", show=False),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"choose", "discard"})

    def __init__(self, path: Path, text: str) -> None:
        super().__init__()
        self.path = Path(path)
        self.text = text
        self._doc = parse_plan(text)

    def compose(self) -> ComposeResult:
        with Horizontal(id="actions-header"):
            yield Static("Plan", id="actions-chip")
            yield Static(self._title_text(), id="actions-title")
            yield Static(self._progress_text(), id="actions-progress")
        yield Static(
            "", id="actions-unshown"
        )  # lines the view does not show (the executor reads them)
        yield PlanView(self.text, id="actions-plan")
        with Horizontal(id="actions-bar"):
            for button_id, label, key, result in ACTIONS:
                yield Button(self._button_label(label, key, result), id=button_id, compact=True)
            yield ReviewFooter(ACTION_HINTS, id="actions-keys")

    def _button_label(self, label: str, key: str, result: str) -> Content:
        key_style = "$text-error bold" if result == "discard" else "$text-accent bold"
        return Content.assemble((self.key_hint(key), key_style), " ", label)

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        for button_id, label, key, result in ACTIONS:
            self.query_one(f"#{button_id}", Button).label = self._button_label(label, key, result)

    def _title_text(self) -> Text:
        title = plain_inline(strip_terminal_controls(self._doc.title)) or "Untitled plan"
        text = Text(title, style="bold", no_wrap=True)
        name = " ".join(strip_terminal_controls(self.path.name).split())
        if name:
            text.append(f"  {name}", "dim")
        text.overflow = "ellipsis"
        return text

    def _progress_text(self) -> Text:
        done, total = self._doc.done_count, self._doc.total_steps
        if not total:
            return Text("no steps", style="dim")
        return Text(f"{done}/{total} steps done", style="dim")

    @property
    def plan_view(self) -> PlanView:
        return self.query_one(PlanView)

    # -- lines the view does not show: Execute runs the whole file

    def on_mount(self) -> None:
        self._show_unshown()

    @on(PlanView.Checked)
    def _show_unshown(self) -> None:
        from planshell.ui.screens.unshown import unshown_notice

        notice = unshown_notice(self.plan_view.unshown)
        widget = self.query_one("#actions-unshown", Static)
        widget.update(Text(f"⚠ {notice}") if notice else "")
        widget.display = bool(notice)

    def action_show_unshown(self) -> None:
        from planshell.ui.screens.unshown import UnshownLinesScreen

        if self.plan_view.unshown:
            self.app.push_screen(UnshownLinesScreen(self.plan_view.unshown))

    # -- actions

    def action_choose(self, result: str) -> None:
        if result == "execute" and self.plan_view.unshown is None:
            self.notify("Still checking the plan for lines this view does not show; try again.")
            return
        self.dismiss(result)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_discard(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss("discard")

        name = " ".join(strip_terminal_controls(self.path.name).split())
        self.app.push_screen(
            ConfirmScreen(DISCARD_QUESTION, detail=name, yes="Delete", no="Keep"), answered
        )

    def action_focus_button(self, step: int) -> None:
        """←/→ move between the action buttons once one has the focus."""
        if not isinstance(self.focused, Button):
            return
        if step < 0:
            self.focus_previous(Button)
        else:
            self.focus_next(Button)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if not self.keys_ready:
            return  # clicked before the screen was ready
        for button_id, _label, _key, result in ACTIONS:
            if event.button.id == button_id:
                if result == "discard":
                    self.action_discard()
                else:
                    self.action_choose(result)
                return
