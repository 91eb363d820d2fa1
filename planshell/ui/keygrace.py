"""Key grace: a screen that asks for a decision ignores keys typed before it was ready.

A key typed for the chat just as a dialog appears, a key already queued while
the event loop was busy, a held key's repeats, a paste that happens to contain
``a``: none of these is a person's answer (docs/security.md, "Key grace").

Mix :class:`KeyGrace` in before the ``Screen`` base and name the screen's
state-changing actions in ``GUARDED_ACTIONS``::

    class ReviewScreen(KeyGrace, AnswersWhenRemoved[Review], Screen[Review]):
        GUARDED_ACTIONS = frozenset({"approve", "refine", ...})

How it decides:

* Each time the screen is shown (``ScreenResume``) a grace of ``GRACE``
  seconds starts; a timer ends it. A key whose binding runs a guarded action
  is stopped at the screen (the app never runs the binding) unless the screen
  is ready *and* the key was typed after the grace ended. The comparison uses
  the key event's own time stamp (taken when the terminal's bytes were read),
  so a key queued before the screen appeared is ignored even when a busy event
  loop handles it after the screen said ready.
* A held key during the grace starts the grace again: key repeat and a paste
  that arrives as keys (no bracketed paste) never get through; the screen
  becomes ready once they stop. A bracketed paste is a ``Paste`` event and
  never runs a binding; during the grace it also starts the grace again.
* Widgets' own decisions (a focused button's Enter, an input's Enter, a list's
  Enter: ``WIDGET_DECISIONS``) are held the same way. A button *clicked* during
  the grace does nothing: screens check :attr:`KeyGrace.keys_ready` in their
  ``Button.Pressed`` handler.
* Everything else acts at once: navigation, scrolling, help, and the safe
  answers (Esc, keep planning, deny), which a screen leaves out of
  ``GUARDED_ACTIONS`` or exempts in :meth:`KeyGrace.holds_action`.

While held the screen has the CSS class ``-keys-held``, then ``-keys-ready``;
:meth:`KeyGrace.key_hint` shows a held key as ``·`` so a key letter appears
only once it works. ``GRACE <= 0`` turns the grace off (tests of other things).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from textual import events
from textual.actions import parse as parse_action
from textual.message import Message

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.screen import Screen
    from textual.timer import Timer

__all__ = ["DEFAULT_GRACE", "HELD_KEY", "KeyGrace"]

HELD_KEY = "·"  # shown in place of a key letter that does not work yet
DEFAULT_GRACE = 0.4  # seconds: long enough for a key already on its way, short to wait out


class KeyGrace:
    """Mix in before the ``Screen`` base: guarded keys work only once the screen is ready."""

    GRACE: ClassVar[float] = DEFAULT_GRACE
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    WIDGET_DECISIONS: ClassVar[frozenset[str]] = frozenset({"press", "submit", "select"})

    _grace_ready = False
    _grace_until = float("inf")  # keys stamped before this are not the user's answer
    _grace_timer: Timer | None = None

    # -- state

    @property
    def keys_ready(self) -> bool:
        """Whether guarded keys (typed from now on) act."""
        return self.GRACE <= 0 or self._grace_ready

    def accepts(self, event: events.Key) -> bool:
        """Whether ``event`` may act: typed after the grace, seen after the screen said ready."""
        if self.GRACE <= 0:
            return True
        return self._grace_ready and event.time >= self._grace_until

    def end_grace(self) -> None:
        """Become ready (the grace timer calls this; a test may too)."""
        self._grace_ready = True
        self._grace_until = min(self._grace_until, _now())
        self._show_grace()

    def _start_grace(self) -> None:
        """Hold guarded keys: typed in the next ``GRACE`` seconds, or before the timer says ready."""
        if self.GRACE <= 0:
            self._show_grace()
            return
        self._grace_ready = False
        self._grace_until = _now() + self.GRACE
        if self._grace_timer is not None:
            self._grace_timer.stop()
        self._grace_timer = self._as_screen.set_timer(self.GRACE, self.end_grace)
        self._show_grace()

    def _show_grace(self) -> None:
        screen = self._as_screen
        ready = self.keys_ready
        screen.set_class(not ready, "-keys-held")
        screen.set_class(ready, "-keys-ready")
        if screen.is_mounted:
            self.keys_ready_changed()

    def keys_ready_changed(self) -> None:
        """Redraw what shows the keys (override; call super). Footers redraw themselves here."""
        for footer in self._as_screen.query("ReviewFooter"):
            footer.refresh()

    # -- what is held

    def holds_action(self, node: DOMNode, action: str, arguments: tuple[object, ...]) -> bool:
        """Whether ``action`` of ``node`` is a decision (override for per-argument exemptions)."""
        if node is self:
            return action in self.GUARDED_ACTIONS
        return action in self.WIDGET_DECISIONS and node is not self._as_screen.app

    def holds_key(self, key: str) -> bool:
        """Whether ``key`` (a Textual key name) would run a guarded action here and now."""
        active = self._as_screen.active_bindings.get(key)
        if active is None:
            return False
        _namespace, action, arguments = parse_action(active.binding.action)
        return self.holds_action(active.node, action, arguments)

    def key_hint(self, key: str) -> str:
        """``key`` as shown in a hint: ``·`` while it is held, so it appears when it works."""
        if self.keys_ready or not self._as_screen.is_mounted:
            return key
        if not self.holds_key(_key_name(key)):
            return key
        return HELD_KEY * cell_len(key)

    def guarded_hint(self, key: str) -> str:
        """``key``, known to be a decision key, as shown in a hint: ``·`` until the screen is
        ready, from the first frame on (``key_hint`` needs the mounted screen's bindings)."""
        return key if self.keys_ready else HELD_KEY * cell_len(key)

    # -- events (Textual calls these for every class in the MRO)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        self._start_grace()

    def on_screen_suspend(self, event: events.ScreenSuspend) -> None:
        if self._grace_timer is not None:
            self._grace_timer.stop()
            self._grace_timer = None
        self._grace_ready = False

    def on_key(self, event: events.Key) -> None:
        if self.accepts(event) or not self.holds_key(event.key):
            return
        # Not the user's answer to this screen: the app never sees the key.
        event.stop()
        event.prevent_default()
        self._start_grace()

    def on_paste(self, event: events.Paste) -> None:
        if not self.keys_ready:
            self._start_grace()

    @property
    def _as_screen(self) -> Screen[object]:
        return self  # type: ignore[return-value]  # a mixin: self is the Screen


def _now() -> float:
    """Now, on the clock of ``Message.time`` (Textual's event clock differs by platform)."""
    return Message().time


def _key_name(hint: str) -> str:
    """The Textual key name for a hint's key (``Esc`` -> ``escape``, ``?`` -> ``question_mark``)."""
    names = {"Esc": "escape", "?": "question_mark", "Enter": "enter"}
    return names.get(hint, hint)
