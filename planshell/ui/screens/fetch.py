"""Plan mode asks before a fetch to an unlisted domain (planshell/plan/fetch_gate.py).

The URL is model-chosen and may carry what the model read (a secret in the
path or the query string), so all of it is shown, every non-printable
character written as an escape, wrapped rather than cut. ``y`` fetches (after
the key grace, docs/security.md); ``n``, Esc, Enter and every dismissal refuse.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from planshell.plan.decider import FetchRequest
from planshell.ui.screens.yes_no import YesNoScreen

__all__ = ["FetchScreen", "shown_url"]


def shown_url(url: str) -> str:
    """``url`` with every non-printable or non-ASCII character as an escape (nothing hidden)."""
    return "".join(
        c if c.isascii() and c.isprintable() else c.encode("unicode_escape").decode() for c in url
    )


class FetchScreen(YesNoScreen):
    """True: fetch this URL; False (the focused, safe answer): do not."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Fetch"),
        Binding("n,escape,enter", "answer(False)", "Do not fetch"),
    ]

    def __init__(self, request: FetchRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="fetch-ask", classes="ask-panel"):
            title = f"Plan mode: fetch from {shown_url(request.domain)}?"
            yield Static(Text(title), id="fetch-title", classes="ask-title")
            why = "A URL can carry what the model read out of the project. " + (
                "It has a query string: asked every time."
                if request.has_query
                else "A yes allows this domain for the session (URLs without a query string)."
            )
            if request.redirect_from:
                why = f"Redirected from {shown_url(request.redirect_from)}. " + why
            yield Static(Text(why), id="fetch-why")
            with VerticalScroll(id="fetch-url-box", classes="ask-body"):
                yield Static(Text(shown_url(request.url)), id="fetch-url")
            keys = Text()
            keys.append("y", style="bold")
            keys.append(" fetch   ")
            keys.append("n / Esc / Enter", style="bold")
            keys.append(" do not fetch")
            yield Static(keys, id="fetch-keys")

    def on_mount(self) -> None:
        self.query_one("#fetch-url-box", VerticalScroll).focus()
