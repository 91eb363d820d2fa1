"""Text fields that apply keys in the order they were typed.

Textual inserts a printable key in the focused widget's own handler, but runs a
binding (backspace, delete, arrows, ctrl+w, tab, …) only after the key has
bubbled up to the App. Keys that arrive together (a fast typist, a busy frame,
a terminal multiplexer delivering a burst) were applied out of order: ``ab``
then ``⌫⌫~A`` typed while a long session loaded left ``ab`` in the prompt, the
backspaces deleting the ``~A`` typed after them (seen in tmux, with a key log).
A field with :class:`KeysInOrder` runs its *own* bindings (the editing keys) as
soon as a key reaches it, so every edit takes effect in order. The screen's and
the app's bindings still run after the key has passed the screen, so key grace
(planshell/ui/keygrace.py) sees every decision key first, and a field's own
decision (``submit``, …) typed before a decision screen was ready stays held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from planshell.ui.keygrace import KeyGrace

if TYPE_CHECKING:
    from textual.widget import Widget

    _Field = Widget
else:
    _Field = object  # a plain mixin: a Widget base here would reorder Textual's CSS classes


class KeysInOrder(_Field):
    """Mix into a text field before its Textual base: ``class F(KeysInOrder, TextArea)``."""

    async def on_key(self, event: events.Key) -> None:
        if event.is_printable:
            return  # text: the field inserts it itself, in order
        screen = self.screen
        active = screen.active_bindings.get(event.key)
        if active is None or active.node is not self or not active.enabled:
            # Not the field's own key (the screen's or the app's: they run as before, after the
            # key has passed the screen, where key grace may hold it), or a disabled one.
            return
        if (
            isinstance(screen, KeyGrace)
            and not screen.accepts(event)
            and screen.holds_key(event.key)
        ):
            return  # typed before the decision screen was ready: the screen stops it
        event.stop()
        event.prevent_default()
        await self.app.run_action(active.binding.action, active.node)
