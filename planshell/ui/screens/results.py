"""Screens that always answer: removed without ``dismiss``, they still give a result.

Textual calls ``push_screen``'s callback (and resolves ``push_screen_wait``)
only from ``Screen.dismiss``. A screen the app pops itself (``app.pop_screen``,
``switch_screen``) is removed and its callback dropped, so a pusher waiting for
the review's decision would hang. Textual has no public way to answer that
callback other than ``dismiss``, so planshell keeps its own channel:

* a screen mixing in :class:`AnswersWhenRemoved` notes that it was dismissed;
  removed without that while the app runs on, it answers
  :meth:`~AnswersWhenRemoved.unanswered_result` (the review screen: "keep
  planning", never an approval). An app shutting down answers nothing, as
  before: its waiters are cancelled with it;
* :func:`push_answering` / :func:`wait_for_answer` push a screen and hear its
  answer exactly once, whichever way it goes.

A screen pushed with plain ``push_screen``/``push_screen_wait`` gets Textual's
behaviour: an answer on ``dismiss`` only. An *installed* (named) screen is
never unmounted by a pop, so it cannot answer then either: these are pushed as
instances.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete
    from textual.message_pump import MessagePump
    from textual.screen import Screen

__all__ = ["AnswersWhenRemoved", "push_answering", "wait_for_answer"]

ResultT = TypeVar("ResultT")


class AnswersWhenRemoved(Generic[ResultT]):
    """Mix in before the ``Screen`` base: the screen answers even when popped.

    ``class ReviewScreen(AnswersWhenRemoved[Review], Screen[Review])``. Textual
    runs ``on_unmount`` of every class in the MRO, so subclasses may have
    their own.
    """

    _answer_given = False
    _answer_listeners: tuple[Callable[[ResultT | None], object], ...] = ()

    def unanswered_result(self) -> ResultT | None:
        """The answer when the screen goes away without ``dismiss`` (override)."""
        return None

    def on_answer(self, listener: Callable[[ResultT | None], object]) -> None:
        """Call ``listener`` once with the answer (at ``dismiss``, or at removal)."""
        self._answer_listeners = (*self._answer_listeners, listener)

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        self._give_answer(result)
        # A mixin: mypy cannot know Screen.dismiss comes next in the MRO.
        return super().dismiss(result)  # type: ignore[misc]

    def on_unmount(self) -> None:
        # Removed while the app keeps running: popped or switched away. When the
        # whole app shuts down nobody is left to act on an answer: give none.
        if self.app.is_running:  # type: ignore[attr-defined]  # a mixin: self is the Screen
            self._give_answer(self.unanswered_result())

    def _give_answer(self, result: ResultT | None) -> None:
        if self._answer_given:
            return
        self._answer_given = True
        for listener in self._answer_listeners:
            listener(result)


def push_answering(
    pusher: MessagePump, screen: Screen[ResultT], callback: Callable[[ResultT | None], None]
) -> None:
    """``pusher.app.push_screen(screen, callback)``, but ``callback`` also runs on removal.

    As with Textual's own callbacks, ``callback`` runs later in ``pusher``'s
    context (``call_next``), never inside the screen's teardown. A screen
    without :class:`AnswersWhenRemoved` gets plain ``push_screen``.
    """
    app = pusher.app
    if isinstance(screen, AnswersWhenRemoved):
        screen.on_answer(lambda result: pusher.call_next(callback, result))
        app.push_screen(screen)
    else:
        app.push_screen(screen, callback)


async def wait_for_answer(pusher: MessagePump, screen: Screen[ResultT]) -> ResultT | None:
    """Push ``screen`` and wait for its answer (from any task: no worker needed)."""
    future: asyncio.Future[ResultT | None] = asyncio.get_running_loop().create_future()

    def done(result: ResultT | None) -> None:
        if not future.done():
            future.set_result(result)

    push_answering(pusher, screen, done)
    return await future
