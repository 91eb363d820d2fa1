"""FittedFooter: Textual's Footer, with whole keys dropped (least important first) to fit.

Textual's Footer cuts the row at the right edge, so at 80 columns the chat lost
"Help". Here each key has a priority (the screen's ``FOOTER_PRIORITY``, by
action; ``command_palette`` for the palette key); keys that do not fit are left out whole, and the help key, labelled
"more", is always kept: F1 lists everything the footer had no room for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import events
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.screen import Screen

# The help key: never dropped (it is how the dropped keys stay reachable).
MORE_ACTION = "app.show_help"
DEFAULT_PRIORITY = 10
PALETTE_PRIORITY = 15


def _key_width(key: Widget) -> int:
    """Cells a compact FooterKey takes, with the two-cell gap the footer draws after it."""
    display = str(getattr(key, "key_display", ""))
    description = str(getattr(key, "description", ""))
    width = cell_len(display) + (1 + cell_len(description) if description else 0)
    return width + 2 + (2 if key.has_class("-command-palette") else 0)


class FittedFooter(Footer):
    """Keys that do not fit are hidden, not dropped: a resize refits without a recompose.

    Textual's Footer rebuilds every key whenever the screen's bindings are updated,
    which happens on each focus change even when the keys shown stay the same; each
    rebuild mounts and styles a dozen widgets (about 40 ms). This footer rebuilds only
    when what it shows would change, and a resize only shows or hides keys.
    """

    _shown: tuple[object, ...] | None = None  # the bindings the keys were built from
    _fitted_width = -1

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        if keys:
            self._shown = self._signature()
        for key in keys:
            self._preset_compact(key)
        self._show_fitting(keys, self.size.width)
        yield from keys

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self._shown is not None and screen is self.screen and self._signature() == self._shown:
            return
        super().bindings_changed(screen)

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._fitted_width:
            self._fitted_width = event.size.width
            self._show_fitting(list(self.children), event.size.width)

    def _signature(self) -> tuple[object, ...]:
        """What the keys are built from: each shown binding, its state and tooltip."""
        shown = tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (self.show_command_palette, self.compact, shown)

    def _show_fitting(self, keys: list[Widget], width: int) -> None:
        kept = {id(key) for key in self._fit(keys, width)}
        for key in keys:
            key.display = id(key) in kept

    def _preset_compact(self, key: Widget) -> None:
        """Give a key the footer's ``compact`` value and class before it mounts.

        Textual's key starts compact and is then bound to the footer's (not compact)
        value: two class changes, each a restyle, for every key on every recompose
        (measured: about 40 ms a recompose, a tenth of a Pilot test's time). Set up
        front, neither the key's first watch nor the binding has anything to change.
        """
        compact = getattr(type(key), "compact", None)
        if isinstance(compact, Reactive):
            # The palette key is not bound to the footer: it stays compact.
            value = True if key.has_class("-command-palette") else self.compact
            key.set_reactive(compact, value)
            key.set_class(value, "-compact", update=False)

    def _priority(self, key: Widget) -> int:
        action = str(getattr(key, "action", ""))
        if action.endswith("show_help"):
            return 1000
        table: dict[str, int] = getattr(self.screen, "FOOTER_PRIORITY", {})
        if key.has_class("-command-palette"):
            return table.get("command_palette", PALETTE_PRIORITY)
        return table.get(action.split(".")[-1], DEFAULT_PRIORITY)

    def _fit(self, keys: list[Widget], width: int) -> Iterator[Widget]:
        if width <= 0:
            yield from keys
            return
        order = sorted(range(len(keys)), key=lambda n: (self._priority(keys[n]), -n))
        dropped: set[int] = set()
        total = sum(_key_width(key) for key in keys)
        for index in order:
            if total <= width:
                break
            if self._priority(keys[index]) >= 1000:
                continue
            dropped.add(index)
            total -= _key_width(keys[index])
        for number, key in enumerate(keys):
            if number not in dropped:
                yield key
