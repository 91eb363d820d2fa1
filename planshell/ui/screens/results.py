"""Screens that always answer: popped without ``dismiss``, they give a default.

Without this, ``app.pop_screen()`` (or a mode switch) would leave the pusher's
callback uncalled and a ``push_screen_wait`` hanging; for the review screen,
the default is the safe "keep planning".
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen


def answer_if_pending(screen: Screen[Any], result: Any) -> None:
    """Resolve the screen's pending result callback with ``result``, if any waits."""
    if screen._result_callbacks:
        pending = screen._result_callbacks[-1]
        future = pending.future
        if pending.callback is not None or (future is not None and not future.done()):
            pending(result)
