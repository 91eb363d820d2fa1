"""The review screen's browser review: ``w`` (or ``/plan review --browser``) opens the plan
on 127.0.0.1 (see ``planshell.review_web``); the page's decisions come back here and
are taken exactly like the screen's own keys, so the engine sees one path.

Approve & run is offered in the browser only for the review the agent asked for
(``exit_plan_mode``). ``/plan review`` runs ``review_existing`` inside
:func:`review_origin`, and the review screen, built in that task, reads the
context variable when it is created: a per-task fact, so a review the agent
opens meanwhile is not mistaken for it.

The browser is opened by :data:`OPENER` (``webbrowser.open`` in a thread, never
a shell); tests replace it so they never start a real browser.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from planshell.plan.decider import Decision, Review

if TYPE_CHECKING:
    from planshell.review_web.server import BrowserReview, SeenSection
    from planshell.ui.screens.review import ReviewScreen

__all__ = ["OPENER", "BrowserLink", "ReviewOrigin", "open_url", "review_origin"]


@dataclass
class ReviewOrigin:
    """Where a review screen comes from: ``/plan review`` (no approval in the browser)."""

    from_tool: bool = False
    open_browser: bool = False  # consumed by the first screen of the review


_ORIGIN: ContextVar[ReviewOrigin | None] = ContextVar("planshell_review_origin", default=None)


@contextmanager
def review_origin(*, open_browser: bool) -> Iterator[None]:
    """Mark the review screens created in this task as a person's ``/plan review``."""
    token = _ORIGIN.set(ReviewOrigin(from_tool=False, open_browser=open_browser))
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def open_url(url: str) -> bool:
    """Open ``url`` in the default browser; False when there is no graphical one.

    Without a display a console browser (lynx, w3m) would take over the
    terminal the TUI is drawing on, so then nothing is started and the URL
    shown on the review screen is the way in.
    """
    graphical = sys.platform in {"darwin", "win32"} or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if not graphical and not os.environ.get("BROWSER"):
        return False
    import webbrowser  # only once a browser is wanted

    return webbrowser.open(url, new=2)


OPENER: Callable[[str], object] = open_url


class BrowserLink:
    """One review screen's browser review: start it, show the URL, close it.

    It serves as long as the screen is open: a closed tab only changes the line
    (after ``page_grace`` seconds without the page), so a reload still works.
    """

    def __init__(self, screen: ReviewScreen) -> None:
        self.screen = screen
        self.page_grace = 10.0  # seconds without the page's event stream before the line says so
        origin = _ORIGIN.get()
        self.allow_approve = origin is None or origin.from_tool
        self.open_at_start = False
        if origin is not None and origin.open_browser:
            origin.open_browser = False
            self.open_at_start = True
        self.review: BrowserReview | None = None

    @property
    def active(self) -> bool:
        return self.review is not None and not self.review.closed

    def open(self) -> None:
        """Start the server (or show the running one again) and open the browser."""
        screen = self.screen
        if self.active:
            assert self.review is not None
            self._launch(self.review.url)
            return
        store = getattr(getattr(screen.app, "runtime", None), "store", None)
        if store is None:
            screen.notify(
                "The browser review needs a project; it is not available here.", severity="warning"
            )
            return
        # The review web server (and its renderer) loads on the first ``w``, not with every
        # review screen.
        from planshell.review_web.server import BrowserReview

        self.review = BrowserReview(
            screen.request,
            store,
            allow_approve=self.allow_approve,
            on_decision=self._decided,
            on_closed=self._ended,
            on_seen=self._seen,
            on_page=self._page,
            loop=asyncio.get_running_loop(),
            grace=self.page_grace,
        )
        try:
            url = self.review.start()
        except OSError as exc:
            self.review = None
            screen.notify(f"Could not start the browser review: {exc}", severity="error")
            return
        self._show(url)
        self._launch(url)

    def _launch(self, url: str) -> None:
        async def run() -> None:
            try:
                await asyncio.to_thread(OPENER, url)
            except Exception as exc:  # the URL on screen still works
                self.screen.notify(f"Could not open a browser: {exc}", severity="warning")

        self.screen.run_worker(run(), group="browser-open", exit_on_error=False)

    def _show(self, url: str, *, page_gone: bool = False) -> None:
        if page_gone:
            # A closed tab is not the end: the URL keeps serving while this screen is open.
            line = Text.assemble(
                ("browser page closed; the review still serves at ", "bold"),
                url,
                ("   w opens it again · Esc closes it", "dim"),
            )
        else:
            line = Text.assemble(
                ("reviewing in browser… ", "bold"), url, ("   Esc closes it", "dim")
            )
        try:
            widget = self.screen.query_one("#browser-line", Static)
            widget.update(line)
            widget.display = True
        except Exception:
            self.screen.query_one("#review-header").mount(Static(line, id="browser-line"))
        self.screen.show_hints()  # the footer's Esc says the same: "close browser"

    def _hide(self) -> None:
        for widget in self.screen.query("#browser-line"):
            widget.display = False
        self.screen.show_hints()

    def close(self, reason: str = "closed in the terminal") -> None:
        """End the browser review (Esc, or the review screen closing), and say so."""
        was_active = self.active
        if self.review is not None:
            self.review.close(reason)
        if self.screen.is_attached:
            self._hide()
        if was_active:
            # The page is told through its event stream; the terminal says it here,
            # on the app, since the review screen may be going away.
            assert self.review is not None
            self.screen.app.notify(
                f"Browser review ended ({reason}): {self.review.url} no longer serves.",
                timeout=6,
            )

    def _page(self, present: bool) -> None:
        """The page went away (or came back): the line says whether a tab is open."""
        if self.active and self.screen.is_attached:
            assert self.review is not None
            self._show(self.review.url, page_gone=not present)

    def _decided(self, review: Review) -> None:
        """A decision from the page, taken as the screen's own key would take it."""
        self._hide()
        if not self.screen.is_current:
            return
        if review.decision is Decision.APPROVE:
            # The page's Approve runs the plan in the approve dialog's default
            # (ask, unless the user's plan.approve_mode says accept-edits): never auto.
            # Sections seen in neither place, then lint errors, ask first, as for
            # the key (ReviewScreen.approve_checked); dismissing approves nothing.
            self.screen.approve_checked(self.screen.request.approve_mode)
        else:
            self.screen.dismiss(review)

    def _seen(self, sections: tuple[SeenSection, ...]) -> None:
        """Sections the page scrolled wholly into view count in the screen's coverage.

        Only a section with the same level and title at the same index is marked:
        a page of another revision (or after ``e``) marks nothing it did not show.
        """
        if not self.screen.is_attached:
            return
        view = self.screen.plan_view
        ours = view.sections
        view.mark_seen(
            seen.index
            for seen in sections
            if seen.index < len(ours)
            and (ours[seen.index].level, ours[seen.index].title) == (seen.level, seen.title)
        )

    def _ended(self, _reason: str) -> None:
        if self.screen.is_attached:
            self._hide()
            self.screen.notify("The browser review was closed; the review goes on here.")
