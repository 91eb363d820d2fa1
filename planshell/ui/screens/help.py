"""F1 / /help: every key and every slash command, generated from the live bindings."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
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
    "pagedown": "PgDn",
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


def collect_keys(app: App, nodes: Iterable[DOMNode]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for node in nodes:
        for binding in _own_bindings(node):
            if binding.system or not binding.description:
                continue
            keys = app._keymap.get(binding.id, binding.key) if binding.id else binding.key
            display = ", ".join(key_label(k) for k in keys.split(","))
            row = (display, binding.tooltip or binding.description)
            if row not in seen:
                seen.add(row)
                rows.append(row)
    rows += EXTRA_KEYS
    return rows


class HelpScreen(ModalScreen[None]):
    CSS_PATH = str(Path(__file__).resolve().parent.parent / "styles" / "dialogs.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "close", "Close")]

    def __init__(self, keys: list[tuple[str, str]], registry: CommandRegistry = REGISTRY) -> None:
        super().__init__(classes="help")
        self.keys = keys
        self.registry = registry

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys", style="bold"), classes="help-heading", id="keys-heading")
            yield Static(self._keys_table(), id="help-keys")
            yield Static(Text("Commands", style="bold"), classes="help-heading")
            yield Static(self._commands_table(), id="help-commands")
            yield Static(
                Text("Esc closes this. Start a message with // to send a literal slash.", style="dim"),
                classes="help-foot",
            )

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
