"""ModelPickerScreen: ``/model`` with no name picks one from the server's list.

The list is what the provider's server says it offers (``GET /models`` through
``Runtime.load_served_models``): the names known so far show at once, and the
server is asked again while the picker is open, so a model loaded meanwhile
appears. The current model is marked and highlighted first.

Keys (the filter input keeps the focus): typing filters (case-insensitive,
every word must appear), ``↑``/``↓``/``PgUp``/``PgDn`` move, ``Enter`` answers
the highlighted name, ``Esc`` answers ``None``. ``/model NAME`` still switches
to any name, listed or not.

Names are the server's text: ``list_models`` keeps only plain identifiers, and
they are shown as ``Text`` (never markup) after ``strip_terminal_controls``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from planshell.sanitize import strip_terminal_controls
from planshell.ui.screens.results import AnswersWhenRemoved

__all__ = ["CURRENT_MARK", "ModelPickerScreen", "model_matches"]

CURRENT_MARK = "●"

Refresh = Callable[[], Awaitable[Sequence[str]]]


def model_matches(name: str, query: str) -> bool:
    """Every word of ``query`` appears in ``name``, ignoring case."""
    lowered = name.casefold()
    return all(word in lowered for word in query.casefold().split())


class ModelPickerScreen(AnswersWhenRemoved[str], ModalScreen[str | None]):
    """A filterable list of model names; answers the chosen name, or None."""

    CSS_PATH = "model_picker.tcss"
    AUTO_FOCUS = "#model-filter"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("down", "move(1)", "Next model", show=False),
        Binding("up", "move(-1)", "Previous model", show=False),
        Binding("pagedown", "move(10)", "Ten models on", show=False),
        Binding("pageup", "move(-10)", "Ten models back", show=False),
    ]

    def __init__(
        self,
        names: Sequence[str],
        current: str,
        label: str,
        *,
        refresh: Refresh | None = None,
        note: str = "",
    ) -> None:
        """``refresh`` asks the server again (None: this provider has no list to ask for)."""
        super().__init__()
        self.current = current
        self.label = label
        self.note = note
        self._refresh = refresh
        self.served = list(names)  # what the server listed
        self.names: list[str] = self._with_current(names)
        self._shown: list[str] = []  # the list's rows, in order
        self.asking_server = refresh is not None

    def _with_current(self, names: Sequence[str]) -> list[str]:
        listed = list(dict.fromkeys(names))
        if self.current and self.current not in listed:
            listed.insert(0, self.current)  # the model in use, even when the server omits it
        return listed

    def compose(self) -> ComposeResult:
        with Vertical(id="model-dialog"):
            yield Static(Text.assemble(("Model  ", "bold"), strip_terminal_controls(self.label)))
            yield Input(placeholder="type to filter", id="model-filter")
            yield OptionList(id="model-list")
            yield Static(id="model-status")
            yield Static(
                Text("↑↓ move · Enter switch · Esc cancel · /model NAME: any", "dim"),
                id="model-keys",
            )

    def on_mount(self) -> None:
        self.query_one("#model-list", OptionList).can_focus = False  # the filter keeps focus
        self._fill()
        if self._refresh is not None:
            self.run_worker(self._ask_server(self._refresh), group="models", exit_on_error=False)

    async def _ask_server(self, refresh: Refresh) -> None:
        try:
            names = await refresh()
        finally:
            self.asking_server = False
        self.served = list(names)
        self.names = self._with_current(names)
        self._fill()

    @property
    def shown(self) -> list[str]:
        """The names the filter lets through, in the list's order."""
        query = self.query_one("#model-filter", Input).value
        return [name for name in self.names if model_matches(name, query)]

    def _fill(self) -> None:
        listing = self.query_one("#model-list", OptionList)
        chosen = self.highlighted_name
        shown = self._shown = self.shown
        listing.clear_options()
        listing.add_options([self._option(name) for name in shown])
        if shown:
            keep = chosen if chosen in shown else self.current
            listing.highlighted = shown.index(keep) if keep in shown else 0
        self.query_one("#model-status", Static).update(self._status(len(shown)))

    def _option(self, name: str) -> Option:
        shown = strip_terminal_controls(name)
        if name == self.current:
            return Option(Text.assemble((f"{CURRENT_MARK} ", "bold"), shown, ("  current", "dim")))
        return Option(Text.assemble("  ", shown))

    def _status(self, count: int) -> Text:
        if self.asking_server:
            return Text("Asking the server for its models…", "dim")
        if count == 0:
            return Text("No model matches the filter.", "dim")
        listed = len(self.served)
        if not listed:
            return Text(self.note or "The server did not list its models.", "dim")
        return Text(f"{listed} model{'s' if listed != 1 else ''} from the server", "dim")

    @property
    def highlighted_name(self) -> str | None:
        index = self.query_one("#model-list", OptionList).highlighted
        if index is None or not 0 <= index < len(self._shown):
            return None
        return self._shown[index]

    @on(Input.Changed, "#model-filter")
    def _filtered(self) -> None:
        self._fill()

    @on(Input.Submitted, "#model-filter")
    def _submitted(self) -> None:
        name = self.highlighted_name
        if name is not None:
            self.dismiss(name)

    @on(OptionList.OptionSelected, "#model-list")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self._shown):
            self.dismiss(self._shown[event.option_index])

    def action_move(self, delta: int) -> None:
        listing = self.query_one("#model-list", OptionList)
        count = listing.option_count
        if not count:
            return
        index = listing.highlighted if listing.highlighted is not None else 0
        listing.highlighted = max(0, min(count - 1, index + delta))

    def action_cancel(self) -> None:
        self.dismiss(None)
