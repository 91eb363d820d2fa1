"""F1 / /help: every key and every slash command, generated from the live bindings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.ui.commands import REGISTRY, CommandRegistry

# Keys handled outside BINDINGS (or by Textual itself) that users should know.
EXTRA_KEYS = [
    ("ctrl+p", "Command palette (every action and command)"),
    ("mouse drag", "Select transcript text (ctrl+c copies it)"),
    ("click", "Expand or collapse a tool row or a thinking block"),
]

_NAMES = {
    "escape": "esc",
    "up": "↑",
    "down": "↓",
    "pageup": "PgUp",
    "slash": "/",
    "pagedown": "PgDn",
    "question_mark": "?",
}


def key_label(key: str) -> str:
    key = key.strip()
    if key in _NAMES:
        return _NAMES[key]
    if len(key) in (2, 3) and key[0] == "f" and key[1:].isdigit():
        return key.upper()
    return key


def _own_bindings(node: DOMNode) -> Iterable[Binding]:
    """Bindings declared by planshell classes (and Textual's App quit key)."""
    for cls in type(node).__mro__:
        module = getattr(cls, "__module__", "")
        if not (module.startswith("planshell") or cls is App):
            continue
        for item in cls.__dict__.get("BINDINGS", []):
            if isinstance(item, Binding):
                yield item
            elif isinstance(item, tuple) and len(item) >= 2:
                yield Binding(*item)


def _works_here(node: DOMNode, action: str) -> bool:
    """False when the node's ``check_action`` says the action does nothing now."""
    check = getattr(node, "check_action", None)
    if check is None:
        return True
    try:
        return check(action, ()) is not False
    except Exception:  # a check that needs parameters: assume it works
        return True


def collect_keys(
    app: App, nodes: Iterable[DOMNode], extra: Iterable[tuple[str, str]] = EXTRA_KEYS
) -> list[tuple[str, str]]:
    """Every key that does something on this screen, once: the most specific binding wins.

    ``nodes`` run from the most specific (the app's own subclass first, then the
    screen); a key already listed is not listed again (Textual's own ``ctrl+q``
    behind planshell's), and an action the node disables now (the review's
    ``q``, which only the read-only viewer uses) is left out.
    """
    rows: list[tuple[str, str]] = []
    seen_keys: set[str] = set()
    for node in nodes:
        for binding in _own_bindings(node):
            if binding.system or not binding.description:
                continue
            if not _works_here(node, binding.action):
                continue
            keys = app._keymap.get(binding.id, binding.key) if binding.id else binding.key
            names = [k.strip() for k in keys.split(",") if k.strip() not in seen_keys]
            if not names:
                continue
            seen_keys.update(names)
            display = ", ".join(key_label(k) for k in names)
            worded = getattr(node, "help_text", None)
            text = worded(binding.action) if callable(worded) else None
            rows.append((display, text or binding.tooltip or binding.description))
    rows += list(extra)
    return rows


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "close", "Close")]

    def __init__(
        self,
        keys: list[tuple[str, str]],
        registry: CommandRegistry = REGISTRY,
        *,
        commands: bool = True,
    ) -> None:
        super().__init__(classes="help")
        self.keys = keys
        self.registry = registry
        self.commands = commands  # slash commands work only where there is a prompt

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys", style="bold"), classes="help-heading", id="keys-heading")
            yield Static(self._keys_table(), id="help-keys")
            if self.commands:
                yield Static(Text("Commands", style="bold"), classes="help-heading")
                yield Static(self._commands_table(), id="help-commands")
            foot = "Esc closes this."
            if self.commands:
                foot += " Start a message with // to send a literal slash."
            yield Static(Text(foot, style="dim"), classes="help-foot")

    def _keys_table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, description in self.keys:
            table.add_row(key, description)
        return table

    def _commands_table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for command in self.registry:
            summary = command.summary
            if command.aliases:
                summary += f" (also {', '.join('/' + a for a in command.aliases)})"
            table.add_row(command.usage, summary)
        return table

    def action_close(self) -> None:
        self.dismiss(None)
